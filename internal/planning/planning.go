// Package planning computes the wave plan of a task list: which of its unfinished
// tasks run in parallel, in what order, which pairs may never share a wave, the
// critical path, and which tasks cannot be planned and why. It is pure — the
// standard library and internal/domain only, no database — so that the dry run
// (the wavePlan query) and a run that materialises its waves get the same plan
// from the same input.
//
// # Rules
//
// Only the list's tasks that are not COMPLETED are planned. Ordering edges are
// `A DEPENDS_ON B` (B before A) and `A BLOCKS B` (A before B). An edge to a
// COMPLETED task of the list is met. A dependency on a task outside the list is
// met when that task is COMPLETED; otherwise the task is unplannable.
//
// Two tasks conflict when they touch the same file with a conflicting pair of
// operations (FILE_CONFLICT), or when they are linked by CONFLICTS_WITH
// (RESOURCE_CONFLICT). Conflicting pairs, in either order: CREATE/CREATE,
// CREATE/DELETE, UPDATE/UPDATE, UPDATE/DELETE, DELETE/DELETE, DELETE/READ; safe:
// READ/READ, CREATE/UPDATE, CREATE/READ, UPDATE/READ. Conflicting tasks never
// share a wave.
//
// # Algorithm
//
//  1. Unplannable tasks are set aside first: a task with a dependency outside the
//     list that is not COMPLETED; a task on a dependency cycle among the list's
//     tasks (links are checked for cycles when they are made, so this is only
//     defensive); and, transitively, every task that depends on an unplannable
//     task. Each gets a reason naming its direct causes by display id.
//  2. The others are placed by Kahn's algorithm. The ready set holds the tasks
//     whose dependencies are all placed, ordered by priorityScore descending, then
//     displayId ascending, then id ascending (display ids are unique; the id only
//     keeps the order total on odd input). The first ready task is taken and
//     placed in the smallest wave w >= 1 + the highest wave of its dependencies (1
//     without any) in which it conflicts with no task already placed; then every
//     dependent whose dependencies are now all placed joins the ready set. Until
//     the ready set is empty.
//
// Every wave from 1 to the last is non-empty: a task in wave w > 1 has a
// dependency or a conflicting task in wave w-1. Within a wave, tasks are listed in
// the ready-set order (priorityScore descending, displayId ascending), the order
// in which they should be claimed.
//
// The critical path is the chain of dependencies among the planned tasks with the
// most effort hours (domain.EffortHours; a task without an effort counts as
// DefaultEffort). On a tie the chain ends at the task first in the ready-set
// order, and each step back takes, of the dependencies with the longest chains,
// the one first in that order.
//
// An operation outside the four known ones (impossible through the API) is
// taken to conflict with every operation.
//
// Conflicts lists every FILE_CONFLICT (one per pair of tasks and file) and
// RESOURCE_CONFLICT between two planned tasks, whether or not they are also
// ordered by a dependency. DEPENDENCY pairs are not listed: the ordering is the
// waves themselves. Pairs regroups the conflicts by pair of tasks and adds the
// DEPENDENCY pairs (direct ordering links), for the parallelism analysis a run
// records.
//
// The plan depends only on the content of the input, never on the order of its
// slices: the same tasks and links always give the same plan.
package planning

import (
	"github.com/taskgraph/taskgraph/internal/domain"
)

// DefaultEffort is the effort a task without one counts as on the critical path:
// an unestimated task is assumed to be of average size, not free, so that it
// lengthens a chain like any real work.
const DefaultEffort = domain.EffortMedium

// Task is a task of the list being planned.
type Task struct {
	ID            string
	DisplayID     string
	Status        domain.TaskStatus
	PriorityScore int
	Effort        *domain.Effort
	Files         []FileImpact
}

// FileImpact is what a task does to one file.
type FileImpact struct {
	Path      string
	Operation domain.FileOperation
}

// Link is a relationship that touches a task of the list. Only DEPENDS_ON,
// BLOCKS and CONFLICTS_WITH matter; other types are ignored.
type Link struct {
	Source, Target string
	Type           domain.RelationshipType
}

// OutsideTask is a task outside the list that a task of the list waits on.
type OutsideTask struct {
	ID        string
	DisplayID string
	Status    domain.TaskStatus
}

// Input is everything a plan is computed from.
type Input struct {
	// Tasks are the list's tasks, in any status (COMPLETED ones are not planned).
	Tasks []Task
	// Links are the relationships that touch the list's tasks.
	Links []Link
	// Outside are the tasks outside the list that the list's tasks depend on. A
	// dependency on a task that is neither here nor in Tasks counts as unmet.
	Outside []OutsideTask
}

// Plan is the result of planning a list.
type Plan struct {
	// Waves in order, numbered from 1.
	Waves []Wave
	// Conflicts are the conflicting pairs of planned tasks.
	Conflicts []Conflict
	// CriticalPath is the longest chain of dependencies by effort hours.
	CriticalPath CriticalPath
	// Unplannable are the unfinished tasks left out of the waves, by display id.
	Unplannable []Unplannable
	// TotalTasks is the number of tasks placed in waves.
	TotalTasks int
	// EstimatedHours is the effort of every planned task, in hours.
	EstimatedHours float64
}

// Wave is a set of tasks that may run in parallel once the waves before it are done.
type Wave struct {
	Number  int
	TaskIDs []string
}

// Conflict is a pair of tasks that must not run in the same wave. A is the task
// with the smaller display id. For a FILE_CONFLICT, FilePath is the file and
// Operations the conflicting operations of A and B on it (the first conflicting
// combination in the order CREATE, UPDATE, DELETE, READ when a task has several).
type Conflict struct {
	A, B       string
	Type       domain.ConflictType
	FilePath   *string
	Operations []domain.FileOperation
}

// CriticalPath is a chain of tasks, each depending on the one before it.
type CriticalPath struct {
	TaskIDs        []string
	EstimatedHours float64
}

// Unplannable is a task that cannot be planned, with the reason.
type Unplannable struct {
	TaskID string
	Reason string
	// Blockers are the ids of the direct causes: outside tasks not COMPLETED,
	// unplannable dependencies, the other tasks of a cycle (the task itself when
	// it depends on itself).
	Blockers []string
}

// WaveOf maps each planned task to its wave number.
func (p *Plan) WaveOf() map[string]int {
	out := make(map[string]int, p.TotalTasks)
	for _, w := range p.Waves {
		for _, id := range w.TaskIDs {
			out[id] = w.Number
		}
	}
	return out
}

// Hours is the effort of a task in hours, DefaultEffort when it has none.
func Hours(effort *domain.Effort) float64 {
	if effort == nil {
		return domain.EffortHours[DefaultEffort]
	}
	if h, ok := domain.EffortHours[*effort]; ok {
		return h
	}
	return domain.EffortHours[DefaultEffort]
}

// Compute plans in. It never fails: what cannot be planned is reported in
// Plan.Unplannable.
func Compute(in Input) *Plan {
	b := newBuilder(in)
	b.markUnplannable()
	order := b.place()
	return b.plan(order)
}
