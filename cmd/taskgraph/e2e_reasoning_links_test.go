package main

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/client"
)

// Reasoning executions linked to agent sessions, and reached from a task or
// a run, end to end on every test database.

// subscribeSessionReasoning subscribes to the reasoning events of a
// session's stream from cursor after.
func subscribeSessionReasoning(t *testing.T, s *testServer, token, session, after string) *client.Subscription {
	t.Helper()
	sub, err := s.dial(t, token).Subscribe(context.Background(), `subscription($s: ID!, $after: String, $types: [ExecutionEventType!]) {
		sessionEvents(sessionId: $s, after: $after, types: $types) { cursor type
			... on ReasoningStarted { execution { id } }
			... on PassStarted { passNumber phase execution { id } } } }`,
		M{"s": session, "after": after, "types": []string{"REASONING_STARTED", "PASS_STARTED"}})
	require.NoError(t, err)
	return sub
}

type sessionReasoningEvent struct {
	Cursor, Type string
	PassNumber   *int
	Phase        string
	Execution    *struct{ ID string }
}

func nextSessionReasoningEvent(t *testing.T, sub *client.Subscription) sessionReasoningEvent {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	r, err := sub.Next(ctx)
	require.NoError(t, err)
	require.Empty(t, r.Errors)
	var d struct{ SessionEvents sessionReasoningEvent }
	require.NoError(t, json.Unmarshal(r.Data, &d))
	return d.SessionEvents
}

// TestReasoningSessionLink: an execution started with a sessionId names the
// session, its events stream on sessionEvents (replayed from a cursor taken
// before), other executions' events do not, a session that is missing, of
// another kind or of another project is NOT_FOUND on sessionId, and the
// session field is read in one batch.
func TestReasoningSessionLink(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		f := newSessionFixture(t, s, nil)
		elsewhere := newSessionFixture(t, s, nil) // a session of another project
		second := s.query(t, f.agent, createSessionMutation, M{"in": M{"projectId": f.project, "mission": "second"}}).
			S("createAgentSession.session.id")
		r := rsn{s, s.AdminToken}
		before := s.eventCursor(t, s.AdminToken, f.project)

		exec := r.start(t, M{"projectId": f.project, "sessionId": f.session, "taskInput": "Plan the refactor", "ttl": 3})
		unlinked := r.start(t, M{"projectId": f.project, "taskInput": "Not in a session", "ttl": 3})
		unlinkedPass := r.pass(t, unlinked, "A", 3)
		r.pass(t, exec, "A", 3)

		d := s.query(t, f.agent, `query($id: ID!) { reasoningExecution(id: $id) { id session { id mission } } }`, M{"id": exec})
		require.Equal(t, f.session, d.S("reasoningExecution.session.id"))
		require.Equal(t, "refactor the billing module", d.S("reasoningExecution.session.mission"))
		d = s.query(t, f.agent, `query($id: ID!) { reasoningExecution(id: $id) { session { id } } }`, M{"id": unlinked})
		require.True(t, d.Null("reasoningExecution.session"))

		// Replayed from the cursor taken before the execution started: only
		// the linked execution's events, in commit order.
		sub := subscribeSessionReasoning(t, s, f.agent, f.session, before)
		started := nextSessionReasoningEvent(t, sub)
		require.Equal(t, "REASONING_STARTED", started.Type)
		require.Equal(t, exec, started.Execution.ID)
		pass := nextSessionReasoningEvent(t, sub)
		require.Equal(t, "PASS_STARTED", pass.Type)
		require.Equal(t, exec, pass.Execution.ID)
		require.Equal(t, 0, *pass.PassNumber)
		require.Equal(t, "A", pass.Phase)

		// Live: the next pass follows on the open subscription.
		r.complete(t, unlinkedPass)
		r.pass(t, unlinked, "B", 2)
		r.do(t, "finishReasoningExecution", "execution { id }", M{"executionId": exec, "status": "FAILED"})
		third := r.start(t, M{"projectId": f.project, "sessionId": f.session, "taskInput": "again", "ttl": 2})
		require.Equal(t, third, nextSessionReasoningEvent(t, sub).Execution.ID)
		require.NoError(t, sub.Close())

		// The same replay from the PASS_STARTED event's cursor starts after it.
		sub = subscribeSessionReasoning(t, s, f.agent, f.session, pass.Cursor)
		next := nextSessionReasoningEvent(t, sub)
		require.Equal(t, "REASONING_STARTED", next.Type)
		require.Equal(t, third, next.Execution.ID)
		require.NoError(t, sub.Close())

		// Bad sessionIds.
		start := func(session string) M {
			return M{"projectId": f.project, "sessionId": session, "taskInput": "x", "ttl": 1}
		}
		r.fails(t, "startReasoningExecution", start(elsewhere.session), "NOT_FOUND", "sessionId")
		r.fails(t, "startReasoningExecution", start(missingID("AgentSession")), "NOT_FOUND", "sessionId")
		r.fails(t, "startReasoningExecution", start(f.project), "NOT_FOUND", "sessionId")
		r.fails(t, "startReasoningExecution", start("not an id"), "BAD_USER_INPUT", "sessionId")

		// The session field of a list costs the same for 1 execution as for 3.
		r.start(t, M{"projectId": f.project, "sessionId": second, "taskInput": "third", "ttl": 1})
		list := `query($p: ID!, $n: Int) { reasoningExecutions(projectId: $p, first: $n) { nodes { id session { id } } } }`
		// The server's own background work (sweeps) counts too and only ever
		// adds: the fewest statements of three reads is the query's.
		count := func(n int) (int64, []jv) {
			var fewest int64 = -1
			var nodes []jv
			for range 3 {
				before := s.DB.Statements()
				d := s.query(t, s.AdminToken, list, M{"p": f.project, "n": n})
				if c := s.DB.Statements() - before; fewest < 0 || c < fewest {
					fewest = c
				}
				nodes = d.L("reasoningExecutions.nodes")
			}
			return fewest, nodes
		}
		count(1) // warm the token's last-used mark
		one, _ := count(1)
		all, nodes := count(4)
		require.Len(t, nodes, 4)
		var sessions []string
		for _, n := range nodes {
			if n.Null("session") {
				sessions = append(sessions, "")
			} else {
				sessions = append(sessions, n.S("session.id"))
			}
		}
		require.Equal(t, []string{f.session, "", f.session, second}, sessions)
		require.Equal(t, one, all, "statements for 1 execution vs 4")
	})
}

// TestReasoningExecutionsByTaskAndRun: reasoningExecutions(taskId:, runId:)
// keeps the executions about that task or of that run, with the status
// filter and paging; a task or run of another project is NOT_FOUND on the
// argument.
func TestReasoningExecutionsByTaskAndRun(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		project, task, run := reasoningProject(t, s)
		otherTask := s.createTask(t, s.AdminToken, project, "another task", nil)
		_, foreignTask, foreignRun := reasoningProject(t, s)
		r := rsn{s, s.AdminToken}
		withRun := r.start(t, M{"projectId": project, "taskId": task, "runId": run, "taskInput": "a", "ttl": 2})
		taskOnly := r.start(t, M{"projectId": project, "taskId": task, "taskInput": "b", "ttl": 2})
		r.start(t, M{"projectId": project, "taskId": otherTask, "taskInput": "c", "ttl": 2})
		r.start(t, M{"projectId": project, "taskInput": "d", "ttl": 2})
		r.fails(t, "finishReasoningExecution", M{"executionId": taskOnly, "status": "FAILED"}, "BAD_USER_INPUT", "executionId")
		r.pass(t, taskOnly, "A", 1)
		r.do(t, "finishReasoningExecution", "execution { id }", M{"executionId": taskOnly, "status": "FAILED"})

		q := `query($p: ID!, $task: ID, $run: ID, $status: [ReasoningStatus!], $first: Int, $after: String) {
			reasoningExecutions(projectId: $p, taskId: $task, runId: $run, status: $status, first: $first, after: $after) {
				totalCount nodes { id task { id } } pageInfo { hasNextPage endCursor } } }`
		ids := func(vars M) ([]string, int) {
			vars["p"] = project
			d := s.query(t, s.AdminToken, q, vars).at("reasoningExecutions")
			var out []string
			for _, n := range d.L("nodes") {
				out = append(out, n.S("id"))
			}
			return out, d.N("totalCount")
		}
		got, total := ids(M{"task": task})
		require.Equal(t, []string{withRun, taskOnly}, got)
		require.Equal(t, 2, total)
		got, _ = ids(M{"run": run})
		require.Equal(t, []string{withRun}, got)
		got, _ = ids(M{"task": task, "status": []string{"FAILED"}})
		require.Equal(t, []string{taskOnly}, got)
		got, _ = ids(M{})
		require.Len(t, got, 4)

		// Paging within the filter.
		d := s.query(t, s.AdminToken, q, M{"p": project, "task": task, "first": 1}).at("reasoningExecutions")
		require.True(t, d.B("pageInfo.hasNextPage"))
		got, _ = ids(M{"task": task, "first": 1, "after": d.S("pageInfo.endCursor")})
		require.Equal(t, []string{taskOnly}, got)

		for _, c := range []struct {
			vars        M
			code, field string
		}{
			{M{"task": foreignTask}, "NOT_FOUND", "taskId"},
			{M{"run": foreignRun}, "NOT_FOUND", "runId"},
			{M{"task": run}, "NOT_FOUND", "taskId"},
			{M{"run": missingID("ExecutionRun")}, "NOT_FOUND", "runId"},
			{M{"task": "nope"}, "BAD_USER_INPUT", "taskId"},
		} {
			c.vars["p"] = project
			resp := s.requireCode(t, s.AdminToken, q, c.vars, c.code)
			require.Equal(t, c.field, resp.ext("field"), "%v: %+v", c.vars, resp.Errors)
		}
	})
}
