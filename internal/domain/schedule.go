package domain

import (
	"cmp"
	"slices"
)

// TaskListSchedule is how a run of a task list hands out its tasks.
type TaskListSchedule string

const (
	// ScheduleWaves: the waves are a barrier. claimTask hands out tasks of
	// the current wave only; the next wave starts when every task of the
	// current one is over.
	ScheduleWaves TaskListSchedule = "WAVES"
	// ScheduleEager: the waves are the plan people see, not a barrier.
	// claimTask hands out any task of the run whose dependencies in the run
	// have completed and that conflicts with no task running now.
	ScheduleEager TaskListSchedule = "EAGER"
)

// DefaultSchedule is the schedule of a list created without one.
const DefaultSchedule = ScheduleWaves

// Valid reports whether s is a known schedule.
func (s TaskListSchedule) Valid() bool { return s == ScheduleWaves || s == ScheduleEager }

// The rules of the EAGER schedule. A run of an EAGER list records, when it
// starts, which of its tasks wait on which (RunDependencies), which pairs
// conflict (the plan's file and resource conflicts) and each task's turn
// (EagerRanks: the longest chain of work it starts, CriticalHours, first;
// then the plan's order, which is priorityScore then displayId within a
// wave). A claim then takes, among the run's PENDING tasks whose
// dependencies are met, the first in turn, and only when no task it
// conflicts with runs (EagerReady). The store filters candidates in SQL with
// the status sets below; the service decides on the locked candidate with
// EagerReady.

// EagerMetStatuses are the statuses of a dependency's place in the run that
// let the tasks waiting on it start: it completed. A failed dependency never
// frees its dependents — they are skipped.
var EagerMetStatuses = []WaveStatus{WaveCompleted}

// EagerBusyStatuses are the statuses of a conflicting task that keep a task
// from starting: it is being worked on. The claim reads them on the
// conflicting tasks' rows, which it holds locked while it decides (whoever
// moves a task in or out of work holds its row).
var EagerBusyStatuses = []TaskStatus{StatusInProgress, StatusValidating}

// EagerReady reports whether a PENDING task may start now under EAGER,
// given where each task it waits on stands in the run (deps) and the status
// of each task it conflicts with (partners).
func EagerReady(deps []WaveStatus, partners []TaskStatus) bool {
	for _, d := range deps {
		if !slices.Contains(EagerMetStatuses, d) {
			return false
		}
	}
	for _, p := range partners {
		if slices.Contains(EagerBusyStatuses, p) {
			return false
		}
	}
	return true
}

// RunDependency is one ordering constraint of a run: TaskID may start only
// once WaitsOnTaskID has completed.
type RunDependency struct {
	RunID         string `db:"run_id"`
	TaskID        string `db:"task_id"`
	WaitsOnTaskID string `db:"waits_on_task_id"`
}

// RunConflict is one half of a conflicting pair of a run's tasks: TaskID may
// not start while OtherTaskID runs (each pair is stored both ways).
type RunConflict struct {
	RunID       string `db:"run_id"`
	TaskID      string `db:"task_id"`
	OtherTaskID string `db:"other_task_id"`
}

// RunDependencies are the ordering constraints among a run's tasks (inRun)
// under links: who waits on whom (WaitingOn), both tasks in the run. A
// dependency on a task outside the run is not one of the run's: the plan has
// already placed it (a COMPLETED task, or a task a retry run leaves out).
// Sorted, each pair once.
func RunDependencies(runID string, links []*TaskRelationship, inRun map[string]bool) []RunDependency {
	var out []RunDependency
	for first, waiting := range WaitingOn(links) {
		if !inRun[first] {
			continue
		}
		for _, w := range waiting {
			if inRun[w] && w != first {
				out = append(out, RunDependency{RunID: runID, TaskID: w, WaitsOnTaskID: first})
			}
		}
	}
	slices.SortFunc(out, func(a, b RunDependency) int {
		return cmp.Or(cmp.Compare(a.TaskID, b.TaskID), cmp.Compare(a.WaitsOnTaskID, b.WaitsOnTaskID))
	})
	return slices.Compact(out)
}

// RunConflicts stores each conflicting pair of a run's tasks both ways, so a
// claim finds a task's partners by its own id. Sorted, each once.
func RunConflicts(runID string, pairs [][2]string) []RunConflict {
	out := make([]RunConflict, 0, 2*len(pairs))
	for _, p := range pairs {
		if p[0] == p[1] {
			continue
		}
		out = append(out, RunConflict{RunID: runID, TaskID: p[0], OtherTaskID: p[1]},
			RunConflict{RunID: runID, TaskID: p[1], OtherTaskID: p[0]})
	}
	slices.SortFunc(out, func(a, b RunConflict) int {
		return cmp.Or(cmp.Compare(a.TaskID, b.TaskID), cmp.Compare(a.OtherTaskID, b.OtherTaskID))
	})
	return slices.Compact(out)
}

// CriticalHours is, for each task of hours, the effort hours of the longest
// chain of work that starts with it: its own hours plus the longest chain of
// the tasks waiting on it (waitingOn, as WaitingOn gives it; tasks absent
// from hours are not followed). Taking the task with the longest chain first
// is the classic list-scheduling order that keeps the critical path moving
// while other agents fill in. A cycle (which the planner never leaves in a
// run) is cut where it closes.
func CriticalHours(hours map[string]float64, waitingOn map[string][]string) map[string]float64 {
	out := make(map[string]float64, len(hours))
	const (
		unseen = iota
		open
		done
	)
	state := make(map[string]int, len(hours))
	// Iterative depth-first search: chains can be thousands of tasks long.
	type frame struct {
		id   string
		next int
	}
	ids := make([]string, 0, len(hours))
	for id := range hours {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, root := range ids {
		if state[root] != unseen {
			continue
		}
		stack := []frame{{id: root}}
		state[root] = open
		for len(stack) > 0 {
			f := &stack[len(stack)-1]
			deps := waitingOn[f.id]
			if f.next < len(deps) {
				d := deps[f.next]
				f.next++
				if _, ok := hours[d]; ok && state[d] == unseen {
					state[d] = open
					stack = append(stack, frame{id: d})
				}
				continue
			}
			best := 0.0
			for _, d := range deps {
				if state[d] == done {
					best = max(best, out[d])
				}
			}
			out[f.id] = hours[f.id] + best
			state[f.id] = done
			stack = stack[:len(stack)-1]
		}
	}
	return out
}

// EagerRanks numbers the tasks of plan (in the plan's order: wave by wave,
// each in its order) by their turn in an EAGER run's claims, from 1: the
// longest chain of work (critical, as CriticalHours gives it) first, the
// plan's order among equals.
func EagerRanks(plan []string, critical map[string]float64) map[string]int {
	order := slices.Clone(plan)
	at := make(map[string]int, len(plan))
	for i, id := range plan {
		at[id] = i
	}
	slices.SortStableFunc(order, func(a, b string) int {
		return cmp.Or(cmp.Compare(critical[b], critical[a]), cmp.Compare(at[a], at[b]))
	})
	out := make(map[string]int, len(order))
	for i, id := range order {
		out[id] = i + 1
	}
	return out
}

// AdvanceEagerWave is what a wave of an EAGER run that is not over becomes,
// given its tally. Its tasks start when their own dependencies are met, not
// when the wave before ends, so waves overlap and may end in any order: a
// wave starts (IN_PROGRESS) when a claim first takes one of its tasks
// (StartsWave) — wave 1 when the run starts — and ends when none of its tasks
// is pending or running: FAILED when one failed, else COMPLETED; a wave that
// never started and has nothing left to do (every task skipped) is SKIPPED.
func AdvanceEagerWave(status WaveStatus, t WaveTally) WaveStatus {
	switch {
	case t.Open:
		return status
	case status == WavePending:
		return WaveSkipped
	case t.Failed > 0:
		return WaveFailed
	default:
		return WaveCompleted
	}
}

// StartsWave reports whether a claim of a task of a wave in status s starts
// that wave (EAGER: the first claim of a wave's task).
func StartsWave(s WaveStatus) bool { return s == WavePending }

// EagerCurrentWave is an EAGER run's current wave: the first wave, in plan
// order, that is not over — every wave before it is done, later ones may
// already be running. Once every wave is over, the last one (as under
// WAVES); nil for a run without waves.
func EagerCurrentWave(waves []*Wave) *int {
	for _, w := range waves {
		if !w.Status.Finished() {
			n := w.WaveNumber
			return &n
		}
	}
	if len(waves) == 0 {
		return nil
	}
	n := waves[len(waves)-1].WaveNumber
	return &n
}
