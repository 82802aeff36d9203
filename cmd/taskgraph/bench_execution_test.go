package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/loader"
	"github.com/taskgraph/taskgraph/internal/testdb"
)

// Benchmarks of execution: claims, heartbeats, heartbeat capacity, and a
// simulated run of a random 500-task DAG. All go through the real server
// over HTTP, on SQLite and on PostgreSQL when TASKGRAPH_TEST_DATABASE_URL is
// set. Knobs (environment):
//
//	TASKGRAPH_BENCH_CLIENTS        parallel clients of BenchmarkClaim (32)
//	TASKGRAPH_BENCH_AGENTS         live agents of BenchmarkHeartbeat (50)
//	TASKGRAPH_BENCH_CAPACITY       set to 1 to run BenchmarkHeartbeatCapacity
//	TASKGRAPH_BENCH_CAPACITY_STEPS agents per step (100,250,500,1000,2000)
//	TASKGRAPH_BENCH_CAPACITY_SECS  seconds per step (5)
//	TASKGRAPH_BENCH_MS_PER_HOUR    simulated milliseconds per effort hour (20)
//	TASKGRAPH_BENCH_SIM_AGENTS     agents of BenchmarkSimulatedRun (8)
//	TASKGRAPH_BENCH_SCHEDULES      schedules BenchmarkSimulatedRun runs (WAVES,EAGER)

func envIntOr(key string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(key)); err == nil && v > 0 {
		return v
	}
	return def
}

// benchList is a project with one task list and an AGENT token, for
// benchmarks (newExecList wants a *testing.T).
func benchList(tb testing.TB, s *testServer, maxParallel int) *execList {
	tb.Helper()
	p := &planList{s: s, token: s.AdminToken, ids: map[string]string{}, names: map[string]string{}}
	p.project = s.createProject(tb, p.token, fmt.Sprintf("bx%04d", planSlugs.Add(1)))
	p.list = s.query(tb, p.token, `mutation($in: CreateTaskListInput!) { createTaskList(input: $in) { taskList { id } } }`,
		M{"in": M{"projectId": p.project, "name": "bench", "maxParallelAgents": maxParallel}}).S("createTaskList.taskList.id")
	_, tok := s.userWithToken(tb, fmt.Sprintf("bagent%04d", planSlugs.Add(1)), "AGENT", p.project)
	return &execList{planList: p, agent: tok}
}

// addList adds another list (maxParallel) to e's project and returns its id.
func (e *execList) addList(tb testing.TB, maxParallel int) string {
	tb.Helper()
	return e.s.query(tb, e.token, `mutation($in: CreateTaskListInput!) { createTaskList(input: $in) { taskList { id } } }`,
		M{"in": M{"projectId": e.project, "name": fmt.Sprintf("l%d", planSlugs.Add(1)), "maxParallelAgents": maxParallel}}).S("createTaskList.taskList.id")
}

// flatTasks creates n independent tasks in list.
func (e *execList) flatTasks(tb testing.TB, list string, n int) []string {
	tb.Helper()
	in := make([]M, n)
	for i := range in {
		in[i] = M{"title": fmt.Sprintf("task %d", i), "taskListId": list}
	}
	return bulkTasks(tb, e.s, e.token, e.project, in)
}

func (e *execList) startList(tb testing.TB, list string) string {
	tb.Helper()
	return e.s.query(tb, e.token, `mutation($in: StartExecutionRunInput!) { startExecutionRun(input: $in) { run { id } } }`,
		M{"in": M{"taskListId": list}}).S("startExecutionRun.run.id")
}

// claimResult is the part of claimTask the benchmarks read.
type claimResult struct {
	ClaimTask struct {
		Agent      *struct{ ID string }
		Task       *struct{ ID string }
		WaitReason *string
	}
}

// claimN claims n tasks of run one after the other and returns the agents.
func (e *execList) claimN(tb testing.TB, c *http.Client, run string, n int) []string {
	tb.Helper()
	agents := make([]string, 0, n)
	for range n {
		var r claimResult
		require.NoError(tb, e.s.call(c, e.agent, claimMutation, M{"in": M{"runId": run}}, &r))
		require.NotNil(tb, r.ClaimTask.Agent, "wait reason %v", r.ClaimTask.WaitReason)
		agents = append(agents, r.ClaimTask.Agent.ID)
	}
	return agents
}

// statementsOf counts the SQL statements of one call on an otherwise idle
// server.
func statementsOf(tb testing.TB, s *testServer, f func()) int64 {
	tb.Helper()
	before := s.DB.Statements()
	f()
	return s.DB.Statements() - before
}

// BenchmarkClaim: one iteration is a claim followed by the completion of the
// claimed task (which frees the agent's slot), by P parallel clients over
// HTTP against one run whose only wave holds b.N tasks; maxParallelAgents is
// 100 (the API's maximum). Reports claims/s (the sustained rate, completions
// included: every claim of a real run is paired with one), claim latency
// percentiles, and SQL statements of one claim and one completion measured
// alone. TASKGRAPH_BENCH_CPUPROFILE writes a CPU profile of the measured
// part.
func BenchmarkClaim(b *testing.B) {
	clients := envIntOr("TASKGRAPH_BENCH_CLIENTS", 32)
	for _, c := range testdb.Cases(b) {
		b.Run(c.Name, func(b *testing.B) {
			s := startServerWait(b, c.URL(b), loader.DefaultTiming)
			hc := fastClient(clients)
			e := benchList(b, s, 100)
			e.flatTasks(b, e.list, b.N+1)
			run := e.startList(b, e.list)
			var claimStmts, completeStmts int64
			var probe []string
			claimStmts = statementsOf(b, s, func() { probe = e.claimN(b, hc, run, 1) })
			completeStmts = statementsOf(b, s, func() {
				require.NoError(b, s.call(hc, e.agent, completeMutation, M{"in": M{"agentId": probe[0]}}, nil))
			})

			var lat latencies // of the claims alone
			stopProfile := profileCPU(b)
			elapsed, _ := closedLoop(b, clients, func(int, int64) error {
				t0 := time.Now()
				var r claimResult
				if err := s.call(hc, e.agent, claimMutation, M{"in": M{"runId": run}}, &r); err != nil {
					return err
				}
				lat.add(time.Since(t0))
				if r.ClaimTask.Agent == nil {
					return fmt.Errorf("no task: %v", *r.ClaimTask.WaitReason)
				}
				return s.call(hc, e.agent, completeMutation, M{"in": M{"agentId": r.ClaimTask.Agent.ID}}, nil)
			})
			stopProfile()
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "claims/s")
			b.ReportMetric(lat.ms(0.5), "claim-p50-ms")
			b.ReportMetric(lat.ms(0.99), "claim-p99-ms")
			b.ReportMetric(float64(claimStmts), "stmts/claim")
			b.ReportMetric(float64(completeStmts), "stmts/complete")
		})
	}
}

// BenchmarkHeartbeat: N live agents (TASKGRAPH_BENCH_AGENTS, default 50) of
// one run heartbeat as fast as they can, each waiting for its answer; one
// iteration is one heartbeat. Reports heartbeats/s, latency percentiles, and
// the SQL statements of one heartbeat, one appendExecutionLog and one
// recordTestResult measured alone.
func BenchmarkHeartbeat(b *testing.B) {
	agents := min(envIntOr("TASKGRAPH_BENCH_AGENTS", 50), 100)
	for _, c := range testdb.Cases(b) {
		b.Run(c.Name, func(b *testing.B) {
			s := startServerWait(b, c.URL(b), loader.DefaultTiming)
			hc := fastClient(agents)
			e := benchList(b, s, 100)
			in := make([]M, agents)
			for i := range in {
				in[i] = M{"title": fmt.Sprintf("task %d", i), "taskListId": e.list, "codebaseTests": []string{"go test"}}
			}
			bulkTasks(b, s, e.token, e.project, in)
			run := e.startList(b, e.list)
			ids := e.claimN(b, hc, run, agents)
			hb := func(agent string) error {
				return s.call(hc, e.agent, heartbeatMutation, M{"in": M{"agentId": agent, "progressPercent": 50}}, nil)
			}
			hbStmts := statementsOf(b, s, func() { require.NoError(b, hb(ids[0])) })
			logStmts := statementsOf(b, s, func() {
				require.NoError(b, s.call(hc, e.agent, `mutation($in: AppendExecutionLogInput!) { appendExecutionLog(input: $in) { execution { id } } }`,
					M{"in": M{"agentId": ids[0], "lines": []string{"a", "b"}}}, nil))
			})
			testStmts := statementsOf(b, s, func() {
				require.NoError(b, s.call(hc, e.agent, `mutation($in: RecordTestResultInput!) { recordTestResult(input: $in) { testResult { id } } }`,
					M{"in": M{"agentId": ids[0], "level": "CODEBASE", "testIndex": 0, "status": "PASSED"}}, nil))
			})

			elapsed, lat := closedLoop(b, len(ids), func(agent int, _ int64) error { return hb(ids[agent]) })
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "heartbeats/s")
			b.ReportMetric(lat.ms(0.5), "p50-ms")
			b.ReportMetric(lat.ms(0.99), "p99-ms")
			b.ReportMetric(float64(hbStmts), "stmts/heartbeat")
			b.ReportMetric(float64(logStmts), "stmts/log")
			b.ReportMetric(float64(testStmts), "stmts/test-result")
		})
	}
}

// BenchmarkHeartbeatCapacity: how many agents heartbeating once a second one
// server holds with p99 latency under 20ms. Steps of N agents (one project,
// lists of 100 agents each: maxParallelAgents is at most 100), each agent
// heartbeating every second at its own phase (after a first heartbeat each,
// which is news and not measured), for a few seconds per step;
// it reports p50/p99 per step and the largest N whose p99 stayed under 20ms,
// and logs per step the SQL statements and the CPU time of the test process
// (server and client together) per heartbeat.
// Minutes long: it runs only with TASKGRAPH_BENCH_CAPACITY=1, once (its
// result does not depend on b.N).
func BenchmarkHeartbeatCapacity(b *testing.B) {
	if os.Getenv("TASKGRAPH_BENCH_CAPACITY") != "1" {
		b.Skip("set TASKGRAPH_BENCH_CAPACITY=1 to run")
	}
	var steps []int
	for _, f := range strings.Split(envOr("TASKGRAPH_BENCH_CAPACITY_STEPS", "100,250,500,1000,2000"), ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		require.NoError(b, err)
		steps = append(steps, n)
	}
	secs := envIntOr("TASKGRAPH_BENCH_CAPACITY_SECS", 5)
	for _, c := range testdb.Cases(b) {
		b.Run(c.Name, func(b *testing.B) {
			s := startServerWait(b, c.URL(b), loader.DefaultTiming)
			hc := fastClient(steps[len(steps)-1])
			e := benchList(b, s, 100)
			var agents []string
			best := 0
			for _, n := range steps {
				// More agents: new lists of up to 100, each with a run.
				for len(agents) < n {
					k := min(100, n-len(agents))
					list := e.addList(b, 100)
					e.flatTasks(b, list, k)
					fresh := e.claimN(b, hc, e.startList(b, list), k)
					// An agent's first heartbeat is news (an event, under
					// the project's event sequence); the steps measure the
					// steady state, where every heartbeat is a pulse.
					for _, id := range fresh {
						require.NoError(b, s.call(hc, e.agent, heartbeatMutation, M{"in": M{"agentId": id}}, nil))
					}
					agents = append(agents, fresh...)
				}
				var (
					lat  latencies
					errs atomic.Int64
					wg   sync.WaitGroup
				)
				ctx, cancel := context.WithTimeout(context.Background(), time.Duration(secs)*time.Second)
				stmts0, cpu0 := s.DB.Statements(), processCPU(b)
				for i, id := range agents {
					wg.Go(func() {
						// The client's goroutines carry the label
						// bench=client, so a CPU profile (-cpuprofile) tells
						// the client's share from the server's: go tool pprof
						// -tagfocus bench=client.
						pprof.SetGoroutineLabels(pprof.WithLabels(ctx, pprof.Labels("bench", "client")))
						// Phases spread over the second.
						select {
						case <-ctx.Done():
							return
						case <-time.After(time.Duration(i) * time.Second / time.Duration(len(agents))):
						}
						tick := time.NewTicker(time.Second)
						defer tick.Stop()
						for {
							t0 := time.Now()
							if err := s.call(hc, e.agent, heartbeatMutation, M{"in": M{"agentId": id}}, nil); err != nil {
								errs.Add(1)
							} else {
								lat.add(time.Since(t0))
							}
							select {
							case <-ctx.Done():
								return
							case <-tick.C:
							}
						}
					})
				}
				wg.Wait()
				cancel()
				beats := float64(lat.len()) + float64(errs.Load())
				stmts := float64(s.DB.Statements()-stmts0) / beats
				cpu := processCPU(b) - cpu0
				p50, p99 := lat.ms(0.5), lat.ms(0.99)
				b.Logf("%s: %5d agents at 1 Hz: %6d heartbeats in %ds, p50 %7.2f ms, p99 %7.2f ms, %d errors, "+
					"%.2f statements and %.3f ms of this process's CPU (server and client) per heartbeat, process at %.0f%% of a core",
					c.Name, n, lat.len(), secs, p50, p99, errs.Load(), stmts, cpu.Seconds()*1000/beats,
					100*cpu.Seconds()/float64(secs))
				b.ReportMetric(stmts, fmt.Sprintf("stmts/heartbeat@%d", n))
				b.ReportMetric(p99, fmt.Sprintf("p99-ms@%d", n))
				b.ReportMetric(p50, fmt.Sprintf("p50-ms@%d", n))
				if p99 < 20 && errs.Load() == 0 {
					best = n
				}
			}
			b.ReportMetric(float64(best), "agents@p99<20ms")
		})
	}
}

// BenchmarkSimulatedRun: a run of a random 500-task DAG (seeded: the same
// graph every time) with random efforts, dependencies on recent tasks and
// file impacts that conflict, executed by A agents (TASKGRAPH_BENCH_SIM_AGENTS,
// default 8, also the list's maxParallelAgents) that each hold a task for its
// effort hours × TASKGRAPH_BENCH_MS_PER_HOUR (default 20ms) and poll every
// 5ms when none is ready, once per schedule (sub-benchmarks WAVES and EAGER;
// TASKGRAPH_BENCH_SCHEDULES picks). It reports the makespan, the lower bound
// max(critical path, total work / A) from the planner's wavePlan in the same
// scale, and their ratio; what an ideal list scheduler with EAGER's rules and
// turn makes of the same graph (ideal/bound: the schedule's own part of the
// gap, listSchedule); and where the agents' time went (the *-share metrics,
// claim-ms and complete-ms: the protocol's part), with the SQL statements
// per task. One iteration is one run; use -benchtime 1x.
func BenchmarkSimulatedRun(b *testing.B) {
	const tasks = 500
	agents := min(envIntOr("TASKGRAPH_BENCH_SIM_AGENTS", 8), 100)
	scale := time.Duration(envIntOr("TASKGRAPH_BENCH_MS_PER_HOUR", 20)) * time.Millisecond
	schedules := strings.Split(envOr("TASKGRAPH_BENCH_SCHEDULES", "WAVES,EAGER"), ",")
	for _, c := range testdb.Cases(b) {
		b.Run(c.Name, func(b *testing.B) {
			s := startServerWait(b, c.URL(b), loader.DefaultTiming)
			hc := fastClient(agents)
			for _, schedule := range schedules {
				b.Run(strings.TrimSpace(schedule), func(b *testing.B) {
					simulateRuns(b, s, hc, strings.TrimSpace(schedule), tasks, agents, scale)
				})
			}
		})
	}
}

// simulateRuns is one sub-benchmark of BenchmarkSimulatedRun: b.N runs of
// the simulated graph on a list with the given schedule.
func simulateRuns(b *testing.B, s *testServer, hc *http.Client, schedule string, tasks, agents int, scale time.Duration) {
	var makespan, bound, waveBound, ideal, idealNoConflicts time.Duration
	var waves, claims, polls int
	var statements int64
	var spent agentTime
	b.StopTimer()
	for range b.N {
		e := benchList(b, s, agents)
		s.query(b, e.token, `mutation($in: UpdateTaskListInput!) { updateTaskList(input: $in) { taskList { id } } }`,
			M{"in": M{"id": e.list, "schedule": schedule}})
		g := newSimGraph(tasks, 42)
		in := make([]M, tasks)
		for i, ef := range g.efforts {
			in[i] = M{"title": fmt.Sprintf("sim %03d", i), "taskListId": e.list, "effort": ef.name}
			if g.files[i] >= 0 {
				in[i]["fileImpacts"] = []M{{"filePath": fmt.Sprintf("src/f%02d.go", g.files[i]), "operation": "UPDATE"}}
			}
		}
		ids := bulkTasks(b, s, e.token, e.project, in)
		hoursOf := map[string]float64{}
		for i, id := range ids {
			hoursOf[id] = g.efforts[i].hours
		}
		var links [][3]string
		for _, l := range g.links {
			links = append(links, [3]string{ids[l[0]], ids[l[1]], "DEPENDS_ON"})
		}
		bulkLinks(b, s, e.token, links)
		plan := s.query(b, e.token, `query($id: ID!) { wavePlan(taskListId: $id) { totalTasks estimatedHours
					criticalPath { estimatedHours } waves { number tasks { id } } } }`, M{"id": e.list}).at("wavePlan")
		require.Equal(b, tasks, plan.N("totalTasks"))
		cp, total := plan.F("criticalPath.estimatedHours"), plan.F("estimatedHours")
		lb := max(cp, total/float64(agents))
		bound += time.Duration(lb * float64(scale))
		// What the wave barrier alone costs: no schedule that finishes
		// a wave before starting the next beats the sum, over the
		// waves, of max(longest task, the wave's work / agents).
		wb := 0.0
		for _, w := range plan.L("waves") {
			longest, work := 0.0, 0.0
			for _, id := range w.Col("tasks", "id") {
				longest, work = max(longest, hoursOf[id]), work+hoursOf[id]
			}
			wb += max(longest, work/float64(agents))
		}
		waveBound += time.Duration(wb * float64(scale))
		waves += len(plan.L("waves"))
		// What an ideal list scheduler (no claim or completion latency,
		// no polling) makes of the same graph with EAGER's rules and turn:
		// the part of the gap to the bound that is the schedule's own
		// (its turn, and conflicts the bound ignores), not the protocol's.
		waitingOn, conflicts := g.rules(ids)
		var order []string
		for _, w := range plan.L("waves") {
			order = append(order, w.Col("tasks", "id")...)
		}
		rank := domain.EagerRanks(order, domain.CriticalHours(hoursOf, waitingOn))
		ih := listSchedule(hoursOf, waitingOn, conflicts, rank, agents, 0)
		ideal += time.Duration(ih * float64(scale))
		inc := listSchedule(hoursOf, waitingOn, nil, rank, agents, 0)
		idealNoConflicts += time.Duration(inc * float64(scale))
		b.Logf("%s: %d tasks, %d links, %d waves, critical path %.1fh, total %.1fh, bound %.1fh, wave bound %.1fh, ideal list schedule %.1fh (%.1fh without conflicts)",
			schedule, tasks, len(links), len(plan.L("waves")), cp, total, lb, wb, ih, inc)

		run := e.startList(b, e.list)
		var (
			wg       sync.WaitGroup
			errOnce  sync.Once
			failure  error
			nClaims  atomic.Int64
			nPolls   atomic.Int64
			finished atomic.Bool
		)
		b.StartTimer()
		start := time.Now()
		stmts0 := s.DB.Statements()
		for range agents {
			wg.Go(func() {
				for !finished.Load() {
					var r claimResult
					t0 := time.Now()
					if err := s.call(hc, e.agent, claimMutation, M{"in": M{"runId": run}}, &r); err != nil {
						errOnce.Do(func() { failure = err })
						return
					}
					t1 := time.Now()
					if r.ClaimTask.Task == nil {
						if *r.ClaimTask.WaitReason == "RUN_FINISHED" {
							finished.Store(true)
							return
						}
						nPolls.Add(1)
						time.Sleep(5 * time.Millisecond)
						spent.polling.Add(int64(time.Since(t0)))
						continue
					}
					spent.claiming.Add(int64(t1.Sub(t0)))
					nClaims.Add(1)
					work := time.Duration(hoursOf[r.ClaimTask.Task.ID] * float64(scale))
					time.Sleep(work)
					t2 := time.Now()
					spent.working.Add(int64(work))
					spent.oversleeping.Add(int64(t2.Sub(t1) - work))
					if err := s.call(hc, e.agent, completeMutation, M{"in": M{"agentId": r.ClaimTask.Agent.ID}}, nil); err != nil {
						errOnce.Do(func() { failure = err })
						return
					}
					spent.completing.Add(int64(time.Since(t2)))
				}
			})
		}
		wg.Wait()
		makespan += time.Since(start)
		statements += s.DB.Statements() - stmts0
		b.StopTimer()
		require.NoError(b, failure)
		require.Equal(b, "COMPLETED", s.query(b, e.token, `query($id: ID!) { executionRun(id: $id) { status } }`,
			M{"id": run}).S("executionRun.status"))
		claims += int(nClaims.Load())
		polls += int(nPolls.Load())
	}
	n := float64(b.N)
	b.ReportMetric(makespan.Seconds()/n, "makespan-s")
	b.ReportMetric(bound.Seconds()/n, "bound-s")
	b.ReportMetric(makespan.Seconds()/bound.Seconds(), "makespan/bound")
	b.ReportMetric(waveBound.Seconds()/n, "wave-bound-s")
	b.ReportMetric(makespan.Seconds()/waveBound.Seconds(), "makespan/wave-bound")
	b.ReportMetric(float64(waves)/n, "waves")
	b.ReportMetric(float64(polls)/float64(claims), "polls/claim")
	b.ReportMetric(float64(statements)/float64(claims), "stmts/task")
	b.ReportMetric(ideal.Seconds()/n, "ideal-s")
	b.ReportMetric(ideal.Seconds()/bound.Seconds(), "ideal/bound")
	b.ReportMetric(idealNoConflicts.Seconds()/bound.Seconds(), "ideal-noconflicts/bound")
	// Where the agents' time went, as shares of agents × makespan: working
	// (the tasks' own time), claiming (claims that got a task), completing,
	// polling (claims that got none and the 5ms sleeps after them, the
	// run's tail included) and oversleeping (timer lateness beyond a
	// task's time).
	agentSecs := makespan.Seconds() * float64(agents)
	for _, x := range []struct {
		name string
		v    *atomic.Int64
	}{{"working", &spent.working}, {"claiming", &spent.claiming}, {"completing", &spent.completing},
		{"polling", &spent.polling}, {"oversleeping", &spent.oversleeping}} {
		b.ReportMetric(time.Duration(x.v.Load()).Seconds()/agentSecs, x.name+"-share")
	}
	b.ReportMetric(time.Duration(spent.claiming.Load()).Seconds()*1000/float64(claims), "claim-ms")
	b.ReportMetric(time.Duration(spent.completing.Load()).Seconds()*1000/float64(claims), "complete-ms")
}

// agentTime adds up the simulated agents' time by what they spend it on.
type agentTime struct {
	working, claiming, completing, polling, oversleeping atomic.Int64
}
