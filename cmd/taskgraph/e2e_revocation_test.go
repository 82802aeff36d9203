package main

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/server"
	"github.com/taskgraph/taskgraph/internal/testdb"
)

// TestRevokedTokenEndsItsSockets: revoking a token closes the websockets
// opened with it (4403), with their running subscriptions, on every replica:
// on PostgreSQL the socket is on a second server process and the token is
// revoked through the first.
func TestRevokedTokenEndsItsSockets(t *testing.T) {
	t.Parallel()
	testdb.Run(t, func(t *testing.T, url string) {
		first := startServer(t, url)
		second := first
		if strings.HasPrefix(url, "postgres") {
			second = startServer(t, url)
		}
		user, _ := first.member(t, "holder")
		tokenID, token := first.tokenFor(t, user, "MEMBER", "")
		project := first.createProject(t, token, "revoked")

		r := second.mustDialRaw(t)
		r.init(M{"Authorization": "Bearer " + token})
		after := first.eventCursor(t, token, project)
		r.send(M{"type": "subscribe", "id": "1", "payload": M{"query": subscribeEvents, "variables": M{"p": project, "after": after}}})
		first.createTask(t, token, project, "seen", nil)
		m, err := r.read()
		require.NoError(t, err)
		require.Equal(t, "next", m["type"], "the subscription runs: %v", m)

		first.query(t, first.AdminToken, `mutation($id: ID!) { revokeApiToken(input: {id: $id}) { apiToken { id } } }`, M{"id": tokenID})
		code, reason := r.closeCode()
		require.Equal(t, server.CloseForbidden, code)
		require.Contains(t, reason, "revoked")
	})
}

// TestRevokedTokenStartsNoOperation: an operation sent on an open socket
// after its token was revoked does not run — it is refused UNAUTHENTICATED
// and the socket closes with 4403 — even before the periodic check would
// have closed the socket.
func TestRevokedTokenStartsNoOperation(t *testing.T) {
	t.Parallel()
	testdb.Run(t, func(t *testing.T, url string) {
		s, _ := startServerWith(t, url, serverOptions{websocket: server.WebsocketConfig{TokenCheckInterval: time.Hour}})
		user, _ := s.member(t, "holder")
		tokenID, token := s.tokenFor(t, user, "MEMBER", "")
		r := s.mustDialRaw(t)
		r.init(M{"token": token})
		s.query(t, s.AdminToken, `mutation($id: ID!) { revokeApiToken(input: {id: $id}) { apiToken { id } } }`, M{"id": tokenID})
		r.send(M{"type": "subscribe", "id": "q", "payload": M{"query": `mutation { createProject(input: {name: "x", slug: "after-revoke"}) { project { id } } }`}})
		m, err := r.read()
		require.NoError(t, err)
		require.Equal(t, "next", m["type"], "%v", m)
		payload := m["payload"].(map[string]any)
		require.Nil(t, payload["data"])
		e := payload["errors"].([]any)[0].(map[string]any)
		require.Contains(t, e["message"], "revoked")
		require.Equal(t, "UNAUTHENTICATED", e["extensions"].(map[string]any)["code"])
		code, _ := r.closeCode()
		require.Equal(t, server.CloseForbidden, code)
		require.True(t, s.query(t, s.AdminToken, `{ project(slug: "after-revoke") { id } }`, nil).Null("project"),
			"the mutation did not run")
	})
}
