package main

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/testdb"
)

// TestConcurrentClaims: 200 claimTask calls released together against one
// run never hand out a task twice, hand out exactly min(tasks, limit) tasks,
// never exceed maxParallelAgents, and fail none: every other caller gets the
// wait reason that fits (no deadlock or serialization failure escapes).
// PostgreSQL only: SQLite's single writer serialises claims by construction
// (TestExecutionRun's 50 concurrent claimers cover it), and 200 race-detected
// claims there take most of this test's time budget.
func TestConcurrentClaims(t *testing.T) {
	t.Parallel()
	const claimers = 200
	testdb.Run(t, func(t *testing.T, url string) {
		if strings.HasPrefix(url, "sqlite:") {
			t.Skip("PostgreSQL only")
		}
		s := startServer(t, url)
		client := fastClient(claimers)
		for _, tc := range []struct {
			name         string
			tasks, limit int
			wait         string
		}{
			// maxParallelAgents is at most 100 (API), so 200 claimers always
			// outnumber the slots.
			{"fewer tasks than slots", 60, 100, "NO_READY_TASK"},
			{"fewer slots than tasks", 40, 25, "CONCURRENCY_LIMIT"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				e := newExecList(t, s, tc.limit)
				inputs := make([]M, tc.tasks)
				for i := range inputs {
					inputs[i] = M{"title": fmt.Sprintf("T%03d", i), "taskListId": e.list}
				}
				bulkTasks(t, s, e.token, e.project, inputs)
				run := e.start(t)
				require.Equal(t, 1, e.run(t, run).N("wavesTotal"), "every task in the current wave")

				type claim struct {
					ClaimTask struct {
						Task       *struct{ ID string }
						Execution  *struct{ AttemptNumber int }
						WaitReason *string
					}
				}
				got := make([]claim, claimers)
				errs := make([]error, claimers)
				start := make(chan struct{})
				var wg sync.WaitGroup
				for i := range claimers {
					wg.Go(func() {
						<-start
						errs[i] = s.call(client, e.agent, claimMutation,
							M{"in": M{"runId": run, "hostname": "h", "processId": fmt.Sprint(i)}}, &got[i])
					})
				}
				t0 := time.Now()
				close(start)
				wg.Wait()
				t.Logf("%d concurrent claims: %v", claimers, time.Since(t0))

				want := min(tc.tasks, tc.limit)
				seen := map[string]int{}
				waits := map[string]int{}
				for i := range claimers {
					require.NoError(t, errs[i], "claimer %d", i)
					c := got[i].ClaimTask
					if c.Task != nil {
						require.Nil(t, c.WaitReason)
						require.Equal(t, 1, c.Execution.AttemptNumber)
						seen[c.Task.ID]++
						continue
					}
					require.NotNil(t, c.WaitReason, "claimer %d got neither a task nor a wait reason", i)
					waits[*c.WaitReason]++
				}
				for id, n := range seen {
					require.Equal(t, 1, n, "task %s claimed %d times", id, n)
				}
				require.Len(t, seen, want)
				require.Equal(t, map[string]int{tc.wait: claimers - want}, waits)

				r := e.run(t, run)
				require.Equal(t, want, r.N("agentsSpawned"))
				require.Equal(t, want, r.N("agentsActive"))
				require.Equal(t, want, r.N("maxParallelReached"))
				require.LessOrEqual(t, r.N("maxParallelReached"), tc.limit)
				inProgress := 0
				for _, a := range r.L("waves.0.assignments") {
					if a.S("taskStatus") == "IN_PROGRESS" {
						inProgress++
						require.Equal(t, 1, seen[a.S("task.id")], "assignment in progress without its claim")
					}
				}
				require.Equal(t, want, inProgress)
				// One more claim still sees the same state.
				require.Equal(t, tc.wait, e.claim(t, run).S("waitReason"))
			})
		}
	})
}

// TestConcurrentAgentCalls: more agent calls of one run at once than the
// server has database connections (PostgreSQL 20, SQLite 8) all succeed. An
// agent call locks the run row; a read it made on the pool (not its
// transaction) while holding that lock waited for a connection that the
// calls queued on the lock held: the server stalled until clients gave up
// (PostgreSQL) or the busy timeout failed them (SQLite, INTERNAL).
func TestConcurrentAgentCalls(t *testing.T) {
	t.Parallel()
	const agents = 40
	eachDB(t, func(t *testing.T, s *testServer) {
		e := newExecList(t, s, 100)
		inputs := make([]M, agents)
		for i := range inputs {
			inputs[i] = M{"title": fmt.Sprintf("T%03d", i), "taskListId": e.list}
		}
		bulkTasks(t, s, e.token, e.project, inputs)
		run := e.start(t)
		ids := make([]string, agents)
		for i := range ids {
			ids[i] = e.claim(t, run).S("agent.id")
		}
		client := fastClient(2 * agents)
		errs := make([]error, 2*agents)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range 2 * agents {
			wg.Go(func() {
				<-start
				id := ids[i%agents]
				if i < agents {
					errs[i] = s.call(client, e.agent, heartbeatMutation, M{"in": M{"agentId": id}}, nil)
				} else {
					errs[i] = s.call(client, e.agent, `mutation($in: AppendExecutionLogInput!) {
						appendExecutionLog(input: $in) { execution { id } } }`, M{"in": M{"agentId": id, "lines": []string{"x"}}}, nil)
				}
			})
		}
		close(start)
		wg.Wait()
		for i, err := range errs {
			require.NoError(t, err, "call %d", i)
		}
		d := s.query(t, e.token, `query($id: ID!) { executionRun(id: $id) { agents { heartbeatCount execution { logLines } } } }`,
			M{"id": run}).L("executionRun.agents")
		require.Len(t, d, agents)
		for _, a := range d {
			require.Equal(t, 1, a.N("heartbeatCount"))
			require.Equal(t, 1, a.N("execution.logLines"))
		}
	})
}

// TestClaimDescribesItself: what an agent says of itself when it claims is
// bounded, and the task's history names its host, not its opaque id.
func TestClaimDescribesItself(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		e := newExecList(t, s, 1)
		bulkTasks(t, s, e.token, e.project, []M{{"title": "one", "taskListId": e.list}})
		run := e.start(t)
		for field, in := range map[string]M{
			"hostname":         {"hostname": strings.Repeat("h", 256)},
			"processId":        {"processId": strings.Repeat("1", 65)},
			"workingDirectory": {"workingDirectory": strings.Repeat("d", 4097)},
		} {
			in["runId"] = run
			r := s.requireCode(t, e.agent, claimMutation, M{"in": in}, "BAD_USER_INPUT")
			require.Equal(t, field, r.ext("field"))
		}
		task := s.query(t, e.agent, claimMutation, M{"in": M{"runId": run, "hostname": "builder-7"}}).S("claimTask.task.id")
		h := s.query(t, e.token, `query($id: ID!) { task(id: $id) { stateHistory { toStatus reason } } }`, M{"id": task})
		var reasons []string
		for _, c := range h.L("task.stateHistory") {
			if c.S("toStatus") == "IN_PROGRESS" {
				reasons = append(reasons, c.S("reason"))
			}
		}
		require.Equal(t, []string{"claimed by the agent on builder-7 (attempt 1)"}, reasons)
	})
}
