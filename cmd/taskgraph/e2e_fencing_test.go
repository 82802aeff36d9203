package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/testdb"
)

// TestAgentCallsFencedByClaimer: an agent's calls are taken only from the
// token that claimed it (or an admin). A second AGENT token of the same
// project gets LEASE_LOST for each call and changes nothing.
func TestAgentCallsFencedByClaimer(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		e := newExecList(t, s, 3)
		e.add(t, "T1", M{"codebaseTests": []string{"go test"}})
		run := e.start(t)
		agent := e.claim(t, run).S("agent.id")
		_, other := s.userWithToken(t, fmt.Sprintf("second%04d", planSlugs.Add(1)), "AGENT", e.project)

		calls := []struct {
			name  string
			query string
			in    M
		}{
			{"heartbeat", `mutation($in: HeartbeatInput!) { heartbeat(input: $in) { directive } }`, M{"agentId": agent, "progressPercent": 90}},
			{"log", `mutation($in: AppendExecutionLogInput!) { appendExecutionLog(input: $in) { execution { id } } }`, M{"agentId": agent, "lines": []string{"x"}}},
			{"test result", `mutation($in: RecordTestResultInput!) { recordTestResult(input: $in) { testResult { id } } }`,
				M{"agentId": agent, "level": "CODEBASE", "testIndex": 0, "testName": "go test", "status": "PASSED"}},
			{"complete", completeMutation, M{"agentId": agent, "filesModified": []string{}}},
			{"fail", failMutation, M{"agentId": agent, "error": "no", "retryable": false}},
		}
		for _, c := range calls {
			s.requireCode(t, other, c.query, M{"in": c.in}, "LEASE_LOST")
		}
		a := s.query(t, e.token, `query($id: ID!) { node(id: $id) { ... on BuildAgent { status heartbeatCount progressPercent
			execution { logLines testResults { id } } } } }`, M{"id": agent}).at("node")
		require.Equal(t, "RUNNING", a.S("status"))
		require.Zero(t, a.N("heartbeatCount"))
		require.Zero(t, a.N("execution.logLines"))
		require.Empty(t, a.L("execution.testResults"))

		// The claimer, and an admin, are heard.
		s.query(t, e.agent, calls[0].query, M{"in": calls[0].in})
		s.query(t, e.token, calls[1].query, M{"in": calls[1].in})
	})
}

// TestExamplesFencedByClaimer: a claimed example is completed or failed by
// its claimer (or an admin) only.
func TestExamplesFencedByClaimer(t *testing.T) {
	t.Parallel()
	eachCatalogDB(t, func(t *testing.T, s *catalogServer) {
		admin := s.AdminToken
		suite := s.createSuite(t, admin, "Mail")
		server := s.createMcpServer(t, admin, "mail-tools")
		action, _ := s.createAction(t, admin, suite, "send")
		tool, _ := s.createTool(t, admin, server, "messages_send")
		m := s.createMap(t, admin, suite, server)
		s.addMapping(t, admin, m, action, tool)
		model := s.createModel(t, admin, "ANTHROPIC", "claude")
		session := s.createSession(t, admin, suite)
		require.Empty(t, s.uploadTrace(t, admin, session, "{\"type\": \"click\"}\n").Errors)
		_, alice := s.member(t, "alice")
		_, bob := s.member(t, "bob")

		e := s.createExample(t, admin, session, model, m)
		s.claim(t, alice, e)
		require.Equal(t, "LEASE_LOST", s.completeExample(t, bob, e, messagesJSONL("messages_send")).code())
		s.requireCode(t, bob, `mutation($in: FailExampleInput!) { failExample(input: $in) { example { id } } }`,
			M{"in": M{"id": e, "reason": "mine now"}}, "LEASE_LOST")
		require.Empty(t, s.completeExample(t, alice, e, messagesJSONL("messages_send")).Errors)

		e2 := s.createExample(t, admin, session, model, m)
		s.claim(t, alice, e2)
		s.query(t, admin, `mutation($in: FailExampleInput!) { failExample(input: $in) { example { id } } }`,
			M{"in": M{"id": e2, "reason": "an admin may"}})
	})
}

// TestUploadVisibleOnlyAfterCommit: an upload whose transaction fails at
// COMMIT leaves the stored file as it was. PostgreSQL only: a deferred
// constraint trigger fails the commit itself, which SQLite cannot do.
func TestUploadVisibleOnlyAfterCommit(t *testing.T) {
	t.Parallel()
	s := startCatalogServer(t, testdb.Postgres(t))
	admin := s.AdminToken
	suite := s.createSuite(t, admin, "Mail")
	session := s.createSession(t, admin, suite)
	first := "{\"n\": 1}\n"
	require.Empty(t, s.uploadTrace(t, admin, session, first).Errors)
	for _, stmt := range []string{
		`CREATE FUNCTION refuse_upload() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused at commit'; END $$`,
		`CREATE CONSTRAINT TRIGGER refuse_upload AFTER UPDATE ON trace_sessions DEFERRABLE INITIALLY DEFERRED
			FOR EACH ROW EXECUTE FUNCTION refuse_upload()`,
	} {
		_, err := s.DB.SQL().ExecContext(context.Background(), stmt)
		require.NoError(t, err)
	}
	r := s.uploadTrace(t, admin, session, "{\"n\": 2}\n{\"n\": 3}\n")
	require.Equal(t, "INTERNAL", r.code(), "the commit failed")
	files := filesUnder(t, s.DataDir)
	var stored []string
	for _, f := range files {
		if filepath.Ext(f) == ".jsonl" {
			stored = append(stored, f)
		}
	}
	require.Len(t, stored, 1, "no other file left behind: %v", files)
	got, err := os.ReadFile(filepath.Join(s.DataDir, stored[0]))
	require.NoError(t, err)
	require.Equal(t, first, string(got), "the file still matches the committed row")
}
