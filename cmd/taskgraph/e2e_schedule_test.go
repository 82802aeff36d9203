package main

import (
	"cmp"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// setSchedule sets the list's schedule through updateTaskList.
func (e *execList) setSchedule(t *testing.T, schedule string) {
	t.Helper()
	d := e.s.query(t, e.token, `mutation($in: UpdateTaskListInput!) { updateTaskList(input: $in) { taskList { id schedule } } }`,
		M{"in": M{"id": e.list, "schedule": schedule}})
	require.Equal(t, schedule, d.S("updateTaskList.taskList.schedule"))
}

// TestTaskListSchedule: a list's schedule is WAVES unless created or
// updated otherwise; updateTaskList changes only what it is given and checks
// its input; a run keeps the schedule it started with.
func TestTaskListSchedule(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		e := newExecList(t, s, 2)
		const listQuery = `query($id: ID!) { taskList(id: $id) { name description schedule maxParallelAgents autoExecute } }`
		l := s.query(t, e.token, listQuery, M{"id": e.list}).at("taskList")
		require.Equal(t, "WAVES", l.S("schedule"), "the default")

		eager := s.query(t, e.token, `mutation($in: CreateTaskListInput!) { createTaskList(input: $in) { taskList { schedule } } }`,
			M{"in": M{"projectId": e.project, "name": "eager", "schedule": "EAGER"}})
		require.Equal(t, "EAGER", eager.S("createTaskList.taskList.schedule"))

		d := s.query(t, e.token, `mutation($in: UpdateTaskListInput!) { updateTaskList(input: $in) {
			taskList { id name description schedule maxParallelAgents autoExecute } } }`,
			M{"in": M{"id": e.list, "schedule": "EAGER", "maxParallelAgents": 7}}).at("updateTaskList.taskList")
		require.Equal(t, "EAGER", d.S("schedule"))
		require.Equal(t, 7, d.N("maxParallelAgents"))
		require.Equal(t, l.S("name"), d.S("name"), "left out: unchanged")
		require.Equal(t, l.S("description"), d.S("description"))
		d = s.query(t, e.token, `mutation($in: UpdateTaskListInput!) { updateTaskList(input: $in) { taskList { name schedule } } }`,
			M{"in": M{"id": e.list, "name": "renamed"}}).at("updateTaskList.taskList")
		require.Equal(t, "renamed", d.S("name"))
		require.Equal(t, "EAGER", d.S("schedule"))

		const update = `mutation($in: UpdateTaskListInput!) { updateTaskList(input: $in) { taskList { id } } }`
		for _, c := range []struct {
			in    M
			field string
		}{
			{M{"id": e.list, "maxParallelAgents": 0}, "maxParallelAgents"},
			{M{"id": e.list, "maxParallelAgents": 101}, "maxParallelAgents"},
			{M{"id": e.list, "name": ""}, "name"},
		} {
			r := s.requireCode(t, e.token, update, M{"in": c.in}, "BAD_USER_INPUT")
			require.Equal(t, c.field, r.ext("field"))
		}
		r := s.do(t, e.token, update, M{"in": M{"id": e.list, "schedule": "SOMETIMES"}})
		require.NotEmpty(t, r.Errors, "an unknown schedule is refused")
		s.requireCode(t, e.agent, update, M{"in": M{"id": e.list, "schedule": "WAVES"}}, "FORBIDDEN")
		require.Equal(t, "renamed", s.query(t, e.token, listQuery, M{"id": e.list}).S("taskList.name"), "nothing changed")

		// A run keeps its schedule.
		e.add(t, "only", nil)
		run := e.start(t)
		e.setSchedule(t, "WAVES")
		got := s.query(t, e.token, `query($id: ID!) { executionRun(id: $id) { schedule maxParallelAgents } }`, M{"id": run})
		require.Equal(t, "EAGER", got.S("executionRun.schedule"))
		require.Equal(t, 7, got.N("executionRun.maxParallelAgents"))
	})
}

// TestEagerSchedule: under EAGER a task starts as soon as the tasks it
// waits on completed and no task it conflicts with runs — the waves stay
// the plan (numbers, statuses, events), not a barrier. The plan: wave 1
// {A, B}, wave 2 {C (waits on B), D (conflicts with A: both UPDATE x.go)};
// A has the higher priority, B the longer chain of work (B then C). Under
// WAVES the same list holds C back until A is done too.
func TestEagerSchedule(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		build := func(t *testing.T, schedule string) *execList {
			e := newExecList(t, s, 3)
			e.setSchedule(t, schedule)
			x := []M{{"filePath": "x.go", "operation": "UPDATE"}}
			e.add(t, "A", M{"fileImpacts": x, "priority": "P1"})
			e.add(t, "B", nil)
			e.add(t, "C", nil)
			e.add(t, "D", M{"fileImpacts": x})
			e.link(t, "C", "B", "DEPENDS_ON")
			require.Equal(t, [][]string{{"A", "B"}, {"C", "D"}}, e.waves(t, e.plan(t)))
			return e
		}
		claimed := func(t *testing.T, e *execList, run string) (name, agent string, wave int) {
			t.Helper()
			c := e.claim(t, run)
			require.True(t, c.Null("waitReason"), "a task was claimed")
			return e.names[c.S("task.id")], c.S("agent.id"), c.N("wave.waveNumber")
		}
		waveStatuses := func(t *testing.T, e *execList, run string) (int, []string) {
			r := e.run(t, run)
			var out []string
			for _, w := range r.L("waves") {
				out = append(out, w.S("status"))
			}
			return r.N("currentWave"), out
		}

		t.Run("WAVES holds the second wave", func(t *testing.T) {
			e := build(t, "WAVES")
			run := e.start(t)
			_, first, _ := claimed(t, e, run) // wave 1's two tasks
			_, second, _ := claimed(t, e, run)
			require.Equal(t, "NO_READY_TASK", e.claim(t, run).S("waitReason"))
			e.complete(t, first)
			// C's dependency may be done, but the wave is not: the barrier holds.
			require.Equal(t, "NO_READY_TASK", e.claim(t, run).S("waitReason"))
			e.complete(t, second)
			// Both done: only now the second wave.
			name, _, wave := claimed(t, e, run)
			require.Equal(t, 2, wave)
			require.Contains(t, []string{"C", "D"}, name)
		})

		t.Run("EAGER", func(t *testing.T) {
			e := build(t, "EAGER")
			run := e.start(t)
			cur, st := waveStatuses(t, e, run)
			require.Equal(t, 1, cur)
			require.Equal(t, []string{"IN_PROGRESS", "PENDING"}, st, "wave 1 starts with the run")

			// B heads the longest chain (B then C), so it goes first, before
			// A and its higher priority.
			nameB, agentB, wave := claimed(t, e, run)
			require.Equal(t, "B", nameB)
			require.Equal(t, 1, wave)
			nameA, agentA, _ := claimed(t, e, run)
			require.Equal(t, "A", nameA)
			// C waits on B, D conflicts with A: nothing is ready.
			require.Equal(t, "NO_READY_TASK", e.claim(t, run).S("waitReason"))

			e.complete(t, agentB)
			// C is ready although wave 1 still runs A: no barrier.
			nameC, agentC, wave := claimed(t, e, run)
			require.Equal(t, "C", nameC)
			require.Equal(t, 2, wave)
			cur, st = waveStatuses(t, e, run)
			require.Equal(t, 1, cur, "the first wave not over")
			require.Equal(t, []string{"IN_PROGRESS", "IN_PROGRESS"}, st)
			// D still conflicts with A, which runs.
			require.Equal(t, "NO_READY_TASK", e.claim(t, run).S("waitReason"))

			e.complete(t, agentA)
			cur, st = waveStatuses(t, e, run)
			require.Equal(t, 2, cur)
			require.Equal(t, []string{"COMPLETED", "IN_PROGRESS"}, st)
			nameD, agentD, _ := claimed(t, e, run)
			require.Equal(t, "D", nameD)
			e.complete(t, agentC)
			e.complete(t, agentD)

			r := e.run(t, run)
			require.Equal(t, "COMPLETED", r.S("status"))
			require.Equal(t, 2, r.N("currentWave"), "the last wave once all are over")
			require.Equal(t, 4, r.N("tasksCompleted"))
			require.Equal(t, 2, r.N("wavesCompleted"))
			require.Equal(t, 2, r.N("maxParallelReached"))
			require.Equal(t, []string{"RUN_STARTED", "WAVE_STARTED", "TASK_CLAIMED", "TASK_CLAIMED",
				"WAVE_STARTED", "TASK_CLAIMED", "WAVE_COMPLETED", "TASK_CLAIMED", "WAVE_COMPLETED", "RUN_COMPLETED"},
				e.eventTypes(t))
		})
	})
}

// TestEagerRunConcurrent: agents claiming and completing at once through
// the API, on a graph with chains and file conflicts, under EAGER. From the
// executions the API records (their database-clock start and end): every
// task ran exactly once, none started before the tasks it waits on ended,
// no two conflicting tasks ran at once, and never more agents than the
// list allows.
func TestEagerRunConcurrent(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		const (
			tasks  = 30
			agents = 6
			limit  = 4
		)
		e := newExecList(t, s, limit)
		e.setSchedule(t, "EAGER")
		names := make([]string, tasks)
		for i := range names {
			names[i] = fmt.Sprintf("T%02d", i)
			extra := M{}
			if i%2 == 0 { // half the tasks touch one of three files: conflicts
				extra["fileImpacts"] = []M{{"filePath": fmt.Sprintf("f%d.go", i%6/2), "operation": "UPDATE"}}
			}
			e.add(t, names[i], extra)
		}
		deps := map[string][]string{}
		for i := 3; i < tasks; i += 3 { // chains: each third task waits on the one three before
			e.link(t, names[i], names[i-3], "DEPENDS_ON")
			deps[names[i]] = append(deps[names[i]], names[i-3])
		}
		run := e.start(t)

		client := fastClient(agents)
		var (
			wg   sync.WaitGroup
			mu   sync.Mutex
			errs []error
		)
		for range agents {
			wg.Go(func() {
				for {
					var r claimResult
					if err := s.call(client, e.agent, claimMutation, M{"in": M{"runId": run}}, &r); err != nil {
						mu.Lock()
						errs = append(errs, err)
						mu.Unlock()
						return
					}
					if r.ClaimTask.Agent == nil {
						if *r.ClaimTask.WaitReason == "RUN_FINISHED" {
							return
						}
						time.Sleep(2 * time.Millisecond) // poll
						continue
					}
					if err := s.call(client, e.agent, completeMutation, M{"in": M{"agentId": r.ClaimTask.Agent.ID, "filesModified": []string{}}}, nil); err != nil {
						mu.Lock()
						errs = append(errs, err)
						mu.Unlock()
						return
					}
				}
			})
		}
		wg.Wait()
		require.Empty(t, errs)

		d := s.query(t, e.token, `query($id: ID!) { executionRun(id: $id) { status tasksCompleted maxParallelReached
			executions { task { id } status startedAt endedAt } agents { spawnedAt terminatedAt } } }`, M{"id": run}).at("executionRun")
		require.Equal(t, "COMPLETED", d.S("status"))
		require.Equal(t, tasks, d.N("tasksCompleted"))
		require.LessOrEqual(t, d.N("maxParallelReached"), limit)
		type span struct{ start, end time.Time }
		ran := map[string]span{}
		parse := func(v string) time.Time {
			at, err := time.Parse(time.RFC3339Nano, v)
			require.NoError(t, err)
			return at
		}
		for _, x := range d.L("executions") {
			name := e.names[x.S("task.id")]
			require.Equal(t, "COMPLETED", x.S("status"))
			_, twice := ran[name]
			require.False(t, twice, "%s executed twice", name)
			ran[name] = span{parse(x.S("startedAt")), parse(x.S("endedAt"))}
		}
		require.Len(t, ran, tasks, "every task executed")
		for task, waits := range deps {
			for _, w := range waits {
				require.False(t, ran[task].start.Before(ran[w].end), "%s started before %s ended", task, w)
			}
		}
		for i := 0; i < tasks; i += 2 {
			for j := i + 2; j < tasks; j += 2 {
				if i%6 != j%6 {
					continue // different files
				}
				a, b := ran[names[i]], ran[names[j]]
				require.False(t, a.start.Before(b.end) && b.start.Before(a.end), "%s and %s ran at once", names[i], names[j])
			}
		}
		// Agents' working intervals never overlap more than the limit deep.
		live, most := 0, 0
		type edge struct {
			at    time.Time
			delta int
		}
		var edges []edge
		for _, a := range d.L("agents") {
			edges = append(edges, edge{parse(a.S("spawnedAt")), 1}, edge{parse(a.S("terminatedAt")), -1})
		}
		// By time; at one instant an end before a start.
		slices.SortFunc(edges, func(x, y edge) int { return cmp.Or(x.at.Compare(y.at), cmp.Compare(x.delta, y.delta)) })
		for _, x := range edges {
			live += x.delta
			most = max(most, live)
		}
		require.LessOrEqual(t, most, limit)
	})
}
