package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/server"
	"github.com/taskgraph/taskgraph/internal/testdb"
)

// logBuffer collects the server's JSON log lines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// lines decodes the log lines written so far.
func (b *logBuffer) lines(t testing.TB) []map[string]any {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(b.buf.String()), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &m), l)
		out = append(out, m)
	}
	return out
}

// atLevel returns the lines logged at level ("ERROR", "WARN", …).
func (b *logBuffer) atLevel(t testing.TB, level string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range b.lines(t) {
		if l["level"] == level {
			out = append(out, l)
		}
	}
	return out
}

// TestSubscriptionEndIsNotAnError: subscriptions that clients end — complete
// right after subscribe, or a connection closed while events are being
// resolved — are not logged as errors (they were: "graphql internal error"
// with "context canceled" at ERROR, from resolvers whose context ended).
func TestSubscriptionEndIsNotAnError(t *testing.T) {
	t.Parallel()
	testdb.Run(t, func(t *testing.T, url string) {
		logs := &logBuffer{}
		s, stop := startServerWith(t, url, serverOptions{logs: logs})
		p := s.createProject(t, s.AdminToken, "logs")
		from := s.eventCursor(t, s.AdminToken, p)
		for i := 0; i < 20; i++ {
			s.createTask(t, s.AdminToken, p, "t", nil)
		}
		for i := 0; i < 5; i++ {
			// Completed at once: the subscribe resolver is still running.
			r := s.mustDialRaw(t)
			r.init(M{"token": s.AdminToken})
			r.send(r.subscribeMsg("1", p))
			r.send(M{"type": "complete", "id": "1"})
			// Closed while the events of a catch-up are resolved.
			r2 := s.mustDialRaw(t)
			r2.init(M{"token": s.AdminToken})
			sub := r2.subscribeMsg("1", p)
			sub["payload"].(M)["variables"].(M)["after"] = from
			r2.send(sub)
			m, err := r2.read()
			require.NoError(t, err)
			require.Equal(t, "next", m["type"])
			require.NoError(t, r2.ws.Close())
			r.send(M{"type": "ping"})
			for m["type"] != "pong" { // the end of operation 1 may come first
				m, err = r.read()
				require.NoError(t, err)
			}
			require.NoError(t, r.ws.Close())
		}
		stop()
		require.Empty(t, logs.atLevel(t, "ERROR"))
		require.NotEmpty(t, logs.lines(t), "the log was captured")
	})
}

// TestWebsocketCloseNeedsNoLinger: when the server closes a websocket, its
// TCP connection ends as soon as the client answers the close frame. The
// linger — how long the server waits for that answer — is an hour here, so
// the connection can only end early by the server reading the answer; it
// used to stop reading once gqlgen let go of the connection (a refused
// connection_init, connection_terminate) and wait the linger out.
func TestWebsocketCloseNeedsNoLinger(t *testing.T) {
	t.Parallel()
	s, _ := startServerWith(t, testdb.SQLite(t), serverOptions{websocket: server.WebsocketConfig{CloseLinger: time.Hour}})
	for _, tc := range []struct {
		name     string
		protocol string
		messages []M
		code     int
	}{
		{"refused connection_init", "graphql-transport-ws", []M{{"type": "connection_init", "payload": M{"token": "tg_wrong"}}}, server.CloseForbidden},
		{"no token", "graphql-transport-ws", []M{{"type": "connection_init", "payload": M{}}}, server.CloseForbidden},
		{"connection_terminate", "graphql-ws", []M{{"type": "connection_init", "payload": M{"token": s.AdminToken}}, {"type": "connection_terminate"}}, websocket.CloseNormalClosure},
		{"invalid message", "graphql-transport-ws", []M{{"type": "connection_init", "payload": M{"token": s.AdminToken}}, {"type": "nonsense"}}, server.CloseBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := s.mustDialRaw(t, tc.protocol)
			for _, m := range tc.messages {
				r.send(m)
			}
			// gorilla answers the server's close frame as it reads it.
			code, _ := r.closeCode()
			require.Equal(t, tc.code, code)
			// Then the server closes the TCP connection: EOF, not the
			// guard's timeout (a guard against hangs, far below the linger).
			conn := r.ws.NetConn()
			require.NoError(t, conn.SetReadDeadline(time.Now().Add(waitLimit)))
			buf := make([]byte, 512)
			var err error
			for err == nil {
				_, err = conn.Read(buf) // the server's echo of our close frame may come first
			}
			require.ErrorIs(t, err, io.EOF, "the server closed the connection after the client's close frame")
		})
	}
	eventually(t, "no websocket left open", func() bool { return s.metric(t, "taskgraph_websocket_connections") == 0 })
}

// TestSlowBodyIsCutOff: a client that sends its body a byte at a time, more
// slowly than --body-read-timeout allows, gets 408 and loses the connection
// before it has sent the body; it used to be waited for as long as it kept
// trickling. A websocket, which sends no body, outlives the timeout.
func TestSlowBodyIsCutOff(t *testing.T) {
	t.Parallel()
	s, _ := startServerWith(t, testdb.SQLite(t), serverOptions{args: []string{"--body-read-timeout", "1s"}})
	host := strings.TrimPrefix(s.URL, "http://")

	t.Run("slow body", func(t *testing.T) {
		body := `{"query": "{ viewer { slug } }"}` + strings.Repeat(" ", 200)
		conn, err := net.Dial("tcp", host)
		require.NoError(t, err)
		defer conn.Close()
		_, err = fmt.Fprintf(conn, "POST /graphql HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n",
			host, s.AdminToken, len(body))
		require.NoError(t, err)
		answered := make(chan string, 1)
		go func() {
			_ = conn.SetReadDeadline(time.Now().Add(waitLimit)) // a guard against hangs
			b, _ := io.ReadAll(conn)                            // until the server closes
			answered <- string(b)
		}()
		// A byte every 100ms: the body would take 23s.
		sent := 0
		var answer string
	trickle:
		for sent < len(body) {
			select {
			case answer = <-answered:
				break trickle
			case <-time.After(100 * time.Millisecond):
			}
			if _, err := conn.Write([]byte{body[sent]}); err != nil {
				answer = <-answered
				break
			}
			sent++
		}
		require.Less(t, sent, len(body), "the server waited for the whole body; it answered %q", answer)
		require.True(t, strings.HasPrefix(answer, "HTTP/1.1 408 "), "answer: %q", answer)
		require.Contains(t, answer, `"code":"LIMIT_EXCEEDED"`)
	})

	t.Run("websocket outlives it", func(t *testing.T) {
		r := s.mustDialRaw(t)
		r.init(M{"token": s.AdminToken})
		time.Sleep(2 * time.Second) // twice the body timeout
		r.send(M{"type": "ping"})
		m, err := r.read()
		require.NoError(t, err)
		require.Equal(t, "pong", m["type"])
	})

	t.Run("keep-alive requests still served", func(t *testing.T) {
		// A request after a slow handler: the deadline was cleared when
		// the body ended, so a connection reused later is not cut.
		require.Equal(t, "admin", s.query(t, s.AdminToken, `{ viewer { slug } }`, nil).S("viewer.slug"))
		time.Sleep(1500 * time.Millisecond)
		require.Equal(t, "admin", s.query(t, s.AdminToken, `{ viewer { slug } }`, nil).S("viewer.slug"))
	})
}

// TestMetricsAccess: --metrics-addr moves /metrics off the API's address,
// --metrics-token puts it behind a bearer token, and operation names chosen
// by callers grow the label set only up to 100 names.
func TestMetricsAccess(t *testing.T) {
	t.Parallel()
	s, _ := startServerWith(t, testdb.SQLite(t), serverOptions{args: []string{"--metrics-addr", "127.0.0.1:0", "--metrics-token", "metrics-secret"}})
	require.NotEmpty(t, s.MetricsURL)
	scrape := func(token string) (int, string) {
		req, err := http.NewRequest(http.MethodGet, s.MetricsURL, nil)
		require.NoError(t, err)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(b)
	}

	resp, _ := s.get(t, "/metrics")
	require.Equal(t, http.StatusNotFound, resp.StatusCode, "not on the API's address")
	for _, token := range []string{"", "wrong", s.AdminToken} {
		status, body := scrape(token)
		require.Equal(t, http.StatusUnauthorized, status)
		require.NotContains(t, body, "taskgraph_")
	}

	for i := range 120 {
		s.query(t, s.AdminToken, fmt.Sprintf(`query Probe%03d { viewer { slug } }`, i), nil)
	}
	status, body := scrape("metrics-secret")
	require.Equal(t, http.StatusOK, status)
	labels := map[string]bool{}
	for _, line := range strings.Split(body, "\n") {
		if rest, ok := strings.CutPrefix(line, `taskgraph_graphql_requests_total{operation="`); ok {
			labels[rest[:strings.Index(rest, `"`)]] = true
		}
	}
	require.LessOrEqual(t, len(labels), 101, "at most 100 names and other")
	require.True(t, labels["other"])
	require.Contains(t, body, `taskgraph_graphql_requests_total{operation="other",status="ok"} 20`+"\n")
	require.Contains(t, body, "go_goroutines ")
}

// TestGraphQLOverHTTP covers the GraphQL-over-HTTP audits (graphql-http's
// server audits) the server failed: statuses of parse and validation failures
// by Accept, no data entry in request errors, and 400 for request parameters
// of the wrong type.
func TestGraphQLOverHTTP(t *testing.T) {
	t.Parallel()
	s := startServer(t, testdb.SQLite(t))
	const (
		jsonType     = "application/json"
		responseType = "application/graphql-response+json"
	)
	send := func(t *testing.T, method, accept, body, rawQuery string) (int, string, map[string]json.RawMessage) {
		t.Helper()
		req, err := http.NewRequest(method, s.URL+"/graphql?"+rawQuery, strings.NewReader(body))
		require.NoError(t, err)
		if method == http.MethodPost {
			req.Header.Set("Content-Type", "application/json")
		}
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		req.Header.Set("Authorization", "Bearer "+s.AdminToken)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		var out map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(raw, &out), "%s", raw)
		return resp.StatusCode, resp.Header.Get("Content-Type"), out
	}
	firstError := func(t *testing.T, out map[string]json.RawMessage) gqlError {
		t.Helper()
		var errs []gqlError
		require.NoError(t, json.Unmarshal(out["errors"], &errs))
		require.NotEmpty(t, errs)
		return errs[0]
	}

	t.Run("document failures", func(t *testing.T) {
		for _, tc := range []struct{ name, body, code string }{
			{"parse", `{"query": "{"}`, "GRAPHQL_PARSE_FAILED"},
			{"validation", `{"query": "{ nope }"}`, "GRAPHQL_VALIDATION_FAILED"},
			{"variable coercion", `{"query": "query($n: Int!) { tasks(first: $n) { totalCount } }", "variables": {"n": "x"}}`, "BAD_USER_INPUT"},
		} {
			for _, accept := range []string{jsonType, "", "*/*", responseType, responseType + ", application/json"} {
				t.Run(tc.name+" "+accept, func(t *testing.T) {
					status, contentType, out := send(t, http.MethodPost, accept, tc.body, "")
					if strings.HasPrefix(accept, responseType) {
						require.Equal(t, http.StatusBadRequest, status)
						require.Equal(t, responseType, contentType)
					} else {
						require.Equal(t, http.StatusOK, status)
						require.Equal(t, jsonType, contentType)
					}
					require.NotContains(t, out, "data", "a request error has no data entry")
					require.Equal(t, tc.code, firstError(t, out).Extensions["code"])
				})
			}
		}
	})

	t.Run("invalid parameters", func(t *testing.T) {
		for _, tc := range []struct{ name, body, message string }{
			{"query a number", `{"query": 1}`, "the query parameter must be a string"},
			{"query an object", `{"query": {}}`, "the query parameter must be a string"},
			{"query missing", `{}`, "the query parameter is missing"},
			{"query null", `{"query": null}`, "the query parameter is missing"},
			{"variables a string", `{"query": "{ viewer { slug } }", "variables": "{}"}`, "the variables parameter must be an object"},
			{"variables a list", `{"query": "{ viewer { slug } }", "variables": []}`, "the variables parameter must be an object"},
			{"operationName a number", `{"query": "{ viewer { slug } }", "operationName": 1}`, "the operationName parameter must be a string"},
			{"extensions a string", `{"query": "{ viewer { slug } }", "extensions": "x"}`, "the extensions parameter must be an object"},
			{"extensions a list", `{"query": "{ viewer { slug } }", "extensions": []}`, "the extensions parameter must be an object"},
			{"body a list", `[]`, "the request body must be a JSON object"},
		} {
			for _, accept := range []string{jsonType, responseType} {
				t.Run(tc.name+" "+accept, func(t *testing.T) {
					status, contentType, out := send(t, http.MethodPost, accept, tc.body, "")
					require.Equal(t, http.StatusBadRequest, status)
					require.Equal(t, accept, contentType)
					require.NotContains(t, out, "data")
					e := firstError(t, out)
					require.Contains(t, e.Message, tc.message)
					require.Equal(t, "BAD_USER_INPUT", e.Extensions["code"])
				})
			}
		}
		// GET without a query.
		status, _, out := send(t, http.MethodGet, jsonType, "", "")
		require.Equal(t, http.StatusBadRequest, status)
		require.Contains(t, firstError(t, out).Message, "the query parameter is missing")
	})

	t.Run("valid parameters", func(t *testing.T) {
		for _, accept := range []string{jsonType, responseType} {
			status, contentType, out := send(t, http.MethodPost, accept,
				`{"query": "{ viewer { slug } }", "variables": null, "operationName": null, "extensions": null}`, "")
			require.Equal(t, http.StatusOK, status)
			require.Equal(t, accept, contentType)
			require.JSONEq(t, `{"viewer": {"slug": "admin"}}`, string(out["data"]))
			status, _, out = send(t, http.MethodPost, accept,
				`{"query": "query Q($b: Boolean!) { viewer @include(if: $b) { slug } }", "variables": {"b": true}, "operationName": "Q", "extensions": {}}`, "")
			require.Equal(t, http.StatusOK, status)
			require.JSONEq(t, `{"viewer": {"slug": "admin"}}`, string(out["data"]))
			status, _, out = send(t, http.MethodGet, accept, "", "query="+url.QueryEscape("{ viewer { slug } }"))
			require.Equal(t, http.StatusOK, status)
			require.JSONEq(t, `{"viewer": {"slug": "admin"}}`, string(out["data"]))
		}
		// A persisted query needs no query text.
		_, _, out := send(t, http.MethodPost, jsonType,
			`{"extensions": {"persistedQuery": {"version": 1, "sha256Hash": "0000000000000000000000000000000000000000000000000000000000000000"}}}`, "")
		require.Equal(t, "PERSISTED_QUERY_NOT_FOUND", firstError(t, out).Extensions["code"])
	})
}

// TestInputsBothDatabasesAccept: an Int beyond 32 bits and a string with a
// NUL character are BAD_USER_INPUT naming the field, on both databases; they
// used to be stored on SQLite and fail as INTERNAL on PostgreSQL.
func TestInputsBothDatabasesAccept(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		admin := s.AdminToken
		p := s.createProject(t, admin, "inputs")
		task := s.createTask(t, admin, p, "existing", nil)
		update := `mutation($input: UpdateTaskInput!) { updateTask(input: $input) { task { id actualEffortMinutes } } }`
		createList := `mutation($input: CreateTaskListInput!) { createTaskList(input: $input) { taskList { id maxParallelAgents } } }`
		createTask := `mutation($input: CreateTaskInput!) { createTask(input: $input) { task { id } } }`
		for _, tc := range []struct {
			name, query string
			vars        M
			field       string
		}{
			{"Int above 2^31-1 in a variable", update, M{"input": M{"id": task, "actualEffortMinutes": int64(1) << 31}}, "input.actualEffortMinutes"},
			{"Int far above in a variable", update, M{"input": M{"id": task, "actualEffortMinutes": int64(1) << 40}}, "input.actualEffortMinutes"},
			{"Int above 2^31-1 in a literal", `mutation($id: ID!) { updateTask(input: {id: $id, actualEffortMinutes: 3000000000}) { task { id } } }`,
				M{"id": task}, "input.actualEffortMinutes"},
			{"Int below -2^31", update, M{"input": M{"id": task, "expectedVersion": -(int64(1) << 31) - 1, "actualEffortMinutes": 5}}, "input.expectedVersion"},
			// The service bounds maxParallelAgents too; the check comes first.
			{"Int above 2^31-1 in a list's input", createList, M{"input": M{"projectId": p, "name": "l", "maxParallelAgents": int64(1) << 31}}, "input.maxParallelAgents"},
			{"NUL in a title", createTask, M{"input": M{"projectId": p, "title": "a\x00b"}}, "input.title"},
			{"NUL in a literal title", `mutation($p: ID!) { createTask(input: {projectId: $p, title: "a\u0000b"}) { task { id } } }`, M{"p": p}, "input.title"},
			{"NUL in a list", createTask, M{"input": M{"projectId": p, "title": "t", "acceptanceCriteria": []string{"ok", "b\x00"}}}, "input.acceptanceCriteria[1]"},
			{"NUL in a list of input objects", createTask, M{"input": M{"projectId": p, "title": "t",
				"fileImpacts": []M{{"filePath": "a.go", "operation": "READ"}, {"filePath": "b\x00.go", "operation": "READ"}}}}, "input.fileImpacts[1].filePath"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				r := s.requireCode(t, admin, tc.query, tc.vars, "BAD_USER_INPUT")
				require.Equal(t, tc.field, r.ext("field"), r.Errors[0].Message)
				require.True(t, r.dataIsNull())
			})
		}
		d := s.query(t, admin, `query($p: ID!) { tasks(projectId: $p) { totalCount } project(id: $p) { taskLists(first: 10) { totalCount } } }`, M{"p": p})
		require.Equal(t, 1, d.N("tasks.totalCount"), "nothing was created")
		require.Equal(t, 0, d.N("project.taskLists.totalCount"))
		require.True(t, s.query(t, admin, `query($id: ID!) { task(id: $id) { actualEffortMinutes } }`, M{"id": task}).Null("task.actualEffortMinutes"),
			"nothing was changed")
		u := s.query(t, admin, update, M{"input": M{"id": task, "actualEffortMinutes": 1<<31 - 1}})
		require.Equal(t, 1<<31-1, u.N("updateTask.task.actualEffortMinutes"), "the largest Int is stored on both databases")
		// Ordinary values still go through.
		l := s.query(t, admin, createList, M{"input": M{"projectId": p, "name": "ok", "maxParallelAgents": 4}})
		require.Equal(t, 4, l.N("createTaskList.taskList.maxParallelAgents"))
		s.createTask(t, admin, p, "tab\tand ünïcode", M{"acceptanceCriteria": []string{"works"}})
	})
}
