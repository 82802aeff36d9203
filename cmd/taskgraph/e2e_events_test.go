package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/client"
	"github.com/taskgraph/taskgraph/internal/events"
	"github.com/taskgraph/taskgraph/internal/loader"
	"github.com/taskgraph/taskgraph/internal/server"
	"github.com/taskgraph/taskgraph/internal/testdb"
)

// TestEventsFollowTheChanges: every change of the task graph that the API
// names becomes one event, streamed in commit order with its details, and
// the same events page through Project.events with the same cursors.
func TestEventsFollowTheChanges(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		admin := s.AdminToken
		p := s.createProject(t, admin, "ev")
		start := s.eventCursor(t, admin, p)
		all := s.subscribe(t, admin, p, start)
		statuses := s.subscribe(t, admin, p, start, "TASK_STATUS_CHANGED")

		a := s.createTask(t, admin, p, "alpha", nil) // 001
		s.query(t, admin, `mutation($id: ID!) { updateTask(input: {id: $id, title: "alpha 2", priority: P1}) { task { id } } }`, M{"id": a})
		s.transition(t, admin, a, "PENDING")
		blk := s.query(t, admin, `mutation($id: ID!) { createTaskBlock(input: {taskId: $id, blockType: MANUAL, reason: "wait"}) { block { id } } }`,
			M{"id": a}).S("createTaskBlock.block.id")
		s.query(t, admin, `mutation($id: ID!) { resolveTaskBlock(input: {id: $id}) { task { id } } }`, M{"id": blk})
		b := s.createTask(t, admin, p, "beta", nil) // 002
		s.query(t, admin, `mutation($id: ID!) { updateTask(input: {id: $id, inEvaluationQueue: true}) { task { id } } }`, M{"id": b})
		list := s.createList(t, admin, p, "list")
		s.query(t, admin, `mutation($l: ID!, $t: [ID!]!) { addTasksToList(input: {taskListId: $l, taskIds: $t}) { taskList { id } } }`,
			M{"l": list, "t": []string{b}})
		tpl := s.query(t, admin, `mutation($p: ID!) { createTaskTemplate(input: {name: "tpl", category: BUG, scope: PROJECT, projectId: $p}) { taskTemplate { id } } }`,
			M{"p": p}).S("createTaskTemplate.taskTemplate.id")
		s.query(t, admin, `mutation($t: ID!, $p: ID!, $l: ID!) { createTaskFromTemplate(input: {templateId: $t, projectId: $p, title: "gamma", taskListId: $l}) { task { id } } }`,
			M{"t": tpl, "p": p, "l": list})

		want := []string{
			"TASK_CREATED TU-EV-TSK-001 alpha DRAFT",
			"TASK_UPDATED TU-EV-TSK-001 title,priority",
			"TASK_STATUS_CHANGED TU-EV-TSK-001 DRAFT>PENDING (test)",
			"TASK_STATUS_CHANGED TU-EV-TSK-001 PENDING>BLOCKED (wait)",
			"TASK_STATUS_CHANGED TU-EV-TSK-001 BLOCKED>PENDING (all blocks resolved)",
			"TASK_CREATED TU-EV-TSK-002 beta DRAFT",
			"TASK_STATUS_CHANGED TU-EV-TSK-002 DRAFT>EVALUATING (added to the evaluation queue)",
			"TASK_UPDATED TU-EV-TSK-002 inEvaluationQueue",
			"TASK_STATUS_CHANGED TU-EV-TSK-002 EVALUATING>PENDING (added to a task list)",
			"TASK_UPDATED TU-EV-TSK-002 taskListId,inEvaluationQueue",
			"TASK_CREATED TU-EV-BUG-001 gamma PENDING",
		}
		got := nextEvents(t, all, len(want))
		require.Equal(t, want, describe(got))
		for i := 1; i < len(got); i++ {
			require.NotEqual(t, got[i-1].Cursor, got[i].Cursor)
			require.False(t, got[i].OccurredAt.Before(got[i-1].OccurredAt), "occurredAt in commit order")
		}
		require.Equal(t, a, got[0].Task.ID)

		var wantStatuses []string
		for _, w := range want {
			if strings.HasPrefix(w, "TASK_STATUS_CHANGED") {
				wantStatuses = append(wantStatuses, w)
			}
		}
		require.Equal(t, wantStatuses, describe(nextEvents(t, statuses, len(wantStatuses))))

		// Polling clients page through the same events with the same cursors.
		paged := s.pageEvents(t, admin, p, "")
		require.Equal(t, want, describe(paged))
		require.Equal(t, cursors(got), cursors(paged))
		require.Equal(t, want[3:], describe(s.pageEvents(t, admin, p, got[2].Cursor)))
		require.Equal(t, wantStatuses, describe(s.pageEvents(t, admin, p, "", "TASK_STATUS_CHANGED")))
		d := s.query(t, admin, `query($id: ID!) { project(id: $id) { eventCursor
			events(last: 2, types: [TASK_CREATED]) { totalCount nodes { type } pageInfo { hasPreviousPage } } } }`, M{"id": p})
		require.Equal(t, 3, d.N("project.events.totalCount"))
		require.Len(t, d.L("project.events.nodes"), 2)
		require.True(t, d.B("project.events.pageInfo.hasPreviousPage"))
		require.Equal(t, got[len(got)-1].Cursor, d.S("project.eventCursor"))

		// A later subscriber from the last cursor gets only what comes next.
		late := s.subscribe(t, admin, p, got[len(got)-1].Cursor)
		s.transition(t, admin, a, "IN_PROGRESS")
		next := "TASK_STATUS_CHANGED TU-EV-TSK-001 PENDING>IN_PROGRESS (test)"
		require.Equal(t, next, nextEvent(t, late).String())
		require.Equal(t, next, nextEvent(t, all).String())
	})
}

// TestSubscribeWithoutCursorStartsNow: without after, a subscription gets
// only events committed after it started, then all of them in order.
func TestSubscribeWithoutCursorStartsNow(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		p := s.createProject(t, s.AdminToken, "now")
		before := s.createTask(t, s.AdminToken, p, "before", nil)
		sub := s.subscribe(t, s.AdminToken, p, "")
		// The subscription starts at some point after the request; write until
		// it shows, then everything after that point must arrive in order.
		n := 0
		first := make(chan ev, 1)
		go func() {
			e, err := tryNextEvent(sub)
			if err == nil {
				first <- e
			}
			close(first)
		}()
		var seen ev
	wait:
		for {
			n++
			s.createTask(t, s.AdminToken, p, fmt.Sprintf("t%d", n), nil)
			select {
			case e, ok := <-first:
				require.True(t, ok, "subscription failed")
				seen = e
				break wait
			case <-time.After(20 * time.Millisecond):
			}
		}
		require.NotEqual(t, before, seen.Task.ID, "an event from before the subscription")
		var k int
		_, err := fmt.Sscanf(seen.Title, "t%d", &k)
		require.NoError(t, err)
		for i := k + 1; i <= n; i++ {
			require.Equal(t, fmt.Sprintf("t%d", i), nextEvent(t, sub).Title)
		}
		s.createTask(t, s.AdminToken, p, "last", nil)
		require.Equal(t, "last", nextEvent(t, sub).Title)
	})
}

// TestSubscriptionErrors: bad arguments and invisible projects fail the
// subscription with the usual codes; subscriptions over HTTP are refused.
func TestSubscriptionErrors(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		p := s.createProject(t, s.AdminToken, "mine")
		other := s.createProject(t, s.AdminToken, "theirs")
		_, member := s.member(t, "outsider")
		for _, tc := range []struct {
			name, token, project, after, code string
		}{
			{"invisible project", member, p, "", "NOT_FOUND"},
			{"malformed cursor", s.AdminToken, p, "nope", "BAD_USER_INPUT"},
			{"another project's cursor", s.AdminToken, p, s.eventCursor(t, s.AdminToken, other), "BAD_USER_INPUT"},
			{"not a project id", s.AdminToken, missingID("Task"), "", "NOT_FOUND"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				sub := s.subscribe(t, tc.token, tc.project, tc.after)
				_, err := tryNextEvent(sub)
				var es client.Errors
				require.ErrorAs(t, err, &es)
				require.Equal(t, tc.code, es.Code(), "%v", es)
			})
		}
		r := s.do(t, s.AdminToken, subscribeEvents, M{"p": p})
		require.Equal(t, "BAD_USER_INPUT", r.code())
		require.Contains(t, r.Errors[0].Message, "websocket")
		r = s.do(t, s.AdminToken, `query($id: ID!) { project(id: $id) { events(after: "bad") { totalCount } } }`, M{"id": p})
		require.Equal(t, "BAD_USER_INPUT", r.code())
		require.Equal(t, "after", r.ext("field"))
	})
}

// TestResubscribeFromLastCursor: a client that loses its connection and
// resubscribes with the last cursor it received gets every event it missed,
// once each, in order, and then the live ones.
func TestResubscribeFromLastCursor(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		p := s.createProject(t, s.AdminToken, "resume")
		conn := s.dial(t, s.AdminToken)
		sub := subscribeOn(t, conn, p, s.eventCursor(t, s.AdminToken, p))
		for i := 1; i <= 5; i++ {
			s.createTask(t, s.AdminToken, p, fmt.Sprint(i), nil)
		}
		got := nextEvents(t, sub, 3)
		// The connection drops without a goodbye.
		_ = conn.Close()
		for i := 6; i <= 10; i++ {
			s.createTask(t, s.AdminToken, p, fmt.Sprint(i), nil)
		}
		again := s.subscribe(t, s.AdminToken, p, got[2].Cursor)
		for i := 4; i <= 10; i++ {
			require.Equal(t, fmt.Sprint(i), nextEvent(t, again).Title)
		}
		s.createTask(t, s.AdminToken, p, "11", nil)
		require.Equal(t, "11", nextEvent(t, again).Title, "nothing repeated before the live event")
	})
}

// TestEventsAcrossReplicas (PostgreSQL): two server processes on one
// database; what commits through one reaches subscribers of the other.
func TestEventsAcrossReplicas(t *testing.T) {
	t.Parallel()
	url := testdb.Postgres(t)
	// The poll is far too slow to be what delivers: LISTEN/NOTIFY must.
	slowPoll := serverOptions{events: events.Options{PollInterval: time.Hour}}
	a, _ := startServerWith(t, url, slowPoll)
	b, _ := startServerWith(t, url, slowPoll)
	eventsAcrossReplicas(t, a, b, "replicas")
}

// TestListenerOutage (PostgreSQL): the listening connection is killed with
// pg_terminate_backend again and again while another replica writes; every
// event still arrives, in order, once — the reconnect catches up from the
// table (the poll is too slow to help).
func TestListenerOutage(t *testing.T) {
	url := testdb.Postgres(t)
	opts := serverOptions{events: events.Options{PollInterval: time.Hour, ReconnectMin: 20 * time.Millisecond}}
	reader, _ := startServerWith(t, url, opts)
	writer, _ := startServerWith(t, url, opts)
	p := writer.createProject(t, writer.AdminToken, "outage")
	sub := reader.subscribe(t, reader.AdminToken, p, reader.eventCursor(t, reader.AdminToken, p))

	kill := func() int {
		var n int
		require.NoError(t, writer.DB.SQL().QueryRow(`SELECT COUNT(pg_terminate_backend(pid)) FROM pg_stat_activity
			WHERE application_name = $1`, events.ListenerAppName).Scan(&n))
		return n
	}
	eventually(t, "listeners connected", func() bool {
		var n int
		require.NoError(t, writer.DB.SQL().QueryRow(`SELECT COUNT(*) FROM pg_stat_activity WHERE application_name = $1`,
			events.ListenerAppName).Scan(&n))
		return n >= 2
	})
	const total = 30
	written := make(chan error, 1)
	go func() {
		for i := 1; i <= total; i++ {
			if i%3 == 0 {
				kill()
			}
			r, err := writer.post(writer.AdminToken, `mutation($p: ID!, $t: String!) { createTask(input: {projectId: $p, title: $t}) { task { id } } }`,
				M{"p": p, "t": fmt.Sprint(i)})
			if err == nil && len(r.Errors) > 0 {
				err = fmt.Errorf("%v", r.Errors)
			}
			if err != nil {
				written <- err
				return
			}
		}
		written <- nil
	}()
	for i := 1; i <= total; i++ {
		require.Equal(t, fmt.Sprint(i), nextEvent(t, sub).Title)
	}
	require.NoError(t, <-written)
	require.Positive(t, kill(), "the listener reconnected")
	writer.createTask(t, writer.AdminToken, p, "after", nil)
	require.Equal(t, "after", nextEvent(t, sub).Title)
}

// TestSlowSubscriberDoesNotDelayOthers: a subscriber that never reads fills
// its socket and falls behind; another keeps receiving every event as it
// commits. When the slow one reads again it finds an uninterrupted prefix of
// the events, then an error naming the cursor of the last one, from which it
// resubscribes and receives the rest once.
func TestSlowSubscriberDoesNotDelayOthers(t *testing.T) {
	t.Parallel()
	testdb.Run(t, func(t *testing.T, url string) {
		s, _ := startServerWith(t, url, serverOptions{
			loaderTiming: loader.Timing{Idle: time.Millisecond},
			events:       events.Options{Window: 32},
			// Neither a write deadline nor a ping timeout rescues the others.
			websocket: server.WebsocketConfig{WriteTimeout: time.Hour, PingInterval: time.Hour},
		})
		p := s.createProject(t, s.AdminToken, "slow")
		big := strings.Repeat("x", 90_000)
		task := s.createTask(t, s.AdminToken, p, "big", M{"description": big})
		start := s.eventCursor(t, s.AdminToken, p)

		// The slow subscriber: a tiny receive buffer, a large selection, and
		// it does not read.
		d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}, NetDialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
			if err == nil {
				_ = c.(*net.TCPConn).SetReadBuffer(64 << 10)
			}
			return c, err
		}}
		slowWS, _, err := d.Dial("ws"+strings.TrimPrefix(s.URL, "http")+"/graphql", nil)
		require.NoError(t, err)
		defer slowWS.Close()
		slow := &rawWS{t: t, ws: slowWS}
		slow.init(M{"Authorization": "Bearer " + s.AdminToken})
		slow.send(M{"type": "subscribe", "id": "slow", "payload": M{
			"query":     `subscription($p: ID!, $a: String) { projectEvents(projectId: $p, after: $a) { cursor ... on TaskUpdated { task { description } } } }`,
			"variables": M{"p": p, "a": start}}})

		fast := s.subscribe(t, s.AdminToken, p, start)
		t0 := time.Now()
		defer func() { t.Logf("slow test took %v", time.Since(t0)) }()
		const total = 120
		for i := 1; i <= total; i++ {
			s.query(t, s.AdminToken, `mutation($id: ID!, $e: Int!) { updateTask(input: {id: $id, actualEffortMinutes: $e}) { task { id } } }`,
				M{"id": task, "e": i})
			e := nextEvent(t, fast)
			require.Equal(t, "TASK_UPDATED", e.Type)
		}

		t.Logf("writes done after %v", time.Since(t0))
		// Now the slow one reads: a prefix, then the error.
		received, last, _ := readUntilTooSlow(t, slow)
		t.Logf("slow read done after %v: %d", time.Since(t0), received)
		require.Positive(t, received)
		require.Less(t, received, total, "the slow subscriber was cut off")
		rest := s.subscribe(t, s.AdminToken, p, last)
		for i := received + 1; i <= total; i++ {
			require.Equal(t, "TASK_UPDATED", nextEvent(t, rest).Type)
		}
		// And nothing more: the next event is a new one.
		s.transition(t, s.AdminToken, task, "PENDING")
		require.Equal(t, "TASK_STATUS_CHANGED", nextEvent(t, rest).Type)
	})
}

// TestSubscriptionCyclesLeaveNothingBehind: 400 subscribe/unsubscribe
// cycles of 8 clients at once (over connections that are opened and closed
// too) leave goroutines, websockets, subscriptions and database connections
// where they started: a goroutine leaked once in 60 cycles is already over
// the slack of 5. (It ran 1,000 cycles; 400 catch the same leaks in less
// than half the time.)
func TestSubscriptionCyclesLeaveNothingBehind(t *testing.T) {
	testdb.Run(t, func(t *testing.T, url string) {
		s, _ := startServerWith(t, url, serverOptions{loaderTiming: loader.Timing{Idle: time.Millisecond}})
		p := s.createProject(t, s.AdminToken, "cycles")
		start := s.eventCursor(t, s.AdminToken, p)
		s.createTask(t, s.AdminToken, p, "one", nil)
		cycle := func(conn *client.Conn) error {
			sub, err := conn.Subscribe(context.Background(), subscribeEvents, M{"p": p, "after": start})
			if err != nil {
				return err
			}
			e, err := tryNextEvent(sub) // read from the table, then live
			if err != nil {
				return err
			}
			if e.Title != "one" {
				return fmt.Errorf("got %v", e)
			}
			return sub.Close()
		}
		settled := func() (int, bool) {
			g := runtime.NumGoroutine()
			st := s.DB.SQL().Stats()
			return g, st.InUse == 0 && s.metric(t, "taskgraph_websocket_connections") == 0 &&
				s.metric(t, "taskgraph_websocket_operations") == 0
		}
		// Warm up (HTTP keep-alive connections, pools), then take the baseline.
		conn := s.dial(t, s.AdminToken)
		require.NoError(t, cycle(conn))
		require.NoError(t, conn.Close())
		var baseline int
		eventually(t, "a quiet start", func() bool { var ok bool; baseline, ok = settled(); return ok })

		const workers, cycles, perConn = 8, 400, 10
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < cycles/workers/perConn; i++ {
					ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
					conn, err := s.client(s.AdminToken).Dial(ctx)
					cancel()
					if err != nil {
						errs <- err
						return
					}
					for j := 0; j < perConn; j++ {
						if err := cycle(conn); err != nil {
							errs <- err
							return
						}
					}
					_ = conn.Close()
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		const slack = 5
		var now int
		eventually(t, "goroutines and connections back at the baseline", func() bool {
			g, ok := settled()
			now = g
			return ok && g <= baseline+slack
		})
		t.Logf("goroutines: %d before, %d after %d cycles; db connections open %d, in use %d",
			baseline, now, cycles, s.DB.SQL().Stats().OpenConnections, s.DB.SQL().Stats().InUse)
	})
}

// TestWebsocketProtocol: authentication, the close codes, both subprotocols,
// origins, limits and dead peers.
func TestWebsocketProtocol(t *testing.T) {
	testdb.Run(t, func(t *testing.T, url string) {
		s, _ := startServerWith(t, url, serverOptions{
			websocket: server.WebsocketConfig{InitTimeout: 300 * time.Millisecond, MaxSubscriptions: 3, ReadLimit: 4096,
				KeepAliveInterval: 50 * time.Millisecond},
			args: []string{"--allowed-origins", "https://app.example.com"},
		})
		p := s.createProject(t, s.AdminToken, "proto")
		bearer := M{"Authorization": "Bearer " + s.AdminToken}

		t.Run("bad token: 4403 and nothing runs", func(t *testing.T) {
			for _, payload := range []M{{"Authorization": "Bearer nope"}, {"token": "nope"}, {}, nil} {
				r := s.mustDialRaw(t)
				r.send(M{"type": "connection_init", "payload": payload})
				r.send(r.subscribeMsg("1", p))
				code, _ := r.closeCode("connection_ack", "next")
				require.Equal(t, server.CloseForbidden, code, "payload %v", payload)
			}
			// The subscription sent behind the bad init never ran.
			require.Equal(t, float64(0), s.metric(t, "taskgraph_websocket_operations"))
		})
		t.Run("token key", func(t *testing.T) {
			r := s.mustDialRaw(t)
			r.init(M{"token": s.AdminToken})
		})
		t.Run("init timeout: 4408", func(t *testing.T) {
			r := s.mustDialRaw(t)
			code, _ := r.closeCode()
			require.Equal(t, server.CloseInitTimeout, code)
		})
		t.Run("duplicate id: 4409", func(t *testing.T) {
			r := s.mustDialRaw(t)
			r.init(bearer)
			r.send(r.subscribeMsg("a", p))
			r.send(r.subscribeMsg("a", p))
			code, reason := r.closeCode()
			require.Equal(t, server.CloseSubscriberExists, code)
			require.Equal(t, "Subscriber for a already exists", reason)
		})
		t.Run("an id may be reused once complete", func(t *testing.T) {
			r := s.mustDialRaw(t)
			r.init(bearer)
			r.send(r.subscribeMsg("a", p))
			r.send(M{"type": "complete", "id": "a"})
			for { // the server confirms the end
				m, err := r.read()
				require.NoError(t, err)
				if m["type"] == "complete" {
					break
				}
			}
			r.send(r.subscribeMsg("a", p))
			r.send(M{"type": "ping"})
			m, err := r.read()
			require.NoError(t, err)
			require.Equal(t, "pong", m["type"])
		})
		t.Run("subscription cap: 4429", func(t *testing.T) {
			r := s.mustDialRaw(t)
			r.init(bearer)
			for i := 1; i <= 4; i++ {
				r.send(r.subscribeMsg(fmt.Sprint(i), p))
			}
			code, reason := r.closeCode()
			require.Equal(t, server.CloseTooMany, code)
			require.Contains(t, reason, "Too many subscriptions")
		})
		t.Run("second init: 4429", func(t *testing.T) {
			r := s.mustDialRaw(t)
			r.init(bearer)
			r.send(M{"type": "connection_init", "payload": bearer})
			code, _ := r.closeCode()
			require.Equal(t, server.CloseTooMany, code)
		})
		t.Run("subscribe before init: 4401", func(t *testing.T) {
			r := s.mustDialRaw(t)
			r.send(r.subscribeMsg("1", p))
			code, _ := r.closeCode("next")
			require.Equal(t, server.CloseUnauthorized, code)
		})
		t.Run("invalid message: 4400", func(t *testing.T) {
			r := s.mustDialRaw(t)
			r.init(bearer)
			require.NoError(t, r.ws.WriteMessage(websocket.TextMessage, []byte("{not json")))
			code, _ := r.closeCode()
			require.Equal(t, server.CloseBadRequest, code)
		})
		t.Run("read limit", func(t *testing.T) {
			r := s.mustDialRaw(t)
			r.init(bearer)
			r.send(M{"type": "ping", "payload": M{"pad": strings.Repeat("x", 5000)}})
			code, _ := r.closeCode()
			require.Equal(t, websocket.CloseMessageTooBig, code)
		})
		t.Run("legacy graphql-ws", func(t *testing.T) {
			r := s.mustDialRaw(t, "graphql-ws")
			require.Equal(t, "graphql-ws", r.ws.Subprotocol())
			r.init(bearer)
			r.send(M{"type": "start", "id": "1", "payload": M{"query": subscribeEvents, "variables": M{"p": p, "after": s.eventCursor(t, s.AdminToken, p)}}})
			s.createTask(t, s.AdminToken, p, "legacy", nil)
			for {
				m, err := r.read()
				require.NoError(t, err)
				if m["type"] == "ka" {
					continue
				}
				require.Equal(t, "data", m["type"], "%v", m)
				require.Equal(t, "legacy", m["payload"].(map[string]any)["data"].(map[string]any)["projectEvents"].(map[string]any)["title"])
				break
			}
			r.send(M{"type": "stop", "id": "1"})
			for {
				m, err := r.read()
				require.NoError(t, err)
				if m["type"] == "complete" {
					break
				}
			}
		})
		t.Run("both offered: graphql-transport-ws", func(t *testing.T) {
			r := s.mustDialRaw(t, "graphql-ws", "graphql-transport-ws")
			require.Equal(t, "graphql-transport-ws", r.ws.Subprotocol())
		})
		t.Run("origins", func(t *testing.T) {
			host := strings.TrimPrefix(s.URL, "http://")
			for _, tc := range []struct {
				origin string
				ok     bool
			}{
				{"", true},
				{"http://" + host, true},
				{"https://app.example.com", true},
				{"https://evil.example.com", false},
				{"null", false},
			} {
				h := http.Header{}
				if tc.origin != "" {
					h.Set("Origin", tc.origin)
				}
				_, resp, err := s.dialRaw(t, h)
				if tc.ok {
					require.NoError(t, err, tc.origin)
					continue
				}
				require.Error(t, err, tc.origin)
				require.Equal(t, http.StatusForbidden, resp.StatusCode, tc.origin)
			}
		})
	})
}

// TestDeadPeer: a peer that stops answering pings is dropped, and everything
// it held is released; a peer that answers stays.
func TestDeadPeer(t *testing.T) {
	testdb.Run(t, func(t *testing.T, url string) {
		s, _ := startServerWith(t, url, serverOptions{
			websocket: server.WebsocketConfig{PingInterval: 30 * time.Millisecond, PongTimeout: 150 * time.Millisecond},
		})
		p := s.createProject(t, s.AdminToken, "dead")
		// A live client answers pings while it reads; it outlives many of them.
		live := s.dial(t, s.AdminToken)
		liveSub := subscribeOn(t, live, p, s.eventCursor(t, s.AdminToken, p))

		dead := s.mustDialRaw(t)
		pings := 0
		dead.ws.SetPingHandler(func(string) error { pings++; return nil }) // never pongs
		dead.init(M{"Authorization": "Bearer " + s.AdminToken})
		dead.send(dead.subscribeMsg("1", p))
		_, err := dead.read() // the server gives up on it
		require.Error(t, err)
		require.Positive(t, pings)
		eventually(t, "the dead peer's connection released", func() bool {
			return s.metric(t, "taskgraph_websocket_connections") == 1 && s.metric(t, "taskgraph_websocket_operations") == 1
		})
		s.createTask(t, s.AdminToken, p, "still here", nil)
		require.Equal(t, "still here", nextEvent(t, liveSub).Title)
		require.NoError(t, live.Err())
	})
}

// TestServerShutdownClosesWith1001: a server going away tells its websocket
// clients so (1001), and they resume elsewhere from their cursor.
func TestServerShutdownClosesWith1001(t *testing.T) {
	t.Parallel()
	testdb.Run(t, func(t *testing.T, url string) {
		s, stop := startServerWith(t, url, serverOptions{})
		p := s.createProject(t, s.AdminToken, "bye")
		sub := s.subscribe(t, s.AdminToken, p, s.eventCursor(t, s.AdminToken, p))
		s.createTask(t, s.AdminToken, p, "running", nil)
		require.Equal(t, "running", nextEvent(t, sub).Title)
		stop()
		_, err := tryNextEvent(sub)
		var ce *client.CloseError
		require.ErrorAs(t, err, &ce)
		require.Equal(t, websocket.CloseGoingAway, ce.Code)
	})
}

// TestWatch runs `taskgraph watch`: it prints events as they commit, keeps
// going across a server restart, and resumes from the last event printed.
func TestWatch(t *testing.T) {
	t.Parallel()
	testdb.Run(t, func(t *testing.T, url string) {
		s1, stop1 := startServerWith(t, url, serverOptions{})
		p := s1.createProject(t, s1.AdminToken, "watched")
		s1.createTask(t, s1.AdminToken, p, "before watching", nil)

		out := &syncBuffer{}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			done <- run(ctx, []string{"watch", "--project", "watched", "--url", s1.URL, "--token", s1.AdminToken}, out, io.Discard)
		}()
		t.Cleanup(func() {
			cancel()
			require.NoError(t, <-done)
		})
		// watch starts from now: make events until it shows one.
		a := s1.createTask(t, s1.AdminToken, p, "one", nil)
		eventually(t, "watch subscribed", func() bool {
			if len(out.lines()) > 0 {
				return true
			}
			s1.query(t, s1.AdminToken, `mutation($id: ID!) { updateTask(input: {id: $id, priority: P2}) { task { id } } }`, M{"id": a})
			return false
		})
		// A marker: what follows it is exactly what happens next.
		s1.transition(t, s1.AdminToken, a, "PENDING")
		marker := -1
		eventually(t, "the marker", func() bool {
			for i, l := range out.lines() {
				if strings.Contains(l, "DRAFT -> PENDING") {
					marker = i
					return true
				}
			}
			return false
		})
		got := out.lines()
		require.Regexp(t, `^\S+Z  TASK_STATUS_CHANGED\s+TU-WATCHED-TSK-002\s+DRAFT -> PENDING \(test\)$`, got[marker])
		require.NotContains(t, strings.Join(got, "\n"), "before watching")

		// The server goes away; another takes its address and the writes,
		// some of them before watch is back.
		stop1()
		s2, _ := startServerWith(t, url, serverOptions{args: []string{"--addr", strings.TrimPrefix(s1.URL, "http://")}})
		s2.createTask(t, s2.AdminToken, p, "while away", nil)
		s2.transition(t, s2.AdminToken, a, "IN_PROGRESS")
		s2.createTask(t, s2.AdminToken, p, "final", nil)
		eventually(t, "the final event", func() bool { return strings.Contains(strings.Join(out.lines(), "\n"), `"final"`) })
		got = out.lines()[marker+1:]
		require.Len(t, got, 3, "each event once: %q", got)
		require.Contains(t, got[0], `TASK_CREATED         TU-WATCHED-TSK-003     "while away" DRAFT`)
		require.Contains(t, got[1], "PENDING -> IN_PROGRESS")
		require.Contains(t, got[2], `"final"`)
	})
}

// TestWatchJSONAndTypes: --json prints one object per event; --types and
// --after select them; a bad token stops watch instead of retrying.
func TestWatchJSONAndTypes(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		p := s.createProject(t, s.AdminToken, "json")
		start := s.eventCursor(t, s.AdminToken, p)
		a := s.createTask(t, s.AdminToken, p, "a", nil)
		s.transition(t, s.AdminToken, a, "PENDING")
		out := &syncBuffer{}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			done <- run(ctx, []string{"watch", "--project", "json", "--url", s.URL, "--token", s.AdminToken, "--json",
				"--types", "task_status_changed", "--after", start}, out, io.Discard)
		}()
		eventually(t, "a line", func() bool { return len(out.lines()) > 0 })
		cancel()
		require.NoError(t, <-done)
		line := out.lines()[0]
		require.Contains(t, line, `"type":"TASK_STATUS_CHANGED"`)
		require.Contains(t, line, `"from":"DRAFT","to":"PENDING"`)
		require.Len(t, out.lines(), 1)

		err := run(context.Background(), []string{"watch", "--project", "json", "--url", s.URL, "--token", "wrong"}, io.Discard, io.Discard)
		require.Error(t, err)
		var es client.Errors
		require.True(t, errors.As(err, &es) && es.Code() == "UNAUTHENTICATED", "%v", err)
	})
}

// syncBuffer collects output written from another goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) lines() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := strings.TrimSpace(b.b.String())
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// readUntilTooSlow reads a slow projectEvents subscriber's backlog up to the
// error that ends it: LIMIT_EXCEEDED, naming the cursor of the last event it
// was delivered and telling it to resubscribe. It returns how many events
// came before, that cursor, and the error's extensions.
func readUntilTooSlow(t *testing.T, slow *rawWS) (received int, last string, ext map[string]any) {
	t.Helper()
	for {
		m, err := slow.read()
		require.NoError(t, err)
		if m["type"] == "next" {
			received++
			last = m["payload"].(map[string]any)["data"].(map[string]any)["projectEvents"].(map[string]any)["cursor"].(string)
			continue
		}
		require.Equal(t, "error", m["type"], "%v", m)
		errs := m["payload"].([]any)
		ext = errs[0].(map[string]any)["extensions"].(map[string]any)
		require.Equal(t, "LIMIT_EXCEEDED", ext["code"])
		require.Equal(t, last, ext["cursor"], "the error names the last cursor delivered")
		require.Contains(t, errs[0].(map[string]any)["message"], "resubscribe")
		return received, last, ext
	}
}
