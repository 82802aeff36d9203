package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/server"
	"github.com/taskgraph/taskgraph/internal/testdb"
)

// TestWebsocketCapsPerUser: one token cannot hold more than
// --max-ws-connections-per-user websockets (connection_init closed 4429) nor
// run more than --max-subscriptions-per-user operations over all of them (the
// operation answered LIMIT_EXCEEDED, the connection going on); another
// tenant is unaffected, and closing connections or completing subscriptions
// frees the count.
func TestWebsocketCapsPerUser(t *testing.T) {
	t.Parallel()
	testdb.Run(t, func(t *testing.T, url string) {
		s := startServer(t, url, "--max-ws-connections-per-user", "3", "--max-subscriptions-per-user", "4")
		_, tokA := s.member(t, "caps-a")
		_, tokB := s.member(t, "caps-b")
		pA := s.createProject(t, tokA, "caps-a")
		pB := s.createProject(t, tokB, "caps-b")
		bearerA := M{"Authorization": "Bearer " + tokA}
		bearerB := M{"Authorization": "Bearer " + tokB}
		refusedConns := `taskgraph_websocket_refusals_total{reason="connections_per_user"}`
		refusedOps := `taskgraph_websocket_refusals_total{reason="operations_per_user"}`

		// A holds its three connections; the fourth is refused with 4429.
		a := make([]*rawWS, 3)
		for i := range a {
			a[i] = s.mustDialRaw(t)
			a[i].init(bearerA)
		}
		over := s.mustDialRaw(t)
		over.send(M{"type": "connection_init", "payload": bearerA})
		over.send(over.subscribeMsg("1", pA))
		code, reason := over.closeCode("connection_ack", "next")
		require.Equal(t, server.CloseTooMany, code)
		require.Contains(t, reason, "Too many connections: at most 3")
		require.Equal(t, float64(1), s.counter(t, refusedConns))

		// B is another tenant: its connection and subscription work.
		b := s.mustDialRaw(t)
		b.init(bearerB)
		b.send(b.subscribeMsg("b1", pB))
		requireAccepted(t, b)
		requireLive(t, s, b, tokB, pB, "b1")

		// A runs four subscriptions over two connections; the fifth, on a
		// third connection, is refused alone: an error for its id.
		a[0].send(a[0].subscribeMsg("s1", pA))
		a[0].send(a[0].subscribeMsg("s2", pA))
		requireAccepted(t, a[0])
		a[1].send(a[1].subscribeMsg("s3", pA))
		a[1].send(a[1].subscribeMsg("s4", pA))
		requireAccepted(t, a[1])
		a[2].send(a[2].subscribeMsg("s5", pA))
		requireRefused(t, a[2], "s5")
		require.Equal(t, float64(1), s.counter(t, refusedOps))
		requireAccepted(t, a[2]) // the connection goes on

		// B still subscribes while A is at its cap.
		b.send(b.subscribeMsg("b2", pB))
		requireAccepted(t, b)

		// Completing a subscription frees its place.
		a[0].send(M{"type": "complete", "id": "s1"})
		for {
			m, err := a[0].read()
			require.NoError(t, err)
			if m["type"] == "complete" && m["id"] == "s1" {
				break
			}
		}
		a[2].send(a[2].subscribeMsg("s5", pA))
		requireAccepted(t, a[2])
		requireLive(t, s, a[2], tokA, pA, "s5")

		// Closing a connection frees it and its subscriptions (s3, s4).
		require.NoError(t, a[1].ws.WriteMessage(websocket.CloseMessage,
			websocket.FormatCloseMessage(websocket.CloseNormalClosure, "")))
		_, _ = a[1].closeCode()
		eventually(t, "A's closed connection is released", func() bool {
			r := s.mustDialRaw(t)
			r.send(M{"type": "connection_init", "payload": bearerA})
			m, err := r.read()
			if err != nil {
				return false // still refused: 4429
			}
			require.Equal(t, "connection_ack", m["type"])
			a[1] = r
			return true
		})
		a[1].send(a[1].subscribeMsg("s6", pA))
		a[1].send(a[1].subscribeMsg("s7", pA))
		requireAccepted(t, a[1])
		a[1].send(a[1].subscribeMsg("s8", pA))
		requireRefused(t, a[1], "s8")
	})
}

// requireAccepted checks, with a ping, that the server answered nothing but
// its pong to what was sent before: no error, no close. Events of the
// subscriptions already running may come first.
func requireAccepted(t *testing.T, r *rawWS) {
	t.Helper()
	r.send(M{"type": "ping"})
	for {
		m, err := r.read()
		require.NoError(t, err)
		if m["type"] != "next" {
			require.Equal(t, "pong", m["type"], "got %v", m)
			return
		}
	}
}

// requireRefused reads the error message that refuses operation id.
func requireRefused(t *testing.T, r *rawWS, id string) {
	t.Helper()
	m, err := r.read()
	require.NoError(t, err)
	require.Equal(t, "error", m["type"], "got %v", m)
	require.Equal(t, id, m["id"])
	errs, ok := m["payload"].([]any)
	require.True(t, ok, "payload %v", m["payload"])
	require.Len(t, errs, 1)
	e := errs[0].(map[string]any)
	require.Contains(t, e["message"], "too many subscriptions: at most 4")
	require.Equal(t, "LIMIT_EXCEEDED", e["extensions"].(map[string]any)["code"])
}

// requireLive creates tasks in project p with token, one every 50 ms, until
// subscription id on r receives the event of one. A subscription streaming
// from now on starts once its execution has joined the stream, which can
// come after the pong that requireAccepted reads (the shared subscriptions'
// tests warm up the same way). No task is created after it returns; events
// of the tasks created before may still arrive.
func requireLive(t *testing.T, s *testServer, r *rawWS, token, p, id string) {
	t.Helper()
	prefix := fmt.Sprintf("live %s ", id)
	stop := make(chan struct{})
	var producer sync.WaitGroup
	defer producer.Wait()
	defer close(stop)
	producer.Go(func() {
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for i := range 1000 {
			_, _ = s.post(token, `mutation($in: CreateTaskInput!) { createTask(input: $in) { task { id } } }`,
				M{"in": M{"projectId": p, "title": fmt.Sprint(prefix, i)}})
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	})
	for {
		m, err := r.read()
		require.NoError(t, err)
		require.NotEqual(t, "error", m["type"], "got %v", m)
		if m["type"] != "next" || m["id"] != id {
			continue
		}
		var ev struct {
			Data struct{ ProjectEvents struct{ Title string } }
		}
		b, err := json.Marshal(m["payload"])
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(b, &ev))
		require.True(t, strings.HasPrefix(ev.Data.ProjectEvents.Title, prefix), "an event of another task: %v", m)
		return
	}
}

// TestWebsocketCapsPerJWTUser: JWTs have no token id, so the caps count a
// signed-in user's websockets over all the ID tokens the provider issues it.
func TestWebsocketCapsPerJWTUser(t *testing.T) {
	t.Parallel()
	p := startOIDCProvider(t)
	testdb.Run(t, func(t *testing.T, url string) {
		s := startServer(t, url, "--oidc-issuer", p.Issuer, "--oidc-client-id", p.ClientID,
			"--max-ws-connections-per-user", "2")
		for range 2 {
			r := s.mustDialRaw(t)
			r.init(M{"Authorization": "Bearer " + p.signIn(t, "lin")}) // a new ID token each time
		}
		over := s.mustDialRaw(t)
		over.send(M{"type": "connection_init", "payload": M{"Authorization": "Bearer " + p.signIn(t, "lin")}})
		code, _ := over.closeCode("connection_ack")
		require.Equal(t, server.CloseTooMany, code)

		// Another user of the same provider has a count of its own.
		other := s.mustDialRaw(t)
		other.init(M{"Authorization": "Bearer " + p.signIn(t, "mo")})
	})
}
