package main

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// runEventsQuery pages a run's events with the details of every execution kind.
const runEventsQuery = `query($id: ID!) { executionRun(id: $id) { events(first: 100) { nodes {
	type cursor occurredAt project { id } run { id } task { id } agent { id }
	... on RunStarted { reason }
	... on RunPaused { reason }
	... on RunResumed { reason }
	... on RunCancelled { reason }
	... on RunCompleted { durationMs }
	... on RunFailed { failureReason durationMs }
	... on WaveStarted { waveNumber taskCount }
	... on WaveCompleted { waveNumber waveStatus taskCount completedCount failedCount skippedCount durationMs }
	... on TaskClaimed { waveNumber attemptNumber }
	... on AgentHeartbeat { progressPercent currentStep memoryMb cpuPercent }
	... on AgentTerminated { terminationReason attemptNumber }
	... on LogAppended { lines firstLine }
	... on TestResultRecorded { level testIndex testName testStatus durationMs }
} } } }`

// runEvents are a run's execution events (the task kinds left out), oldest first.
func (e *execList) runEvents(t *testing.T, run string) []jv {
	t.Helper()
	var out []jv
	for _, n := range e.s.query(t, e.token, runEventsQuery, M{"id": run}).L("executionRun.events.nodes") {
		require.Equal(t, e.project, n.S("project.id"))
		require.Equal(t, run, n.S("run.id"))
		switch n.S("type") {
		case "TASK_CREATED", "TASK_UPDATED", "TASK_STATUS_CHANGED":
			continue
		}
		out = append(out, n)
	}
	return out
}

// TestExecutionEventKinds: every execution kind pages through
// ExecutionRun.events as its own type, with its details.
func TestExecutionEventKinds(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		e := newExecList(t, s, 1)
		e.add(t, "A", M{"codebaseTests": []string{"go test ./..."}})
		e.add(t, "B", nil)
		e.link(t, "B", "A", "DEPENDS_ON")
		start := s.eventCursor(t, e.token, e.project)
		first := e.start(t) // reason "test"

		c := e.claim(t, first)
		agent, taskA := c.S("agent.id"), c.S("task.id")
		s.query(t, e.agent, heartbeatMutation, M{"in": M{"agentId": agent, "progressPercent": 40,
			"currentStep": "compiling", "memoryMb": 256, "cpuPercent": 12.5}})
		// Only heartbeats with news are events: this one keeps the agent alive.
		s.query(t, e.agent, heartbeatMutation, M{"in": M{"agentId": agent, "progressPercent": 40}})
		s.query(t, e.agent, heartbeatMutation, M{"in": M{"agentId": agent, "currentStep": "linking"}})
		logMutation := `mutation($in: AppendExecutionLogInput!) { appendExecutionLog(input: $in) { execution { logLines } } }`
		s.query(t, e.agent, logMutation, M{"in": M{"agentId": agent, "lines": []string{"one", "two"}}})
		s.query(t, e.agent, logMutation, M{"in": M{"agentId": agent, "lines": []string{"three"}}})
		s.query(t, e.agent, `mutation($in: RecordTestResultInput!) { recordTestResult(input: $in) { testResult { status } } }`,
			M{"in": M{"agentId": agent, "level": "CODEBASE", "testIndex": 0, "testName": "unit", "status": "PASSED", "durationMs": 30}})
		action := `mutation($in: RunActionInput!) { %s(input: $in) { run { status } } }`
		s.query(t, e.token, fmt.Sprintf(action, "pauseExecutionRun"), M{"in": M{"runId": first, "reason": "lunch"}})
		s.query(t, e.token, fmt.Sprintf(action, "resumeExecutionRun"), M{"in": M{"runId": first}})
		e.complete(t, agent)

		c = e.claim(t, first)
		agentB, taskB := c.S("agent.id"), c.S("task.id")
		s.query(t, e.agent, failMutation, M{"in": M{"agentId": agentB, "error": "broken", "retryable": false}})

		evs := e.runEvents(t, first)
		var types []string
		for _, ev := range evs {
			types = append(types, ev.S("type"))
		}
		require.Equal(t, []string{"RUN_STARTED", "WAVE_STARTED", "TASK_CLAIMED", "AGENT_HEARTBEAT", "AGENT_HEARTBEAT",
			"LOG_APPENDED", "LOG_APPENDED", "TEST_RESULT_RECORDED", "RUN_PAUSED", "RUN_RESUMED", "WAVE_COMPLETED",
			"WAVE_STARTED", "TASK_CLAIMED", "WAVE_COMPLETED", "RUN_FAILED"}, types)
		for i, ev := range evs {
			require.NotEmpty(t, ev.S("cursor"))
			require.NotEmpty(t, ev.S("occurredAt"))
			about := i >= 2 && i <= 7 || i == 12 // the claims, heartbeats, logs and test results
			require.Equal(t, about, !ev.Null("agent"), "%d %s", i, ev.S("type"))
			require.Equal(t, about, !ev.Null("task"), "%d %s", i, ev.S("type"))
		}

		require.Equal(t, "test", evs[0].S("reason"))
		require.Equal(t, 1, evs[1].N("waveNumber"))
		require.Equal(t, 1, evs[1].N("taskCount"))
		claim := evs[2]
		require.Equal(t, agent, claim.S("agent.id"))
		require.Equal(t, taskA, claim.S("task.id"))
		require.Equal(t, 1, claim.N("waveNumber"))
		require.Equal(t, 1, claim.N("attemptNumber"))

		hb := evs[3]
		require.Equal(t, 40, hb.N("progressPercent"))
		require.Equal(t, "compiling", hb.S("currentStep"))
		require.Equal(t, 256, hb.N("memoryMb"))
		require.InDelta(t, 12.5, hb.F("cpuPercent"), 1e-9)
		require.Equal(t, "linking", evs[4].S("currentStep"))
		for _, f := range []string{"progressPercent", "memoryMb", "cpuPercent"} {
			require.True(t, evs[4].Null(f), "a heartbeat without %s reports none", f)
		}

		require.Equal(t, []string{"one", "two"}, evs[5].Strs("lines"))
		require.Equal(t, 1, evs[5].N("firstLine"))
		require.Equal(t, []string{"three"}, evs[6].Strs("lines"))
		require.Equal(t, 3, evs[6].N("firstLine"))

		tr := evs[7]
		require.Equal(t, "CODEBASE", tr.S("level"))
		require.Equal(t, 0, tr.N("testIndex"))
		require.Equal(t, "unit", tr.S("testName"))
		require.Equal(t, "PASSED", tr.S("testStatus"))
		require.Equal(t, 30, tr.N("durationMs"))

		require.Equal(t, "lunch", evs[8].S("reason"))
		require.True(t, evs[9].Null("reason"))

		w1 := evs[10]
		require.Equal(t, 1, w1.N("waveNumber"))
		require.Equal(t, "COMPLETED", w1.S("waveStatus"))
		require.Equal(t, 1, w1.N("taskCount"))
		require.Equal(t, 1, w1.N("completedCount"))
		require.Equal(t, 0, w1.N("failedCount"))
		require.Equal(t, 0, w1.N("skippedCount"))
		require.GreaterOrEqual(t, w1.N("durationMs"), 0)
		require.Equal(t, 2, evs[11].N("waveNumber"))
		require.Equal(t, taskB, evs[12].S("task.id"))
		require.Equal(t, 2, evs[12].N("waveNumber"))
		w2 := evs[13]
		require.Equal(t, 2, w2.N("waveNumber"))
		require.Equal(t, "FAILED", w2.S("waveStatus"))
		require.Equal(t, 1, w2.N("failedCount"))
		require.Equal(t, 0, w2.N("completedCount"))
		failed := evs[14]
		require.Equal(t, "1 of 2 tasks did not complete", failed.S("failureReason"))
		require.GreaterOrEqual(t, failed.N("durationMs"), 0)
		require.Equal(t, e.run(t, first).S("failureReason"), failed.S("failureReason"))

		// A retry: cancelled, with a reason; a retry of that completes.
		retry := s.query(t, e.token, `mutation($in: RunActionInput!) { retryExecutionRun(input: $in) { run { id } } }`,
			M{"in": M{"runId": first, "reason": "again"}}).S("retryExecutionRun.run.id")
		s.query(t, e.token, fmt.Sprintf(action, "cancelExecutionRun"), M{"in": M{"runId": retry, "reason": "enough"}})
		evs = e.runEvents(t, retry)
		require.Equal(t, "RUN_STARTED", evs[0].S("type"))
		require.Equal(t, "again", evs[0].S("reason"))
		last := evs[len(evs)-1]
		require.Equal(t, "RUN_CANCELLED", last.S("type"))
		require.Equal(t, "enough", last.S("reason"))

		third := e.action(t, "retryExecutionRun", retry).S("id")
		e.complete(t, e.claim(t, third).S("agent.id"))
		evs = e.runEvents(t, third)
		require.Equal(t, "retry of run "+retry, evs[0].S("reason"), "a retry without a reason names the run it retries")
		last = evs[len(evs)-1]
		require.Equal(t, "RUN_COMPLETED", last.S("type"))
		require.Equal(t, e.run(t, third).N("durationMs"), last.N("durationMs"))

		// taskgraph watch prints each kind's details.
		slug := s.query(t, e.token, `query($id: ID!) { node(id: $id) { ... on Project { slug } } }`, M{"id": e.project}).S("node.slug")
		out := &syncBuffer{}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			done <- run(ctx, []string{"watch", "--project", slug, "--url", s.URL, "--token", e.token, "--after", start,
				"--types", "RUN_STARTED,RUN_PAUSED,RUN_RESUMED,RUN_CANCELLED,RUN_COMPLETED,RUN_FAILED,WAVE_STARTED,WAVE_COMPLETED," +
					"TASK_CLAIMED,AGENT_HEARTBEAT,AGENT_TERMINATED,LOG_APPENDED,TEST_RESULT_RECORDED"}, out, io.Discard)
		}()
		eventually(t, "the last run's end", func() bool { return strings.Contains(strings.Join(out.lines(), "\n"), "RUN_COMPLETED") })
		cancel()
		require.NoError(t, <-done)
		printed := strings.Join(out.lines(), "\n")
		for _, want := range [][2]string{ // type, details (the task column between them)
			{"RUN_STARTED", "run 1 (test)"},
			{"WAVE_STARTED", "wave 1: 1 task"},
			{"TASK_CLAIMED", "wave 1, attempt 1"},
			{"AGENT_HEARTBEAT", "40%, compiling, 256 MB, 12.5% CPU"},
			{"LOG_APPENDED", `2 lines (1-2) "one" "two"`},
			{"LOG_APPENDED", `1 line (3-3) "three"`},
			{"TEST_RESULT_RECORDED", `CODEBASE test 0 "unit" PASSED in 30ms`},
			{"RUN_PAUSED", "run 1 (lunch)"},
			{"RUN_RESUMED", "run 1"},
			{"WAVE_COMPLETED", "wave 1 COMPLETED: 1 completed, 0 failed, 0 skipped in "},
			{"WAVE_COMPLETED", "wave 2 FAILED: 0 completed, 1 failed, 0 skipped in "},
			{"RUN_FAILED", "run 1: 1 of 2 tasks did not complete in "},
			{"RUN_STARTED", "run 2 (again)"},
			{"RUN_CANCELLED", "run 2 (enough)"},
			{"RUN_COMPLETED", "run 3 in "},
		} {
			require.Regexp(t, `(?m)`+want[0]+` +(-|TU-\S+) +`+regexp.QuoteMeta(want[1]), printed)
		}
	})
}
