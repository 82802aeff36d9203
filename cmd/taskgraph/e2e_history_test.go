package main

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/testdb"
)

// The execution history, navigable from every end, and the build agent's
// lifecycle (SPAWNING → RUNNING ⇄ IDLE → COMPLETING → TERMINATED).

const (
	agentLifeQuery = `query($id: ID!) { node(id: $id) { ... on BuildAgent { id status endReason errorMessage
		consecutiveMissedHeartbeats tasksCompleted tasksFailed totalDurationMs terminatedAt wave { waveNumber } } } }`
	taskHistoryQuery = `query($id: ID!) { task(id: $id) { id status executionLog assignedAgent { id status }
		executions(first: 10) { totalCount nodes { id status attemptNumber wave { waveNumber } agent { id } } }
		testResults(first: 10) { totalCount nodes { id status executedBy task { id } run { id } agent { id }
			execution { id } } }
		stateHistory { toStatus changedBy changedByAgent { id } } } }`
	itemsQuery = `query($id: ID!) { node(id: $id) { ... on TaskList { items(first: 50) { nodes { task { id } itemStatus
		executionNotes } } } } }`
)

// agentLife reads an agent's lifecycle fields.
func (e *execList) agentLife(t *testing.T, agent string) jv {
	t.Helper()
	return e.s.query(t, e.token, agentLifeQuery, M{"id": agent}).at("node")
}

// item is the list item of task.
func (e *execList) item(t *testing.T, task string) jv {
	t.Helper()
	for _, n := range e.s.query(t, e.token, itemsQuery, M{"id": e.list}).L("node.items.nodes") {
		if n.S("task.id") == task {
			return n
		}
	}
	t.Fatalf("no list item for task %s", task)
	return jv{}
}

// TestExecutionHistoryCompletedRun walks a run to completion and reads its
// history from the task, the wave, the test result and the transitions.
func TestExecutionHistoryCompletedRun(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		e := newExecList(t, s, 1)
		a := e.add(t, "A", M{"codebaseTests": []string{"go test"}})
		b := e.add(t, "B", nil)
		e.link(t, "B", "A", "DEPENDS_ON")
		run := e.start(t)

		c := e.claim(t, run)
		agent := c.S("agent.id")
		require.Equal(t, a, c.S("task.id"))
		require.Equal(t, "SPAWNING", c.S("agent.status"))
		h := s.query(t, e.token, taskHistoryQuery, M{"id": a}).at("task")
		require.Equal(t, agent, h.S("assignedAgent.id"))
		require.Equal(t, "SPAWNING", h.S("assignedAgent.status"))

		hb := s.query(t, e.agent, `mutation($in: HeartbeatInput!) { heartbeat(input: $in) { agent { status
			consecutiveMissedHeartbeats } } }`, M{"in": M{"agentId": agent, "progressPercent": 40}}).at("heartbeat.agent")
		require.Equal(t, "RUNNING", hb.S("status"))
		require.Zero(t, hb.N("consecutiveMissedHeartbeats"))
		live := e.agentLife(t, agent)
		require.True(t, live.Null("endReason"))
		require.True(t, live.Null("totalDurationMs"))

		result := s.query(t, e.agent, `mutation($in: RecordTestResultInput!) { recordTestResult(input: $in) {
			testResult { id } } }`, M{"in": M{"agentId": agent, "level": "CODEBASE", "testIndex": 0, "status": "PASSED"}}).
			S("recordTestResult.testResult.id")
		done := s.query(t, e.agent, completeMutation, M{"in": M{"agentId": agent, "filesModified": []string{},
			"notes": "built A"}}).at("completeTask")
		require.Equal(t, "COMPLETED", done.S("task.status"))

		life := e.agentLife(t, agent)
		require.Equal(t, "TERMINATED", life.S("status"))
		require.Equal(t, "TASK_COMPLETED", life.S("endReason"))
		require.Equal(t, 1, life.N("tasksCompleted"))
		require.Zero(t, life.N("tasksFailed"))
		require.False(t, life.Null("totalDurationMs"))
		require.GreaterOrEqual(t, life.N("totalDurationMs"), 0)
		require.True(t, life.Null("errorMessage"))
		require.Equal(t, 1, life.N("wave.waveNumber"))

		h = s.query(t, e.token, taskHistoryQuery, M{"id": a}).at("task")
		require.True(t, h.Null("assignedAgent"), "a finished task has no live agent")
		require.Equal(t, 1, h.N("executions.totalCount"))
		ex := h.L("executions.nodes")[0]
		require.Equal(t, "COMPLETED", ex.S("status"))
		require.Equal(t, 1, ex.N("wave.waveNumber"))
		require.Equal(t, agent, ex.S("agent.id"))
		require.Equal(t, 1, h.N("testResults.totalCount"))
		tr := h.L("testResults.nodes")[0]
		require.Equal(t, result, tr.S("id"))
		require.Equal(t, a, tr.S("task.id"))
		require.Equal(t, run, tr.S("run.id"))
		require.Equal(t, agent, tr.S("agent.id"))
		require.Equal(t, agent, tr.S("executedBy"))
		require.Equal(t, ex.S("id"), tr.S("execution.id"))
		log := h.L("executionLog")
		require.Len(t, log, 1)
		require.Equal(t, 1, log[0].N("attempt"))
		require.Equal(t, "COMPLETED", log[0].S("status"))
		require.Equal(t, agent, log[0].S("agentId"))
		require.Equal(t, "built A", log[0].S("summary"))
		require.NotEmpty(t, log[0].S("startedAt"))
		require.NotEmpty(t, log[0].S("endedAt"))
		byAgent := 0
		for _, c := range h.L("stateHistory") {
			switch c.S("toStatus") {
			case "IN_PROGRESS", "VALIDATING", "COMPLETED":
				require.Equal(t, agent, c.S("changedBy"), "moved to %s", c.S("toStatus"))
				require.Equal(t, agent, c.S("changedByAgent.id"))
				byAgent++
			default:
				require.True(t, c.Null("changedByAgent"), "moved to %s by a person", c.S("toStatus"))
			}
		}
		require.Equal(t, 3, byAgent)
		require.Equal(t, "built A", e.item(t, a).S("executionNotes"))
		require.Equal(t, "COMPLETED", e.item(t, a).S("itemStatus"))

		// B in wave 2, then the run completes.
		c2 := e.claim(t, run)
		require.Equal(t, b, c2.S("task.id"))
		e.complete(t, c2.S("agent.id"))
		require.Equal(t, "COMPLETED", e.run(t, run).S("status"))
		waves := s.query(t, e.token, `query($id: ID!) { executionRun(id: $id) { waves { waveNumber
			agents { id endReason } executions { id task { id } } } } }`, M{"id": run}).L("executionRun.waves")
		require.Len(t, waves, 2)
		require.Equal(t, []string{agent}, waves[0].Col("agents", "id"))
		require.Equal(t, []string{ex.S("id")}, waves[0].Col("executions", "id"))
		require.Equal(t, []string{c2.S("agent.id")}, waves[1].Col("agents", "id"))
		require.Equal(t, "TASK_COMPLETED", waves[1].S("agents.0.endReason"))
		require.Equal(t, b, waves[1].S("executions.0.task.id"))
	})
}

// TestExecutionHistoryFailedTask: failTask keeps its error and notes; the
// dependent task's list item reads SKIPPED.
func TestExecutionHistoryFailedTask(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		e := newExecList(t, s, 1)
		a := e.add(t, "A", nil)
		b := e.add(t, "B", nil)
		e.link(t, "B", "A", "DEPENDS_ON")
		run := e.start(t)
		agent := e.claim(t, run).S("agent.id")
		e.heartbeat(t, agent)
		r := s.requireCode(t, e.agent, failMutation, M{"in": M{"agentId": agent, "error": "boom", "retryable": false,
			"notes": strings.Repeat("x", 16<<10+1)}}, "BAD_USER_INPUT")
		require.Equal(t, "notes", r.ext("field"))
		require.Equal(t, "RUNNING", e.agentLife(t, agent).S("status"), "a refused call leaves the agent as it was")
		f := s.query(t, e.agent, failMutation, M{"in": M{"agentId": agent, "error": "boom", "retryable": false,
			"notes": "gave up"}}).at("failTask")
		require.Equal(t, "FAILED", f.S("task.status"))

		life := e.agentLife(t, agent)
		require.Equal(t, "TERMINATED", life.S("status"))
		require.Equal(t, "TASK_FAILED", life.S("endReason"))
		require.Equal(t, "boom", life.S("errorMessage"))
		require.Zero(t, life.N("tasksCompleted"))
		require.Equal(t, 1, life.N("tasksFailed"))

		require.Equal(t, "FAILED", e.item(t, a).S("itemStatus"))
		require.Equal(t, "gave up", e.item(t, a).S("executionNotes"))
		require.Equal(t, "SKIPPED", e.item(t, b).S("itemStatus"))
		log := s.query(t, e.token, taskHistoryQuery, M{"id": a}).L("task.executionLog")
		require.Len(t, log, 1)
		require.Equal(t, "FAILED", log[0].S("status"))
		require.Equal(t, "gave up", log[0].S("summary"))
		require.Equal(t, "FAILED", e.run(t, run).S("status"))
	})
}

// TestAgentMissedHeartbeats: the sweep counts the heartbeats a live agent
// missed, a heartbeat resets the count, and an agent that missed them all
// ends MISSED_HEARTBEATS.
func TestAgentMissedHeartbeats(t *testing.T) {
	t.Parallel()
	testdb.Run(t, func(t *testing.T, url string) {
		s := startServer(t, url, "--heartbeat-interval=100ms", "--missed-heartbeats=20", "--max-attempts=1")
		e := newExecList(t, s, 1)
		a := e.add(t, "A", nil)
		run := e.start(t)
		agent := e.claim(t, run).S("agent.id")
		e.heartbeat(t, agent)
		require.Eventually(t, func() bool {
			l := e.agentLife(t, agent)
			return l.S("status") == "RUNNING" && l.N("consecutiveMissedHeartbeats") >= 1
		}, 10*time.Second, 10*time.Millisecond, "the sweep never counted a missed heartbeat")
		hb := s.query(t, e.agent, `mutation($in: HeartbeatInput!) { heartbeat(input: $in) { agent {
			consecutiveMissedHeartbeats } } }`, M{"in": M{"agentId": agent, "progressPercent": 50}})
		require.Zero(t, hb.N("heartbeat.agent.consecutiveMissedHeartbeats"))
		require.Eventually(t, func() bool {
			return e.agentLife(t, agent).S("status") == "TERMINATED"
		}, 20*time.Second, 20*time.Millisecond, "the agent was never ended")
		life := e.agentLife(t, agent)
		require.Equal(t, "MISSED_HEARTBEATS", life.S("endReason"))
		require.GreaterOrEqual(t, life.N("consecutiveMissedHeartbeats"), 20)
		require.Equal(t, 1, life.N("tasksFailed"))
		require.False(t, life.Null("totalDurationMs"))
		h := s.query(t, e.token, taskHistoryQuery, M{"id": a}).at("task")
		log := h.L("executionLog")
		require.Len(t, log, 1)
		require.Equal(t, "INTERRUPTED", log[0].S("status"))
		require.Equal(t, "FAILED", h.S("status"))
		last := h.L("stateHistory")
		require.Equal(t, "FAILED", last[len(last)-1].S("toStatus"))
		require.Equal(t, agent, last[len(last)-1].S("changedByAgent.id"), "the sweep's release names the lost agent")
		evs := s.query(t, e.token, `query($id: ID!) { executionRun(id: $id) { events(first: 10, types: [AGENT_TERMINATED]) {
			nodes { agent { id } ... on AgentTerminated { endReason } } } } }`, M{"id": run}).L("executionRun.events.nodes")
		require.Len(t, evs, 1)
		require.Equal(t, "MISSED_HEARTBEATS", evs[0].S("endReason"))
	})
}

// TestAgentIdleOnBlockingQuestion: an agent waiting on its unanswered
// blocking question is IDLE, and RUNNING again once it is answered; a run
// cancelled under an agent ends it RUN_CANCELLED.
func TestAgentIdleOnBlockingQuestion(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		e := newExecList(t, s, 1)
		e.add(t, "A", nil)
		run := e.start(t)
		agent := e.claim(t, run).S("agent.id")
		e.heartbeat(t, agent)
		plain := e.ask(t, e.agent, M{"agentId": agent, "questionType": "DECISION", "questionText": "FYI?",
			"options": yesNo()})
		require.Equal(t, "RUNNING", e.agentLife(t, agent).S("status"), "a question that does not block")
		q := e.ask(t, e.agent, M{"agentId": agent, "questionType": "DECISION", "questionText": "Ship it?",
			"options": yesNo(), "blocking": true})
		require.Equal(t, "IDLE", e.agentLife(t, agent).S("status"))
		e.heartbeat(t, agent)
		require.Equal(t, "IDLE", e.agentLife(t, agent).S("status"), "a heartbeat does not end the wait")
		s.query(t, e.token, answerMutation, M{"in": M{"id": plain.S("id"), "answer": "no"}})
		require.Equal(t, "IDLE", e.agentLife(t, agent).S("status"))
		s.query(t, e.token, answerMutation, M{"in": M{"id": q.S("id"), "answer": "yes"}})
		require.Equal(t, "RUNNING", e.agentLife(t, agent).S("status"))

		e.action(t, "cancelExecutionRun", run)
		life := e.agentLife(t, agent)
		require.Equal(t, "TERMINATED", life.S("status"))
		require.Equal(t, "RUN_CANCELLED", life.S("endReason"))
		require.Zero(t, life.N("tasksFailed"))
		require.Zero(t, life.N("tasksCompleted"))
	})
}
