package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The reads that reach agent sessions from a task or a run, and a
// session's lessons, end to end on every test database.

// TestSessionsByTaskAndRun: agentSessions(taskId:, runId:) keeps the
// sessions of a task (opened with its id or for its agent) or of a run
// (opened for one of its agents), with the status filter and paging; a
// task or run of another project, an id of another kind or an unknown id is
// NOT_FOUND on the argument, a malformed id BAD_USER_INPUT, and a project
// the token cannot see NOT_FOUND on projectId.
func TestSessionsByTaskAndRun(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		e := newExecList(t, s, 2)
		e.add(t, "A", nil)
		e.add(t, "B", nil)
		run := e.start(t)
		c := e.claim(t, run)
		agent, task := c.S("agent.id"), c.S("task.id")
		other := e.ids["A"]
		if other == task {
			other = e.ids["B"]
		}
		open := func(in M) string {
			in["projectId"], in["mission"] = e.project, "m"
			return s.query(t, e.agent, createSessionMutation, M{"in": in}).S("createAgentSession.session.id")
		}
		ofAgent := open(M{"agentId": agent})
		ofTask := open(M{"taskId": task})
		ofOther := open(M{"taskId": other})
		loose := open(M{})
		s.query(t, e.agent, `mutation($in: SetAgentSessionStatusInput!) { setAgentSessionStatus(input: $in) { session { id } } }`,
			M{"in": M{"id": ofTask, "status": "IN_PROGRESS"}})
		foreign := newExecList(t, s, 1)
		foreignTask := foreign.add(t, "F", nil)
		foreignRun := foreign.start(t)

		q := `query($p: ID!, $task: ID, $run: ID, $status: [AgentSessionStatus!], $first: Int, $after: String) {
			agentSessions(projectId: $p, taskId: $task, runId: $run, status: $status, first: $first, after: $after) {
				totalCount nodes { id task { id } agent { id } } pageInfo { hasNextPage endCursor } } }`
		ids := func(vars M) ([]string, int) {
			t.Helper()
			vars["p"] = e.project
			d := s.query(t, e.token, q, vars).at("agentSessions")
			return d.Col("nodes", "id"), d.N("totalCount")
		}
		got, total := ids(M{"task": task})
		require.Equal(t, []string{ofTask, ofAgent}, got, "newest first")
		require.Equal(t, 2, total)
		got, _ = ids(M{"run": run})
		require.Equal(t, []string{ofAgent}, got)
		got, _ = ids(M{"task": task, "run": run})
		require.Equal(t, []string{ofAgent}, got)
		got, _ = ids(M{"task": other, "run": run})
		require.Empty(t, got)
		got, _ = ids(M{"task": other})
		require.Equal(t, []string{ofOther}, got)
		got, _ = ids(M{"task": task, "status": []string{"IN_PROGRESS"}})
		require.Equal(t, []string{ofTask}, got)
		got, total = ids(M{})
		require.Equal(t, []string{loose, ofOther, ofTask, ofAgent}, got)
		require.Equal(t, 4, total)

		// Paging within the filter.
		d := s.query(t, e.token, q, M{"p": e.project, "task": task, "first": 1}).at("agentSessions")
		require.True(t, d.B("pageInfo.hasNextPage"))
		got, _ = ids(M{"task": task, "first": 1, "after": d.S("pageInfo.endCursor")})
		require.Equal(t, []string{ofAgent}, got)

		for _, c := range []struct {
			vars        M
			code, field string
		}{
			{M{"task": foreignTask}, "NOT_FOUND", "taskId"},
			{M{"run": foreignRun}, "NOT_FOUND", "runId"},
			{M{"task": run}, "NOT_FOUND", "taskId"},
			{M{"run": task}, "NOT_FOUND", "runId"},
			{M{"run": missingID("ExecutionRun")}, "NOT_FOUND", "runId"},
			{M{"task": missingID("Task")}, "NOT_FOUND", "taskId"},
			{M{"task": "nope"}, "BAD_USER_INPUT", "taskId"},
			{M{"status": []string{"PENDING", "PENDING", "FAILED", "FAILED", "COMPLETED"}}, "BAD_USER_INPUT", "status"},
		} {
			c.vars["p"] = e.project
			resp := s.requireCode(t, e.token, q, c.vars, c.code)
			require.Equal(t, c.field, resp.ext("field"), "%v: %+v", c.vars, resp.Errors)
		}
		// The other project's agent token sees neither the project nor its sessions.
		resp := s.requireCode(t, foreign.agent, q, M{"p": e.project, "run": run}, "NOT_FOUND")
		require.Equal(t, "projectId", resp.ext("field"))
	})
}

// TestSessionLessons: AgentSession.lessons pages the lessons recorded in the
// session, oldest first, with a total.
func TestSessionLessons(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		f := newSessionFixture(t, s, nil)
		other := newSessionFixture(t, s, nil)
		for _, text := range []string{"first", "second", "third"} {
			s.query(t, f.agent, recordLessonMutation, M{"in": M{"sessionId": f.session, "context": "billing", "whatWorked": "small steps",
				"lesson": text, "confidence": 0.6}})
		}
		s.query(t, other.agent, recordLessonMutation, M{"in": M{"sessionId": other.session, "context": "billing",
			"whatWorked": "small steps", "lesson": "not this session's", "confidence": 0.9}})
		q := `query($id: ID!, $after: String) { agentSession(id: $id) { lessons(first: 2, after: $after) {
			totalCount nodes { lesson session { id } } pageInfo { hasNextPage endCursor } } } }`
		d := s.query(t, f.agent, q, M{"id": f.session}).at("agentSession.lessons")
		require.Equal(t, 3, d.N("totalCount"))
		require.Equal(t, []string{"first", "second"}, d.Col("nodes", "lesson"), "oldest first")
		require.Equal(t, f.session, d.S("nodes.0.session.id"))
		require.True(t, d.B("pageInfo.hasNextPage"))
		d = s.query(t, f.agent, q, M{"id": f.session, "after": d.S("pageInfo.endCursor")}).at("agentSession.lessons")
		require.Equal(t, []string{"third"}, d.Col("nodes", "lesson"))
		require.False(t, d.B("pageInfo.hasNextPage"))
		resp := s.requireCode(t, f.agent, q, M{"id": f.session, "after": "nope"}, "BAD_USER_INPUT")
		require.Equal(t, "after", resp.ext("field"))
	})
}
