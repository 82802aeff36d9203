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
		require.Equal(t, "SPAWNING", a.S("status")) // it never heartbeated
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

// TestRunOwnsItsTasks: while a task's place in an unfinished run is open, a
// person cannot move it by hand (INVALID_TRANSITION naming the run) — not a
// PENDING task of a wave, not an agent's IN_PROGRESS task — so no run is left
// waiting on a task moved past its agent; the run still completes through its
// agent, and once the run is over the task moves by hand again.
func TestRunOwnsItsTasks(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		e := newExecList(t, s, 1)
		t1 := e.add(t, "T1", nil)
		t2 := e.add(t, "T2", nil)
		run := e.start(t)
		move := `mutation($id: ID!, $to: TaskStatus!) { transitionTask(input: {id: $id, to: $to}) { task { status } } }`
		r := s.requireCode(t, e.token, move, M{"id": t2, "to": "BLOCKED"}, "INVALID_TRANSITION")
		require.Contains(t, r.Errors[0].Message, "execution run 1")
		require.Equal(t, "PENDING", r.ext("from"))
		s.requireCode(t, e.token, move, M{"id": t1, "to": "IN_PROGRESS"}, "INVALID_TRANSITION")

		c := e.claim(t, run)
		held := c.S("task.id")
		for _, to := range []string{"VALIDATING", "BLOCKED"} {
			s.requireCode(t, e.token, move, M{"id": held, "to": to}, "INVALID_TRANSITION")
		}
		e.complete(t, c.S("agent.id"))
		c = e.claim(t, run)
		e.complete(t, c.S("agent.id"))
		require.Equal(t, "COMPLETED", e.run(t, run).S("status"), "the run finished through its agents")

		// A new run, cancelled: its tasks are people's again.
		t3 := e.add(t, "T3", nil)
		run2 := e.start(t)
		s.requireCode(t, e.token, move, M{"id": t3, "to": "BLOCKED"}, "INVALID_TRANSITION")
		s.query(t, e.token, `mutation($in: RunActionInput!) { cancelExecutionRun(input: $in) { run { id } } }`, M{"in": M{"runId": run2}})
		require.Equal(t, "BLOCKED", s.query(t, e.token, move, M{"id": t3, "to": "BLOCKED"}).S("transitionTask.task.status"))
	})
}

// TestCompleteTaskInputs: completeTask answers the same on both databases
// for what an agent may send wrong: too many files (SQLite once failed with
// "too many SQL variables" where PostgreSQL took 40,000), a negative effort
// (which updateTask already refused); nothing is changed, and the agent can
// still complete with good input.
func TestCompleteTaskInputs(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		e := newExecList(t, s, 1)
		e.add(t, "T1", M{"fileImpacts": []M{{"filePath": "a.go", "operation": "UPDATE"}, {"filePath": "b.go", "operation": "CREATE"}}})
		run := e.start(t)
		agent := e.claim(t, run).S("agent.id")
		many := make([]string, 40_000)
		for i := range many {
			many[i] = fmt.Sprintf("src/f%05d.go", i)
		}
		r := s.requireCode(t, e.agent, completeMutation, M{"in": M{"agentId": agent, "filesModified": many}}, "BAD_USER_INPUT")
		require.Equal(t, "filesModified", r.ext("field"))
		r = s.requireCode(t, e.agent, completeMutation, M{"in": M{"agentId": agent, "filesModified": []string{}, "actualEffortMinutes": -5}}, "BAD_USER_INPUT")
		require.Equal(t, "actualEffortMinutes", r.ext("field"))
		require.Equal(t, "IN_PROGRESS", s.query(t, e.token, `query($id: ID!) { node(id: $id) { ... on BuildAgent { task { status } } } }`,
			M{"id": agent}).S("node.task.status"))
		done := e.complete(t, agent, "a.go")
		require.Equal(t, "COMPLETED", done.S("task.status"))
		impacts := s.query(t, e.token, `query($id: ID!) { node(id: $id) { ... on BuildAgent { task { fileImpacts { filePath wasAccurate } } } } }`,
			M{"id": agent}).L("node.task.fileImpacts")
		got := map[string]bool{}
		for _, fi := range impacts {
			got[fi.S("filePath")] = fi.B("wasAccurate")
		}
		require.Equal(t, map[string]bool{"a.go": true, "b.go": false}, got)
	})
}
