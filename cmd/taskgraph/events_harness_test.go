package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/client"
)

// waitLimit bounds every wait of the event tests: a guard against hangs, not
// a latency assertion.
const waitLimit = 60 * time.Second

// eventSelection is what the tests read of every event.
const eventSelection = `cursor type occurredAt task { id displayId }
	... on TaskCreated { title status }
	... on TaskUpdated { changedFields }
	... on TaskStatusChanged { from to reason }`

const subscribeEvents = `subscription($p: ID!, $after: String, $types: [ExecutionEventType!]) {
	projectEvents(projectId: $p, after: $after, types: $types) { ` + eventSelection + ` } }`

// ev is one event as the tests see it.
type ev struct {
	Cursor     string
	Type       string
	OccurredAt time.Time
	Task       *struct{ ID, DisplayID string }
	Title      string
	Status     string
	// TaskUpdated
	ChangedFields []string
	// TaskStatusChanged
	From, To string
	Reason   *string
}

// String describes the event compactly: "TASK_STATUS_CHANGED TU-P-TSK-001 DRAFT>PENDING (why)".
func (e ev) String() string {
	task := "-"
	if e.Task != nil {
		task = e.Task.DisplayID
	}
	switch e.Type {
	case "TASK_CREATED":
		return fmt.Sprintf("%s %s %s %s", e.Type, task, e.Title, e.Status)
	case "TASK_UPDATED":
		return fmt.Sprintf("%s %s %s", e.Type, task, strings.Join(e.ChangedFields, ","))
	case "TASK_STATUS_CHANGED":
		s := fmt.Sprintf("%s %s %s>%s", e.Type, task, e.From, e.To)
		if e.Reason != nil {
			s += " (" + *e.Reason + ")"
		}
		return s
	}
	return e.Type + " " + task
}

func describe(evs []ev) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.String()
	}
	return out
}

func cursors(evs []ev) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.Cursor
	}
	return out
}

func (s *testServer) client(token string) *client.Client { return client.New(s.URL, token) }

// eventCursor is Project.eventCursor: where to subscribe from to miss nothing.
func (s *testServer) eventCursor(t testing.TB, token, projectID string) string {
	t.Helper()
	return s.query(t, token, `query($id: ID!) { project(id: $id) { eventCursor } }`, M{"id": projectID}).S("project.eventCursor")
}

// dial opens an authenticated graphql-transport-ws connection, closed when
// the test ends.
func (s *testServer) dial(t testing.TB, token string) *client.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	conn, err := s.client(token).Dial(ctx)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// subscribe subscribes to a project's events on a connection of its own;
// after "" means from now on.
func (s *testServer) subscribe(t testing.TB, token, projectID, after string, types ...string) *client.Subscription {
	t.Helper()
	return subscribeOn(t, s.dial(t, token), projectID, after, types...)
}

func subscribeOn(t testing.TB, conn *client.Conn, projectID, after string, types ...string) *client.Subscription {
	t.Helper()
	vars := M{"p": projectID}
	if after != "" {
		vars["after"] = after
	}
	if len(types) > 0 {
		vars["types"] = types
	}
	sub, err := conn.Subscribe(context.Background(), subscribeEvents, vars)
	require.NoError(t, err)
	return sub
}

// nextEvent reads the subscription's next event; it fails the test on an
// error or the end of the subscription.
func nextEvent(t testing.TB, sub *client.Subscription) ev {
	t.Helper()
	e, err := tryNextEvent(sub)
	require.NoError(t, err)
	return e
}

func tryNextEvent(sub *client.Subscription) (ev, error) {
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	r, err := sub.Next(ctx)
	if err != nil {
		return ev{}, err
	}
	if len(r.Errors) > 0 {
		return ev{}, r.Errors
	}
	var d struct{ ProjectEvents ev }
	if err := json.Unmarshal(r.Data, &d); err != nil {
		return ev{}, err
	}
	return d.ProjectEvents, nil
}

func nextEvents(t testing.TB, sub *client.Subscription, n int) []ev {
	t.Helper()
	out := make([]ev, n)
	for i := range out {
		out[i] = nextEvent(t, sub)
	}
	return out
}

// pageEvents reads every event of a project after a cursor through
// Project.events, page by page.
func (s *testServer) pageEvents(t testing.TB, token, projectID, after string, types ...string) []ev {
	t.Helper()
	var out []ev
	for {
		vars := M{"id": projectID}
		if after != "" {
			vars["after"] = after
		}
		if len(types) > 0 {
			vars["types"] = types
		}
		var d struct {
			Project struct {
				Events struct {
					Nodes    []ev
					Edges    []struct{ Cursor string }
					PageInfo struct {
						HasNextPage bool
						EndCursor   string
					}
				}
			}
		}
		s.mustDo(t, token, `query($id: ID!, $after: String, $types: [ExecutionEventType!]) { project(id: $id) {
			events(first: 7, after: $after, types: $types) { nodes { `+eventSelection+` } edges { cursor } pageInfo { hasNextPage endCursor } } } }`, vars, &d)
		page := d.Project.Events
		for i, n := range page.Nodes {
			require.Equal(t, n.Cursor, page.Edges[i].Cursor)
		}
		out = append(out, page.Nodes...)
		if !page.PageInfo.HasNextPage {
			return out
		}
		after = page.PageInfo.EndCursor
	}
}

// rawWS is a websocket without the client's manners, for protocol tests.
type rawWS struct {
	t  testing.TB
	ws *websocket.Conn
}

// dialRaw opens a websocket with the given subprotocols and headers.
func (s *testServer) dialRaw(t testing.TB, header http.Header, protocols ...string) (*rawWS, *http.Response, error) {
	t.Helper()
	if len(protocols) == 0 {
		protocols = []string{"graphql-transport-ws"}
	}
	d := websocket.Dialer{Subprotocols: protocols, HandshakeTimeout: waitLimit}
	ws, resp, err := d.Dial("ws"+strings.TrimPrefix(s.URL, "http")+"/graphql", header)
	if err != nil {
		return nil, resp, err
	}
	t.Cleanup(func() { ws.Close() })
	return &rawWS{t: t, ws: ws}, resp, nil
}

func (s *testServer) mustDialRaw(t testing.TB, protocols ...string) *rawWS {
	t.Helper()
	r, _, err := s.dialRaw(t, nil, protocols...)
	require.NoError(t, err)
	return r
}

func (r *rawWS) send(v any) {
	r.t.Helper()
	require.NoError(r.t, r.ws.WriteJSON(v))
}

// read returns the next message, or the close error.
func (r *rawWS) read() (map[string]any, error) {
	_ = r.ws.SetReadDeadline(time.Now().Add(waitLimit))
	var m map[string]any
	err := r.ws.ReadJSON(&m)
	return m, err
}

// init sends connection_init with payload and expects connection_ack.
func (r *rawWS) init(payload M) {
	r.t.Helper()
	r.send(M{"type": "connection_init", "payload": payload})
	m, err := r.read()
	require.NoError(r.t, err)
	require.Equal(r.t, "connection_ack", m["type"])
}

// closeCode reads until the server closes and returns its close code and
// reason, failing if any message of one of the given types arrives first.
func (r *rawWS) closeCode(forbidden ...string) (int, string) {
	r.t.Helper()
	for {
		m, err := r.read()
		if err != nil {
			var ce *websocket.CloseError
			require.ErrorAs(r.t, err, &ce, "expected a close frame")
			return ce.Code, ce.Text
		}
		for _, f := range forbidden {
			require.NotEqual(r.t, f, m["type"], "got %v before the close", m)
		}
	}
}

func (r *rawWS) subscribeMsg(id, projectID string) M {
	return M{"type": "subscribe", "id": id, "payload": M{"query": subscribeEvents, "variables": M{"p": projectID}}}
}

// metric reads one unlabelled sample of the server's /metrics.
func (s *testServer) metric(t testing.TB, name string) float64 {
	t.Helper()
	v, ok := s.sample(t, name)
	if !ok {
		t.Fatalf("metric %s not found", name)
	}
	return v
}

// counter reads one sample of the server's /metrics, 0 when the counter has
// none yet.
func (s *testServer) counter(t testing.TB, sample string) float64 {
	t.Helper()
	v, _ := s.sample(t, sample)
	return v
}

// sample finds one sample (a name, with its labels if any) in /metrics.
func (s *testServer) sample(t testing.TB, sample string) (float64, bool) {
	t.Helper()
	_, body := s.get(t, "/metrics")
	for _, line := range strings.Split(body, "\n") {
		if v, ok := strings.CutPrefix(line, sample+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			require.NoError(t, err)
			return f, true
		}
	}
	return 0, false
}

// eventually polls cond until it holds, failing after waitLimit.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	eventuallyWithin(t, waitLimit, what, cond)
}

// eventuallyWithin is eventually with a limit of its own.
func eventuallyWithin(t testing.TB, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// eventsAcrossReplicas: in a new project (slug), tasks created on replicas a
// and b in turn reach a subscriber on each, every one in order.
func eventsAcrossReplicas(t *testing.T, a, b *testServer, slug string) {
	t.Helper()
	p := a.createProject(t, a.AdminToken, slug)
	start := a.eventCursor(t, a.AdminToken, p)
	onA := a.subscribe(t, a.AdminToken, p, start)
	onB := b.subscribe(t, b.AdminToken, p, start)
	for i := 1; i <= 6; i++ {
		writer := a
		if i%2 == 0 {
			writer = b
		}
		writer.createTask(t, writer.AdminToken, p, fmt.Sprint(i), nil)
		require.Equal(t, fmt.Sprint(i), nextEvent(t, onA).Title)
		require.Equal(t, fmt.Sprint(i), nextEvent(t, onB).Title)
	}
}
