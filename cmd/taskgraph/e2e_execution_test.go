package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/testdb"
)

const (
	claimMutation = `mutation($in: ClaimTaskInput!) { claimTask(input: $in) {
		agent { id status } task { id displayId status } execution { id attemptNumber status } wave { waveNumber } waitReason } }`
	completeMutation = `mutation($in: CompleteTaskInput!) { completeTask(input: $in) {
		task { id status } execution { status lastError filesModified } } }`
	failMutation = `mutation($in: FailTaskInput!) { failTask(input: $in) { task { id status } execution { status attemptNumber } } }`
	runQuery     = `query($id: ID!) { executionRun(id: $id) { id runNumber status currentWave tasksTotal tasksCompleted
		tasksFailed tasksSkipped wavesTotal wavesCompleted agentsSpawned agentsActive maxParallelReached durationMs
		failureReason waves { waveNumber status assignments { task { id } taskStatus } } } }`
)

// execList is a plan list with an agent token of its project.
type execList struct {
	*planList
	agent string // AGENT token of the project
}

func newExecList(t *testing.T, s *testServer, maxParallel int) *execList {
	t.Helper()
	p := &planList{s: s, token: s.AdminToken, ids: map[string]string{}, names: map[string]string{}}
	p.project = s.createProject(t, p.token, fmt.Sprintf("ex%04d", planSlugs.Add(1)))
	p.list = s.query(t, p.token, `mutation($in: CreateTaskListInput!) { createTaskList(input: $in) { taskList { id } } }`,
		M{"in": M{"projectId": p.project, "name": "exec", "maxParallelAgents": maxParallel}}).S("createTaskList.taskList.id")
	_, tok := s.userWithToken(t, fmt.Sprintf("agent%04d", planSlugs.Add(1)), "AGENT", p.project)
	return &execList{planList: p, agent: tok}
}

// fiveTasks builds the design's example: waves [T1,T2] [T3,T4] [T5].
func (e *execList) fiveTasks(t *testing.T) {
	for _, n := range []string{"T1", "T2", "T3", "T4", "T5"} {
		e.add(t, n, nil)
	}
	e.link(t, "T3", "T1", "DEPENDS_ON")
	e.link(t, "T4", "T2", "DEPENDS_ON")
	e.link(t, "T5", "T3", "DEPENDS_ON")
	e.link(t, "T5", "T4", "DEPENDS_ON")
}

func (e *execList) start(t *testing.T) string {
	t.Helper()
	return e.s.query(t, e.token, `mutation($in: StartExecutionRunInput!) { startExecutionRun(input: $in) { run { id runNumber status } } }`,
		M{"in": M{"taskListId": e.list, "reason": "test"}}).S("startExecutionRun.run.id")
}

func (e *execList) claim(t *testing.T, run string) jv {
	t.Helper()
	return e.s.query(t, e.agent, claimMutation, M{"in": M{"runId": run, "hostname": "h", "processId": "1"}}).at("claimTask")
}

func (e *execList) complete(t *testing.T, agent string, files ...string) jv {
	t.Helper()
	if files == nil {
		files = []string{}
	}
	return e.s.query(t, e.agent, completeMutation, M{"in": M{"agentId": agent, "filesModified": files}}).at("completeTask")
}

func (e *execList) run(t *testing.T, id string) jv {
	t.Helper()
	return e.s.query(t, e.token, runQuery, M{"id": id}).at("executionRun")
}

// runEventTypes lists the types of the project's run events, in order.
func (e *execList) eventTypes(t *testing.T) []string {
	t.Helper()
	d := e.s.query(t, e.token, `query($id: ID!) { node(id: $id) { ... on Project {
		events(first: 100, types: [RUN_STARTED RUN_COMPLETED RUN_FAILED WAVE_STARTED WAVE_COMPLETED TASK_CLAIMED AGENT_TERMINATED]) {
		nodes { type } } } } }`, M{"id": e.project})
	var out []string
	for _, n := range d.L("node.events.nodes") {
		out = append(out, n.S("type"))
	}
	return out
}

func TestExecutionRun(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		t.Run("five tasks, two agents", func(t *testing.T) {
			e := newExecList(t, s, 2)
			e.fiveTasks(t)
			run := e.start(t)
			s.requireCode(t, e.token, `mutation($in: StartExecutionRunInput!) { startExecutionRun(input: $in) { run { id } } }`,
				M{"in": M{"taskListId": e.list}}, "CONFLICT")
			s.requireCode(t, e.agent, `mutation($in: StartExecutionRunInput!) { startExecutionRun(input: $in) { run { id } } }`,
				M{"in": M{"taskListId": e.list}}, "FORBIDDEN")
			r := e.run(t, run)
			require.Equal(t, 1, r.N("runNumber"))
			require.Equal(t, "RUNNING", r.S("status"))
			require.Equal(t, 3, r.N("wavesTotal"))
			require.Equal(t, 5, r.N("tasksTotal"))

			var order [][]string
			for wave := 1; wave <= 3; wave++ {
				var claimed []jv
				for {
					c := e.claim(t, run)
					if !c.Null("waitReason") {
						want := "NO_READY_TASK"
						if len(claimed) == 2 {
							want = "CONCURRENCY_LIMIT"
						}
						require.Equal(t, want, c.S("waitReason"))
						break
					}
					require.Equal(t, wave, c.N("wave.waveNumber"))
					require.Equal(t, "IN_PROGRESS", c.S("task.status"))
					require.Equal(t, 1, c.N("execution.attemptNumber"))
					claimed = append(claimed, c)
				}
				var names []string
				for _, c := range claimed {
					names = append(names, e.names[c.S("task.id")])
				}
				order = append(order, names)
				for _, c := range claimed {
					done := e.complete(t, c.S("agent.id"))
					require.Equal(t, "COMPLETED", done.S("task.status"))
					require.Equal(t, "COMPLETED", done.S("execution.status"))
				}
			}
			require.ElementsMatch(t, []string{"T1", "T2"}, order[0])
			require.ElementsMatch(t, []string{"T3", "T4"}, order[1])
			require.Equal(t, []string{"T5"}, order[2])
			require.Equal(t, "RUN_FINISHED", e.claim(t, run).S("waitReason"))

			r = e.run(t, run)
			require.Equal(t, "COMPLETED", r.S("status"))
			require.Equal(t, 5, r.N("tasksCompleted"))
			require.Equal(t, 0, r.N("tasksFailed"))
			require.Equal(t, 0, r.N("tasksSkipped"))
			require.Equal(t, 3, r.N("wavesCompleted"))
			require.Equal(t, 5, r.N("agentsSpawned"))
			require.Equal(t, 0, r.N("agentsActive"))
			require.Equal(t, 2, r.N("maxParallelReached"))
			require.GreaterOrEqual(t, r.N("durationMs"), 0)
			for _, w := range r.L("waves") {
				require.Equal(t, "COMPLETED", w.S("status"))
			}
			require.Equal(t, []string{"RUN_STARTED", "WAVE_STARTED", "TASK_CLAIMED", "TASK_CLAIMED",
				"WAVE_COMPLETED", "WAVE_STARTED", "TASK_CLAIMED", "TASK_CLAIMED",
				"WAVE_COMPLETED", "WAVE_STARTED", "TASK_CLAIMED", "WAVE_COMPLETED", "RUN_COMPLETED"}, e.eventTypes(t))

			// A second run over a finished list gets the next number and ends at once.
			run2 := e.start(t)
			r2 := e.run(t, run2)
			require.Equal(t, 2, r2.N("runNumber"))
			require.Equal(t, "COMPLETED", r2.S("status"))
			require.Equal(t, 0, r2.N("tasksTotal"))
		})

		t.Run("agent calls after the lease is gone", func(t *testing.T) {
			e := newExecList(t, s, 2)
			e.add(t, "A", nil)
			run := e.start(t)
			c := e.claim(t, run)
			agent := c.S("agent.id")
			e.complete(t, agent)
			s.requireCode(t, e.agent, completeMutation, M{"in": M{"agentId": agent}}, "LEASE_LOST")
			s.requireCode(t, e.agent, `mutation($in: HeartbeatInput!) { heartbeat(input: $in) { directive } }`,
				M{"in": M{"agentId": agent}}, "LEASE_LOST")
			// Another project's agent cannot see this run.
			other := newExecList(t, s, 1)
			s.requireCode(t, other.agent, claimMutation, M{"in": M{"runId": run}}, "NOT_FOUND")
			nodes := `query($ids: [ID!]!) { nodes(ids: $ids) { id ... on ExecutionRun { runNumber } ... on BuildAgent { status } } }`
			n := s.query(t, e.agent, nodes, M{"ids": []string{run, agent}})
			require.Equal(t, 1, n.N("nodes.0.runNumber"))
			require.Equal(t, "TERMINATED", n.S("nodes.1.status"))
			n = s.query(t, other.agent, nodes, M{"ids": []string{run, agent}})
			require.True(t, n.Null("nodes.0"))
			require.True(t, n.Null("nodes.1"))
			// Task events of the run name it.
			evs := s.query(t, e.token, `query($id: ID!) { executionRun(id: $id) { events(first: 50, types: [TASK_STATUS_CHANGED]) {
				nodes { run { id } ... on TaskStatusChanged { to } } } } }`, M{"id": run}).L("executionRun.events.nodes")
			require.NotEmpty(t, evs)
			for _, ev := range evs {
				require.Equal(t, run, ev.S("run.id"))
			}
			hist := s.query(t, e.token, `query($id: ID!) { task(id: $id) { stateHistory { toStatus run { id } } } }`,
				M{"id": c.S("task.id")}).L("task.stateHistory")
			last := hist[len(hist)-1]
			require.Equal(t, "COMPLETED", last.S("toStatus"))
			require.Equal(t, run, last.S("run.id"))
		})

		t.Run("attempts exhausted: FAILED, dependents skipped", func(t *testing.T) {
			e := newExecList(t, s, 2)
			e.add(t, "A", nil)
			e.add(t, "B", nil)
			e.add(t, "C", nil)
			e.link(t, "B", "A", "DEPENDS_ON")
			e.link(t, "C", "B", "DEPENDS_ON")
			run := e.start(t)
			for attempt := 1; attempt <= 3; attempt++ {
				c := e.claim(t, run)
				require.Equal(t, "A", e.names[c.S("task.id")])
				require.Equal(t, attempt, c.N("execution.attemptNumber"))
				f := s.query(t, e.agent, failMutation, M{"in": M{"agentId": c.S("agent.id"), "error": "boom", "retryable": true}}).at("failTask")
				want := "PENDING"
				if attempt == 3 {
					want = "FAILED"
				}
				require.Equal(t, want, f.S("task.status"))
			}
			r := e.run(t, run)
			require.Equal(t, "FAILED", r.S("status"))
			require.Equal(t, 1, r.N("tasksFailed"))
			require.Equal(t, 2, r.N("tasksSkipped"))
			require.Equal(t, 3, r.N("wavesCompleted"))
			require.Contains(t, r.S("failureReason"), "did not complete")
			for _, n := range []string{"B", "C"} {
				task := s.query(t, e.token, `query($id: ID!) { task(id: $id) { status } }`, M{"id": e.ids[n]})
				require.Equal(t, "BLOCKED", task.S("task.status"), n)
			}
			require.Equal(t, "RUN_FINISHED", e.claim(t, run).S("waitReason"))
		})

		t.Run("test-result gate and file accuracy", func(t *testing.T) {
			e := newExecList(t, s, 2)
			e.add(t, "A", M{"codebaseTests": []string{"go test ./..."}, "apiTests": []string{"curl /healthz"},
				"fileImpacts": []M{{"filePath": "a.go", "operation": "UPDATE"}, {"filePath": "b.go", "operation": "UPDATE"}}})
			run := e.start(t)
			c := e.claim(t, run)
			agent := c.S("agent.id")
			rec := `mutation($in: RecordTestResultInput!) { recordTestResult(input: $in) { testResult { status } } }`
			s.query(t, e.agent, rec, M{"in": M{"agentId": agent, "level": "CODEBASE", "testIndex": 0, "status": "PASSED"}})
			s.query(t, e.agent, rec, M{"in": M{"agentId": agent, "level": "API", "testIndex": 0, "status": "FAILED"}})
			s.requireCode(t, e.agent, rec, M{"in": M{"agentId": agent, "level": "UI", "testIndex": 0, "status": "PASSED"}}, "BAD_USER_INPUT")
			s.query(t, e.agent, `mutation($in: AppendExecutionLogInput!) { appendExecutionLog(input: $in) { execution { logLines } } }`,
				M{"in": M{"agentId": agent, "lines": []string{"one", "two", "three"}}})
			done := e.complete(t, agent, "a.go")
			require.Equal(t, "FAILED", done.S("task.status"))
			require.Contains(t, done.S("execution.lastError"), `API test 0 "curl /healthz" is FAILED`)
			task := s.query(t, e.token, `query($id: ID!) { task(id: $id) { fileImpacts { filePath wasAccurate } } }`, M{"id": e.ids["A"]})
			acc := map[string]bool{}
			for _, fi := range task.L("task.fileImpacts") {
				acc[fi.S("filePath")] = fi.B("wasAccurate")
			}
			require.Equal(t, map[string]bool{"a.go": true, "b.go": false}, acc)
			ex := s.query(t, e.token, `query($id: ID!) { executionRun(id: $id) { executions { log(tail: 2) logLines testResults { status } } } }`,
				M{"id": run}).L("executionRun.executions")
			require.Len(t, ex, 1)
			require.Equal(t, []string{"two", "three"}, ex[0].Strs("log"))
			require.Equal(t, 3, ex[0].N("logLines"))
		})

		t.Run("concurrent claimers", func(t *testing.T) {
			const tasks, claimers = 12, 50
			e := newExecList(t, s, 5)
			for i := range tasks {
				e.add(t, fmt.Sprintf("T%02d", i), nil)
			}
			run := e.start(t)
			var mu sync.Mutex
			got := map[string]int{}
			var wg sync.WaitGroup
			for range claimers {
				wg.Go(func() {
					r := s.do(t, e.agent, claimMutation, M{"in": M{"runId": run}})
					if len(r.Errors) > 0 {
						t.Errorf("claim: %v", r.Errors)
						return
					}
					var d struct {
						ClaimTask struct{ Task *struct{ ID string } }
					}
					if err := json.Unmarshal(r.Data, &d); err != nil {
						t.Error(err)
						return
					}
					if d.ClaimTask.Task != nil {
						mu.Lock()
						got[d.ClaimTask.Task.ID]++
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			require.Len(t, got, 5, "never more than maxParallelAgents")
			for id, n := range got {
				require.Equal(t, 1, n, "task %s claimed twice", id)
			}
			r := e.run(t, run)
			require.Equal(t, 5, r.N("agentsActive"))
			require.Equal(t, 5, r.N("maxParallelReached"))
		})
	})
}

// TestHeartbeatSweep: a silent agent is terminated by the sweep (database
// clock, a 100 ms deadline), its task is claimed again as attempt 2, and the
// dead agent's later calls get LEASE_LOST.
func TestHeartbeatSweep(t *testing.T) {
	t.Parallel()
	testdb.Run(t, func(t *testing.T, url string) {
		s := startServer(t, url, "--heartbeat-interval=50ms", "--missed-heartbeats=2", "--max-attempts=2")
		e := newExecList(t, s, 2)
		e.add(t, "A", nil)
		e.add(t, "B", nil)
		e.link(t, "B", "A", "DEPENDS_ON")
		run := e.start(t)
		first := e.claim(t, run)
		require.Equal(t, 1, first.N("execution.attemptNumber"))
		taskID := first.S("task.id")
		waitStatus := func(want string) {
			t.Helper()
			require.Eventually(t, func() bool {
				return s.query(t, e.token, `query($id: ID!) { task(id: $id) { status } }`, M{"id": taskID}).S("task.status") == want
			}, 10*time.Second, 10*time.Millisecond, "task never became %s", want)
		}
		waitStatus("PENDING")
		agents := s.query(t, e.token, `query($id: ID!) { executionRun(id: $id) { agents { id status terminationReason
			execution { status } } } }`, M{"id": run}).L("executionRun.agents")
		require.Len(t, agents, 1)
		require.Equal(t, "TERMINATED", agents[0].S("status"))
		require.Contains(t, agents[0].S("terminationReason"), "no heartbeat")
		require.Equal(t, "INTERRUPTED", agents[0].S("execution.status"))
		s.requireCode(t, e.agent, completeMutation, M{"in": M{"agentId": first.S("agent.id")}}, "LEASE_LOST")

		second := e.claim(t, run)
		require.Equal(t, taskID, second.S("task.id"))
		require.Equal(t, 2, second.N("execution.attemptNumber"))
		// Silent again: max-attempts is 2, so the task fails and B is skipped.
		waitStatus("FAILED")
		r := e.run(t, run)
		require.Equal(t, "FAILED", r.S("status"))
		require.Equal(t, 1, r.N("tasksFailed"))
		require.Equal(t, 1, r.N("tasksSkipped"))
		require.Equal(t, 0, r.N("agentsActive"))
		var terminated []jv
		for _, ev := range e.runEvents(t, run) {
			if ev.S("type") == "AGENT_TERMINATED" {
				terminated = append(terminated, ev)
			}
		}
		require.Len(t, terminated, 2)
		for i, ev := range terminated {
			require.Equal(t, i+1, ev.N("attemptNumber"))
			require.Contains(t, ev.S("terminationReason"), "no heartbeat")
			require.Equal(t, taskID, ev.S("task.id"))
		}
		require.Equal(t, first.S("agent.id"), terminated[0].S("agent.id"))
		require.Equal(t, second.S("agent.id"), terminated[1].S("agent.id"))
	})
}

const (
	heartbeatMutation = `mutation($in: HeartbeatInput!) { heartbeat(input: $in) { directive agent { heartbeatCount } } }`
	runActionMutation = `mutation($in: RunActionInput!) { %s(input: $in) { run { id runNumber status triggeredBy retryOf { id } } } }`
)

func (e *execList) action(t *testing.T, name, run string) jv {
	t.Helper()
	return e.s.query(t, e.token, fmt.Sprintf(runActionMutation, name), M{"in": M{"runId": run}}).at(name + ".run")
}

func (e *execList) heartbeat(t *testing.T, agent string) string {
	t.Helper()
	return e.s.query(t, e.agent, heartbeatMutation, M{"in": M{"agentId": agent, "progressPercent": 50}}).S("heartbeat.directive")
}

func TestExecutionRunControl(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		t.Run("pause, resume, cancel, retry", func(t *testing.T) {
			e := newExecList(t, s, 2)
			e.add(t, "A", nil)
			e.add(t, "B", nil)
			e.add(t, "C", nil)
			e.link(t, "C", "A", "DEPENDS_ON")
			run := e.start(t)

			// Subscribed from the run's start: the stream replays, then follows.
			sub, err := s.dial(t, e.token).Subscribe(context.Background(),
				`subscription($r: ID!) { runEvents(runId: $r, types: [RUN_STARTED RUN_PAUSED RUN_RESUMED RUN_CANCELLED RUN_FAILED WAVE_STARTED TASK_CLAIMED AGENT_TERMINATED]) {
					type run { id } } }`, M{"r": run})
			require.NoError(t, err)

			a := e.claim(t, run)
			agent := a.S("agent.id")
			require.Equal(t, "CONTINUE", e.heartbeat(t, agent))
			require.Equal(t, "PAUSED", e.action(t, "pauseExecutionRun", run).S("status"))
			s.requireCode(t, e.token, fmt.Sprintf(runActionMutation, "pauseExecutionRun"), M{"in": M{"runId": run}}, "CONFLICT")
			require.Equal(t, "RUN_NOT_RUNNING", e.claim(t, run).S("waitReason"))
			require.Equal(t, "PAUSE", e.heartbeat(t, agent))
			require.Equal(t, "RUNNING", e.action(t, "resumeExecutionRun", run).S("status"))
			require.Equal(t, "CONTINUE", e.heartbeat(t, agent))

			require.Equal(t, "CANCELLED", e.action(t, "cancelExecutionRun", run).S("status"))
			require.Equal(t, "CANCEL", e.heartbeat(t, agent))
			s.requireCode(t, e.agent, completeMutation, M{"in": M{"agentId": agent}}, "LEASE_LOST")
			task := s.query(t, e.token, `query($id: ID!) { task(id: $id) { status } }`, M{"id": a.S("task.id")})
			require.Equal(t, "PENDING", task.S("task.status"))
			ex := s.query(t, e.token, `query($id: ID!) { executionRun(id: $id) { agentsActive executions { status } } }`,
				M{"id": run}).at("executionRun")
			require.Equal(t, 0, ex.N("agentsActive"))
			require.Equal(t, "CANCELLED", ex.S("executions.0.status"))
			require.Equal(t, "RUN_FINISHED", e.claim(t, run).S("waitReason"))

			var types []string
			for range 7 {
				ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
				r, err := sub.Next(ctx)
				cancel()
				require.NoError(t, err)
				require.Empty(t, r.Errors)
				var d struct {
					RunEvents struct {
						Type string
						Run  struct{ ID string }
					}
				}
				require.NoError(t, json.Unmarshal(r.Data, &d))
				require.Equal(t, run, d.RunEvents.Run.ID)
				types = append(types, d.RunEvents.Type)
			}
			require.Equal(t, []string{"RUN_STARTED", "WAVE_STARTED", "TASK_CLAIMED", "RUN_PAUSED", "RUN_RESUMED",
				"AGENT_TERMINATED", "RUN_CANCELLED"}, types)

			// Retry: a new run over the unfinished tasks.
			retry := e.action(t, "retryExecutionRun", run)
			require.Equal(t, "RUNNING", retry.S("status"))
			require.Equal(t, "RETRY", retry.S("triggeredBy"))
			require.Equal(t, 2, retry.N("runNumber"))
			require.Equal(t, run, retry.S("retryOf.id"))
			s.requireCode(t, e.token, fmt.Sprintf(runActionMutation, "retryExecutionRun"), M{"in": M{"runId": run}}, "CONFLICT")
			for {
				c := e.claim(t, retry.S("id"))
				if !c.Null("waitReason") {
					require.Equal(t, "RUN_FINISHED", c.S("waitReason"))
					break
				}
				e.complete(t, c.S("agent.id"))
			}
			r := e.run(t, retry.S("id"))
			require.Equal(t, "COMPLETED", r.S("status"))
			require.Equal(t, 3, r.N("tasksCompleted"))

			// The run's events page with the same cursors.
			pg := s.query(t, e.token, `query($id: ID!) { executionRun(id: $id) { events(first: 3) { totalCount
				nodes { type } pageInfo { hasNextPage } } } }`, M{"id": run}).at("executionRun.events")
			require.Equal(t, "RUN_STARTED", pg.S("nodes.0.type"))
			require.True(t, pg.B("pageInfo.hasNextPage"))
			require.Greater(t, pg.N("totalCount"), 6)
		})

		t.Run("retry after failure reopens failed and skipped tasks", func(t *testing.T) {
			e := newExecList(t, s, 1)
			e.add(t, "A", nil)
			e.add(t, "B", nil)
			e.link(t, "B", "A", "DEPENDS_ON")
			run := e.start(t)
			c := e.claim(t, run)
			s.query(t, e.agent, failMutation, M{"in": M{"agentId": c.S("agent.id"), "error": "no", "retryable": false}})
			require.Equal(t, "FAILED", e.run(t, run).S("status"))
			retry := e.action(t, "retryExecutionRun", run)
			r := e.run(t, retry.S("id"))
			require.Equal(t, 2, r.N("tasksTotal"))
			require.Equal(t, 2, r.N("wavesTotal"))
			c = e.claim(t, retry.S("id"))
			require.Equal(t, "A", e.names[c.S("task.id")])
		})
	})
}

// TestAgentCommand runs `taskgraph agent` against a run: simulated, and with
// a command whose output becomes the execution log.
func TestAgentCommand(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		t.Run("simulate, two agents", func(t *testing.T) {
			e := newExecList(t, s, 2)
			e.fiveTasks(t)
			e.add(t, "T6", M{"codebaseTests": []string{"go test"}})
			runID := e.start(t)
			var out strings.Builder
			ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
			defer cancel()
			require.NoError(t, run(ctx, []string{"agent", "--url", s.URL, "--token", e.agent, "--run", runID,
				"--simulate", "--parallel", "2", "--poll", "20ms"}, &syncWriter{w: &out}, io.Discard))
			r := e.run(t, runID)
			require.Equal(t, "COMPLETED", r.S("status"), out.String())
			require.Equal(t, 6, r.N("tasksCompleted"))
			require.LessOrEqual(t, r.N("maxParallelReached"), 2)
		})

		t.Run("exec", func(t *testing.T) {
			e := newExecList(t, s, 1)
			e.add(t, "ok", nil)
			runID := e.start(t)
			ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
			defer cancel()
			require.NoError(t, run(ctx, []string{"agent", "--url", s.URL, "--token", e.agent, "--run", runID,
				"--exec", `echo "task $TASKGRAPH_TASK_DISPLAY_ID"; test -s "$TASKGRAPH_TASK_FILE"`}, io.Discard, io.Discard))
			ex := s.query(t, e.token, `query($id: ID!) { executionRun(id: $id) { status executions { status log } } }`,
				M{"id": runID}).at("executionRun")
			require.Equal(t, "COMPLETED", ex.S("status"))
			require.Len(t, ex.Strs("executions.0.log"), 1)
			require.True(t, strings.HasPrefix(ex.S("executions.0.log.0"), "task TU-"))
		})
	})
}

// syncWriter serialises writes of parallel agents.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(p)
}

// TestAgentLeaseLost: an agent whose task the sweep took away while its
// command ran gets LEASE_LOST for its report; it drops the result and goes
// on claiming until the run ends, instead of failing.
func TestAgentLeaseLost(t *testing.T) {
	t.Parallel()
	testdb.Run(t, func(t *testing.T, url string) {
		s := startServer(t, url, "--heartbeat-interval=50ms", "--missed-heartbeats=1", "--max-attempts=1")
		e := newExecList(t, s, 1)
		e.add(t, "A", nil)
		runID := e.start(t)
		gate := filepath.Join(t.TempDir(), "gate")
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		var out syncBuffer
		done := make(chan error, 1)
		go func() {
			// The agent never heartbeats, and its command runs until the gate opens.
			done <- run(ctx, []string{"agent", "--url", s.URL, "--token", e.agent, "--run", runID, "--heartbeat", "1h",
				"--poll", "20ms", "--exec", fmt.Sprintf(`while [ ! -e %q ]; do sleep 0.01; done`, gate)}, &out, io.Discard)
		}()
		// The sweep ends the only attempt allowed: the run fails meanwhile.
		require.Eventually(t, func() bool { return e.run(t, runID).S("status") == "FAILED" },
			waitLimit, 10*time.Millisecond)
		require.NoError(t, os.WriteFile(gate, nil, 0o600))
		require.NoError(t, <-done, strings.Join(out.lines(), "\n"))
		require.Contains(t, strings.Join(out.lines(), "\n"), "lease lost")
		ex := s.query(t, e.token, `query($id: ID!) { executionRun(id: $id) { executions { status } } }`,
			M{"id": runID}).Col("executionRun.executions", "status")
		require.Equal(t, []string{"INTERRUPTED"}, ex)
	})
}
