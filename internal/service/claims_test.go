package service_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/store"
)

// TestClaimsHammer: many goroutines claim and complete the tasks of one
// run at once, under both schedules. Observed by counting rows, never by
// timing: every claim that returns sees at most maxParallelAgents live
// agents in the run; each task is executed exactly once; the agents' working
// intervals by the database clock never overlap more than maxParallelAgents
// deep (a slot's next agent starts after its last one ended); under EAGER no
// two conflicting tasks' executions overlap and no task starts before the
// tasks it waits on ended; no transaction was aborted; the run completes
// with its counters true.
func TestClaimsHammer(t *testing.T) {
	for _, schedule := range []domain.TaskListSchedule{domain.ScheduleWaves, domain.ScheduleEager} {
		t.Run(string(schedule), func(t *testing.T) {
			run(t, func(t *testing.T, b *bundle) {
				const (
					limit   = 4
					workers = 12
				)
				tasks := 48
				if b.db.Dialect() == store.SQLite {
					tasks = 24 // one writer: the same interleavings, fewer of them
				}
				ctx := as(b.owner)
				list, err := b.svc.Lists.CreateTaskList(ctx, domain.CreateTaskListInput{ProjectID: b.project.GlobalID(),
					Name: "hammer", MaxParallelAgents: ptr(limit), Schedule: &schedule})
				require.NoError(t, err)
				byID := map[string]*domain.Task{}
				ids := make([]*domain.Task, tasks)
				for i := range ids {
					in := func(in *domain.CreateTaskInput) {
						in.TaskListID = ptr(list.GlobalID())
						// Every third task touches one of three files: conflicting pairs.
						if i%3 == 0 {
							in.FileImpacts = []*domain.FileImpactInput{{FilePath: fmt.Sprintf("f%d.go", i%9/3), Operation: domain.OpUpdate}}
						}
					}
					ids[i] = b.createTask(fmt.Sprintf("T%02d", i), in)
					byID[ids[i].ID] = ids[i]
				}
				// Dependencies: each task of the second half waits on one of the first.
				for i := tasks / 2; i < tasks; i += 2 {
					b.mustLink(ids[i], ids[i-tasks/2], domain.RelDependsOn)
				}
				r, err := b.svc.Runs.StartExecutionRun(ctx, domain.StartExecutionRunInput{TaskListID: list.GlobalID()})
				require.NoError(t, err)
				require.Equal(t, schedule, r.Schedule)
				aborts := b.db.Aborts()

				agentCtx := as(b.agent)
				var (
					wg      sync.WaitGroup
					mu      sync.Mutex
					errs    []error
					claimed = map[string]int{}
				)
				fail := func(err error) {
					mu.Lock()
					defer mu.Unlock()
					errs = append(errs, err)
				}
				for range workers {
					wg.Go(func() {
						for {
							res, err := b.svc.Runs.ClaimTask(agentCtx, domain.ClaimTaskInput{RunID: r.GlobalID()})
							if err != nil {
								fail(err)
								return
							}
							if res.Task == nil {
								if *res.WaitReason == domain.WaitRunFinished {
									return
								}
								time.Sleep(time.Millisecond) // poll again
								continue
							}
							live := countLive(t, b.db, r.ID)
							if live > limit {
								fail(fmt.Errorf("%d live agents, limit %d", live, limit))
							}
							mu.Lock()
							claimed[res.Task.ID]++
							mu.Unlock()
							if _, _, err := b.svc.Runs.CompleteTask(agentCtx, domain.CompleteTaskInput{AgentID: res.Agent.GlobalID()}); err != nil {
								fail(err)
								return
							}
						}
					})
				}
				wg.Wait()
				require.Empty(t, errs)
				require.Zero(t, b.db.Aborts()-aborts, "no transaction aborted")
				require.Len(t, claimed, tasks)
				for id, n := range claimed {
					require.Equal(t, 1, n, "task %s claimed %d times", byID[id].DisplayID, n)
				}

				execs, err := b.db.Runs.ExecutionsOfRuns(context.Background(), []string{r.ID})
				require.NoError(t, err)
				require.Len(t, execs, tasks, "one execution per task")
				ended := map[string]*domain.TaskExecution{}
				for _, e := range execs {
					require.Equal(t, domain.ExecCompleted, e.Status)
					require.NotNil(t, e.EndedAt)
					require.Nil(t, ended[e.TaskID], "task executed twice")
					ended[e.TaskID] = e
				}
				agents, err := b.db.Runs.AgentsOfRun(context.Background(), r.ID)
				require.NoError(t, err)
				require.LessOrEqual(t, maxOverlap(agents), limit, "agents' working intervals")

				if schedule == domain.ScheduleEager {
					overlaps := func(a, b *domain.TaskExecution) bool {
						return a.StartedAt.Before(*b.EndedAt) && b.StartedAt.Before(*a.EndedAt)
					}
					for i := 0; i < tasks; i += 3 {
						for j := i + 3; j < tasks; j += 3 {
							if i%9 == j%9 { // the same file: UPDATE/UPDATE conflicts
								require.False(t, overlaps(ended[ids[i].ID], ended[ids[j].ID]), "%s and %s ran at once",
									ids[i].DisplayID, ids[j].DisplayID)
							}
						}
					}
					for i := tasks / 2; i < tasks; i += 2 {
						first, then := ended[ids[i-tasks/2].ID], ended[ids[i].ID]
						require.False(t, then.StartedAt.Before(*first.EndedAt), "%s started before %s ended",
							ids[i].DisplayID, ids[i-tasks/2].DisplayID)
					}
				}

				final, err := b.svc.Runs.ExecutionRun(ctx, r.GlobalID())
				require.NoError(t, err)
				require.Equal(t, domain.RunCompleted, final.Status)
				require.Equal(t, tasks, final.TasksCompleted)
				require.Equal(t, tasks, final.AgentsSpawned)
				require.Zero(t, final.AgentsActive)
				require.LessOrEqual(t, final.MaxParallelReached, limit)
				require.Equal(t, final.WavesTotal, final.WavesCompleted)
				l, err := b.svc.Lists.TaskList(ctx, list.GlobalID())
				require.NoError(t, err)
				require.Equal(t, tasks, l.CompletedTasks, "the list's counters moved with every completion")
			})
		})
	}
}

// countLive counts the run's agents that are not terminated, from their rows.
func countLive(t *testing.T, db *store.DB, runID string) int {
	t.Helper()
	agents, err := db.Runs.AgentsOfRun(context.Background(), runID)
	require.NoError(t, err)
	n := 0
	for _, a := range agents {
		if a.Status.Live() {
			n++
		}
	}
	return n
}

// maxOverlap is the most agents whose [spawnedAt, terminatedAt) intervals
// overlap at one instant (live agents: open-ended).
func maxOverlap(agents []*domain.BuildAgent) int {
	type edge struct {
		at    time.Time
		delta int
	}
	var edges []edge
	for _, a := range agents {
		edges = append(edges, edge{a.SpawnedAt, 1})
		if a.TerminatedAt != nil {
			edges = append(edges, edge{*a.TerminatedAt, -1})
		}
	}
	// An agent that ends at the instant another starts does not overlap it.
	slices.SortFunc(edges, func(x, y edge) int {
		if c := x.at.Compare(y.at); c != 0 {
			return c
		}
		return x.delta - y.delta
	})
	best, cur := 0, 0
	for _, e := range edges {
		cur += e.delta
		best = max(best, cur)
	}
	return best
}
