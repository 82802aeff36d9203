package main

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/client"
	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/server"
	"github.com/taskgraph/taskgraph/internal/testdb"
)

// Subscriptions that stream from now on are multiplexed (internal/server
// multiplex.go): the subscribers of one selection, variables and visibility
// share one execution. These tests hold each subscriber to what it would
// get alone.

// streamCollector reads a subscription's events on a goroutine of its own,
// each with next.
type streamCollector[T any] struct {
	mu  sync.Mutex
	evs []T
	err error
}

func collectStream[T any](sub *client.Subscription, next func(*client.Subscription) (T, error)) *streamCollector[T] {
	c := &streamCollector[T]{}
	go func() {
		for {
			e, err := next(sub)
			c.mu.Lock()
			if err != nil {
				c.err = err
				c.mu.Unlock()
				return
			}
			c.evs = append(c.evs, e)
			c.mu.Unlock()
		}
	}()
	return c
}

// count is how many events the collector holds, or the error that ended
// its subscription.
func (c *streamCollector[T]) count() (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.evs), c.err
}

func (c *streamCollector[T]) events() ([]T, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]T(nil), c.evs...), c.err
}

// collector collects a projectEvents subscription.
type collector struct{ *streamCollector[ev] }

func collect(sub *client.Subscription) *collector {
	return &collector{collectStream(sub, tryNextEvent)}
}

// waitFor waits until the collector holds an event titled title.
func (c *collector) waitFor(t testing.TB, title string) []ev {
	t.Helper()
	var evs []ev
	eventually(t, "the event "+title, func() bool {
		var err error
		evs, err = c.events()
		require.NoError(t, err)
		for _, e := range evs {
			if e.Title == title {
				return true
			}
		}
		return false
	})
	return evs
}

// warm writes tasks (created, then moved to PENDING) until every collector
// has an event: each subscription is then live.
func warm(t testing.TB, s *testServer, token, projectID string, cs ...*collector) {
	t.Helper()
	live := make([]func() (int, error), len(cs))
	for i, c := range cs {
		live[i] = c.count
	}
	warmUntilLive(t, live, func(i int) {
		task := s.createTask(t, token, projectID, fmt.Sprintf("warm-%d", i), nil)
		s.transition(t, token, task, "PENDING")
	})
}

// warmUntilLive calls write until every count is positive.
func warmUntilLive(t testing.TB, counts []func() (int, error), write func(i int)) {
	t.Helper()
	for i := 0; ; i++ {
		ready := true
		for _, count := range counts {
			n, err := count()
			require.NoError(t, err)
			ready = ready && n > 0
		}
		if ready {
			return
		}
		require.Less(t, i, 3000, "the subscriptions never went live")
		write(i)
		time.Sleep(10 * time.Millisecond)
	}
}

// seqOf is the seq of an event cursor.
func seqOf(t testing.TB, cursor string) int64 {
	t.Helper()
	_, seq, err := domain.ParseEventCursor(cursor, "cursor")
	require.NoError(t, err)
	return seq
}

// requireGapless: evs follow each other in the project's log, the first
// after the cursor from.
func requireGapless(t testing.TB, evs []ev, from string) {
	t.Helper()
	require.NotEmpty(t, evs)
	require.Greater(t, seqOf(t, evs[0].Cursor), seqOf(t, from), "an event committed before the subscription")
	for i := 1; i < len(evs); i++ {
		require.Equal(t, seqOf(t, evs[i-1].Cursor)+1, seqOf(t, evs[i].Cursor), "a gap or a repeat after %s", evs[i-1])
	}
}

// TestSharedSubscriptionsDeliverEveryEvent: thirty subscribers of one
// selection over three connections share one execution, and each receives
// every event committed after it subscribed, in order, none twice.
func TestSharedSubscriptionsDeliverEveryEvent(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		p := s.createProject(t, s.AdminToken, "shared")
		s.createTask(t, s.AdminToken, p, "before", nil)
		from := s.eventCursor(t, s.AdminToken, p)
		var cs []*collector
		for range 3 {
			conn := s.dial(t, s.AdminToken)
			for range 10 {
				cs = append(cs, collect(subscribeOn(t, conn, p, "")))
			}
		}
		warm(t, s, s.AdminToken, p, cs...)
		require.Equal(t, 1.0, s.metric(t, "taskgraph_shared_subscription_executions"))
		// Every member writes its own frames: its operation's id was bound
		// (wsdirect.go). A gqlgen whose transport no longer creates an
		// operation's context before reading the next message fails here.
		require.GreaterOrEqual(t, s.counter(t, `taskgraph_shared_subscription_members_total{writes="connection"}`), 30.0)
		require.Zero(t, s.counter(t, `taskgraph_shared_subscription_members_total{writes="gqlgen"}`))
		for i := 1; i <= 15; i++ {
			s.createTask(t, s.AdminToken, p, fmt.Sprintf("e%d", i), nil)
		}
		for _, c := range cs {
			evs := c.waitFor(t, "e15")
			requireGapless(t, evs, from)
			require.Equal(t, "e15", evs[len(evs)-1].Title, "nothing after the last event")
		}
	})
}

// TestSharedSubscriptionJoinersStartWhenTheySubscribe: subscribers joining a
// running execution while tasks are created one after another each see
// nothing committed before they subscribed and miss nothing after.
func TestSharedSubscriptionJoinersStartWhenTheySubscribe(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		p := s.createProject(t, s.AdminToken, "joiners")
		first := collect(s.subscribe(t, s.AdminToken, p, ""))
		warm(t, s, s.AdminToken, p, first)
		var stop atomic.Bool
		var n atomic.Int64
		writer := make(chan struct{})
		go func() {
			defer close(writer)
			for !stop.Load() {
				r, err := s.post(s.AdminToken, `mutation($p: ID!, $t: String!) { createTask(input: {projectId: $p, title: $t}) { task { id } } }`,
					M{"p": p, "t": fmt.Sprintf("w%d", n.Add(1))})
				if err != nil || len(r.Errors) > 0 {
					t.Errorf("create: %v %v", err, r.Errors)
					return
				}
			}
		}()
		type joiner struct {
			from string
			c    *collector
		}
		var js []joiner
		for range 12 {
			from := s.eventCursor(t, s.AdminToken, p)
			js = append(js, joiner{from: from, c: collect(s.subscribe(t, s.AdminToken, p, ""))})
			time.Sleep(15 * time.Millisecond)
		}
		eventually(t, "every joiner has events", func() bool {
			for _, j := range js {
				if evs, _ := j.c.events(); len(evs) < 3 {
					return false
				}
			}
			return true
		})
		stop.Store(true)
		<-writer
		last := fmt.Sprintf("w%d", n.Load())
		for _, j := range append(js, joiner{from: "", c: first}) {
			evs := j.c.waitFor(t, last)
			if j.from != "" {
				requireGapless(t, evs, j.from)
			}
		}
		require.Equal(t, 1.0, s.metric(t, "taskgraph_shared_subscription_executions"))
	})
}

// TestSharedSubscriptionsKeepCallersApart: subscribers share only with the
// same selection, variables and visibility. An AGENT token of the project, a
// MEMBER who owns it and the admin each run their own execution, as does a
// types filter; a MEMBER of another project and an AGENT of another project
// are refused as they would be alone.
func TestSharedSubscriptionsKeepCallersApart(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		_, ownerToken := s.member(t, "owner")
		p := s.createProject(t, ownerToken, "apart")
		other := s.createProject(t, s.AdminToken, "elsewhere")
		_, agent := s.userWithToken(t, "agent", "AGENT", p)
		_, foreignAgent := s.userWithToken(t, "foreign-agent", "AGENT", other)
		_, outsider := s.member(t, "outsider")

		from := s.eventCursor(t, s.AdminToken, p)
		admin1 := collect(s.subscribe(t, s.AdminToken, p, ""))
		admin2 := collect(s.subscribe(t, s.AdminToken, p, ""))
		member := collect(s.subscribe(t, ownerToken, p, ""))
		byAgent := collect(s.subscribe(t, agent, p, ""))
		changes := collect(s.subscribe(t, s.AdminToken, p, "", "TASK_STATUS_CHANGED"))
		for _, token := range []string{outsider, foreignAgent} {
			_, err := tryNextEvent(s.subscribe(t, token, p, ""))
			var es client.Errors
			require.ErrorAs(t, err, &es)
			require.Equal(t, "NOT_FOUND", es.Code(), "%v", es)
		}
		warm(t, s, ownerToken, p, admin1, admin2, member, byAgent, changes)
		require.Equal(t, 4.0, s.metric(t, "taskgraph_shared_subscription_executions"),
			"admin (twice), the owner, the agent, the admin's types filter")
		task := s.createTask(t, ownerToken, p, "last", nil)
		s.transition(t, ownerToken, task, "PENDING")
		for _, c := range []*collector{admin1, admin2, member, byAgent} {
			evs := c.waitFor(t, "last")
			requireGapless(t, evs, from)
		}
		eventually(t, "the filtered subscriber has the last change", func() bool {
			evs, err := changes.events()
			require.NoError(t, err)
			return len(evs) > 0 && evs[len(evs)-1].Task.ID == task
		})
		evs, _ := changes.events()
		for _, e := range evs {
			require.Equal(t, "TASK_STATUS_CHANGED", e.Type)
		}
	})
}

// sharedBigSelection is a selection whose events are large: a subscriber
// that does not read fills its socket after a few.
const sharedBigSelection = `subscription($p: ID!) { projectEvents(projectId: $p) { cursor type ... on TaskUpdated { task { description } } } }`

// dialSlowRaw opens a websocket whose socket reads into a small buffer: a
// subscriber on it that does not read holds up the server's writes soon.
func (s *testServer) dialSlowRaw(t testing.TB) *rawWS {
	t.Helper()
	d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}, NetDialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err == nil {
			_ = c.(*net.TCPConn).SetReadBuffer(64 << 10)
		}
		return c, err
	}}
	ws, _, err := d.Dial("ws"+strings.TrimPrefix(s.URL, "http")+"/graphql", nil)
	require.NoError(t, err)
	t.Cleanup(func() { ws.Close() })
	return &rawWS{t: t, ws: ws}
}

// TestSharedSubscriberTooSlowIsEndedAlone: a member of a shared execution
// that does not read is ended with LIMIT_EXCEEDED and the cursor of the last
// event it was handed, while the others receive every event; resubscribing
// from that cursor misses nothing.
func TestSharedSubscriberTooSlowIsEndedAlone(t *testing.T) {
	t.Parallel()
	testdb.Run(t, func(t *testing.T, url string) {
		s, _ := startServerWith(t, url, serverOptions{
			websocket: server.WebsocketConfig{WriteTimeout: time.Hour, PingInterval: time.Hour, SharedQueue: 8},
		})
		p := s.createProject(t, s.AdminToken, "slow")
		task := s.createTask(t, s.AdminToken, p, "big", M{"description": strings.Repeat("x", 90_000)})

		slow := s.dialSlowRaw(t)
		slow.init(M{"Authorization": "Bearer " + s.AdminToken})
		slow.send(M{"type": "subscribe", "id": "slow", "payload": M{"query": sharedBigSelection, "variables": M{"p": p}}})
		eventually(t, "the slow subscriber's execution", func() bool {
			return s.metric(t, "taskgraph_shared_subscription_executions") == 1
		})
		update := func(n int) {
			s.query(t, s.AdminToken, `mutation($id: ID!, $e: Int!) { updateTask(input: {id: $id, actualEffortMinutes: $e}) { task { id } } }`,
				M{"id": task, "e": n})
		}
		fast, err := s.dial(t, s.AdminToken).Subscribe(context.Background(), sharedBigSelection, M{"p": p})
		require.NoError(t, err)
		// The fast one has joined once an update reaches it.
		n := 0
		got := make(chan error, 1)
		go func() { _, err := tryNextEvent(fast); got <- err }()
	joined:
		for {
			n++
			update(n)
			select {
			case err := <-got:
				require.NoError(t, err)
				break joined
			case <-time.After(20 * time.Millisecond):
			}
		}
		const more = 60
		for i := 1; i <= more; i++ {
			update(n + i)
			e := nextEvent(t, fast)
			require.Equal(t, "TASK_UPDATED", e.Type)
		}
		require.Equal(t, 1.0, s.metric(t, "taskgraph_shared_subscription_executions"), "the slow one shared it")
		received, last, ext := readUntilTooSlow(t, slow)
		require.Equal(t, "SUBSCRIBER_TOO_SLOW", ext["reason"])
		require.Positive(t, received)
		require.Less(t, received, n+more, "the slow subscriber was cut off")
		rest := s.subscribe(t, s.AdminToken, p, last)
		for i := received + 1; i <= n+more; i++ {
			require.Equal(t, "TASK_UPDATED", nextEvent(t, rest).Type)
		}
		s.transition(t, s.AdminToken, task, "PENDING")
		require.Equal(t, "TASK_STATUS_CHANGED", nextEvent(t, rest).Type, "nothing more before the new event")
		update(n + more + 1)
		// The fast one goes on: the status change, then the update. Before
		// them it may hold one more update, when it joined while the join
		// loop's updates were on their way.
		for nextEvent(t, fast).Type != "TASK_STATUS_CHANGED" {
		}
		require.Equal(t, "TASK_UPDATED", nextEvent(t, fast).Type, "the fast one goes on")
	})
}

// TestSharedSubscriptionLeaveAndRejoin: members leave while the others go
// on; the execution stops with its last member, and a new subscriber starts
// a new one that sees only what comes after it.
func TestSharedSubscriptionLeaveAndRejoin(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		p := s.createProject(t, s.AdminToken, "rejoin")
		conn := s.dial(t, s.AdminToken)
		subA, subB := subscribeOn(t, conn, p, ""), subscribeOn(t, conn, p, "")
		a, b := collect(subA), collect(subB)
		warm(t, s, s.AdminToken, p, a, b)
		require.NoError(t, subA.Close())
		s.createTask(t, s.AdminToken, p, "after-a", nil)
		b.waitFor(t, "after-a")
		require.Equal(t, 1.0, s.metric(t, "taskgraph_shared_subscription_executions"))
		require.NoError(t, subB.Close())
		eventually(t, "the execution stops with its last member", func() bool {
			return s.metric(t, "taskgraph_shared_subscription_executions") == 0
		})
		s.createTask(t, s.AdminToken, p, "between", nil)
		from := s.eventCursor(t, s.AdminToken, p)
		c := collect(subscribeOn(t, conn, p, ""))
		warm(t, s, s.AdminToken, p, c)
		s.createTask(t, s.AdminToken, p, "after-c", nil)
		requireGapless(t, c.waitFor(t, "after-c"), from)
		require.Equal(t, 1.0, s.metric(t, "taskgraph_shared_subscription_executions"))
	})
}

// TestSharedSubscriptionRevocation: revoking a token closes the sockets
// opened with it (4403) although their subscription is shared; the
// subscribers of the same user's other token go on.
func TestSharedSubscriptionRevocation(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		user, _ := s.member(t, "holder")
		revokedID, revoked := s.tokenFor(t, user, "MEMBER", "")
		_, kept := s.tokenFor(t, user, "MEMBER", "")
		p := s.createProject(t, kept, "revocation")
		var raws []*rawWS
		for i := range 2 {
			r := s.mustDialRaw(t)
			r.init(M{"Authorization": "Bearer " + revoked})
			r.send(M{"type": "subscribe", "id": fmt.Sprint(i), "payload": M{"query": subscribeEvents, "variables": M{"p": p}}})
			raws = append(raws, r)
		}
		k := collect(s.subscribe(t, kept, p, ""))
		warm(t, s, kept, p, k)
		eventually(t, "both tokens' executions", func() bool {
			return s.metric(t, "taskgraph_shared_subscription_executions") == 2
		})
		s.query(t, s.AdminToken, `mutation($id: ID!) { revokeApiToken(input: {id: $id}) { apiToken { id } } }`, M{"id": revokedID})
		for _, r := range raws {
			code, reason := r.closeCode()
			require.Equal(t, server.CloseForbidden, code)
			require.Contains(t, reason, "revoked")
		}
		s.createTask(t, kept, p, "still", nil)
		k.waitFor(t, "still")
		eventually(t, "the revoked token's execution stops", func() bool {
			return s.metric(t, "taskgraph_shared_subscription_executions") == 1
		})
	})
}

// TestSharedSubscriptionLegacyProtocol: members on graphql-ws connections
// (the legacy protocol) receive their events as "data" messages of their own
// operation's id, as a subscription running alone does.
func TestSharedSubscriptionLegacyProtocol(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		p := s.createProject(t, s.AdminToken, "legacy-shared")
		var raws []*rawWS
		for i := range 2 {
			r := s.mustDialRaw(t, "graphql-ws")
			r.init(M{"Authorization": "Bearer " + s.AdminToken})
			r.send(M{"type": "start", "id": fmt.Sprintf("op%d", i), "payload": M{"query": subscribeEvents, "variables": M{"p": p}}})
			raws = append(raws, r)
		}
		eventually(t, "one execution for both", func() bool {
			return s.metric(t, "taskgraph_shared_subscription_executions") == 1
		})
		for i, r := range raws {
			for {
				s.createTask(t, s.AdminToken, p, fmt.Sprintf("legacy-%d", i), nil)
				m, err := r.read()
				require.NoError(t, err)
				if m["type"] == "ka" {
					continue
				}
				require.Equal(t, "data", m["type"], "%v", m)
				require.Equal(t, fmt.Sprintf("op%d", i), m["id"])
				require.Contains(t, m["payload"].(map[string]any)["data"].(map[string]any)["projectEvents"].(map[string]any)["title"], "legacy-")
				break
			}
		}
	})
}
