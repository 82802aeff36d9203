package planning_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/planning"
)

// task is a PENDING task whose id is "id-" + its display id.
func task(display string, score int, files ...planning.FileImpact) planning.Task {
	return planning.Task{ID: "id-" + display, DisplayID: display, Status: domain.StatusPending, PriorityScore: score, Files: files}
}

func file(path string, op domain.FileOperation) planning.FileImpact {
	return planning.FileImpact{Path: path, Operation: op}
}

func dependsOn(a, b string) planning.Link {
	return planning.Link{Source: "id-" + a, Target: "id-" + b, Type: domain.RelDependsOn}
}

func blocks(a, b string) planning.Link {
	return planning.Link{Source: "id-" + a, Target: "id-" + b, Type: domain.RelBlocks}
}

func conflictsWith(a, b string) planning.Link {
	return planning.Link{Source: "id-" + a, Target: "id-" + b, Type: domain.RelConflictsWith}
}

// waves renders a plan's waves as display ids ("id-" stripped).
func waves(p *planning.Plan) [][]string {
	out := [][]string{}
	for i, w := range p.Waves {
		if w.Number != i+1 {
			panic(fmt.Sprintf("wave %d numbered %d", i+1, w.Number))
		}
		out = append(out, display(w.TaskIDs))
	}
	return out
}

func display(ids []string) []string {
	out := []string{}
	for _, id := range ids {
		out = append(out, id[len("id-"):])
	}
	return out
}

func effort(e domain.Effort) *domain.Effort { return &e }

// TestDesignExample is the design's five-task example: T3 needs T1, T4 needs T2,
// T5 needs T3 and T4.
func TestDesignExample(t *testing.T) {
	in := planning.Input{
		Tasks: []planning.Task{task("T5", 40), task("T3", 40), task("T1", 40), task("T4", 40), task("T2", 40)},
		Links: []planning.Link{dependsOn("T3", "T1"), dependsOn("T4", "T2"), dependsOn("T5", "T3"), dependsOn("T5", "T4")},
	}
	p := planning.Compute(in)
	require.Equal(t, [][]string{{"T1", "T2"}, {"T3", "T4"}, {"T5"}}, waves(p))
	require.Empty(t, p.Conflicts)
	require.Empty(t, p.Unplannable)
	require.Equal(t, 5, p.TotalTasks)
	require.Equal(t, 30.0, p.EstimatedHours, "five tasks without effort count as MEDIUM")
	require.Equal(t, []string{"T1", "T3", "T5"}, display(p.CriticalPath.TaskIDs), "ties go to the smaller display id")
	require.Equal(t, 18.0, p.CriticalPath.EstimatedHours)
}

// conflictMatrix is the file-conflict matrix: true where the pair conflicts.
var conflictMatrix = []struct {
	a, b     domain.FileOperation
	conflict bool
}{
	{domain.OpCreate, domain.OpCreate, true},
	{domain.OpCreate, domain.OpDelete, true},
	{domain.OpUpdate, domain.OpUpdate, true},
	{domain.OpUpdate, domain.OpDelete, true},
	{domain.OpDelete, domain.OpDelete, true},
	{domain.OpDelete, domain.OpRead, true},
	{domain.OpRead, domain.OpRead, false},
	{domain.OpCreate, domain.OpUpdate, false},
	{domain.OpCreate, domain.OpRead, false},
	{domain.OpUpdate, domain.OpRead, false},
}

func TestConflictMatrix(t *testing.T) {
	require.Len(t, conflictMatrix, 10, "the ten unordered pairs of four operations")
	for _, c := range conflictMatrix {
		for _, pair := range [][2]domain.FileOperation{{c.a, c.b}, {c.b, c.a}} {
			t.Run(string(pair[0])+"/"+string(pair[1]), func(t *testing.T) {
				require.Equal(t, c.conflict, planning.OperationsConflict(pair[0], pair[1]))
				// A has the higher score, so it is placed first, in wave 1.
				p := planning.Compute(planning.Input{Tasks: []planning.Task{
					task("A", 50, file("src/x.go", pair[0])),
					task("B", 40, file("src/x.go", pair[1]), file("src/other.go", domain.OpUpdate)),
				}})
				if c.conflict {
					require.Equal(t, [][]string{{"A"}, {"B"}}, waves(p))
					require.Len(t, p.Conflicts, 1)
					cf := p.Conflicts[0]
					require.Equal(t, []string{"A", "B"}, display([]string{cf.A, cf.B}))
					require.Equal(t, domain.ConflictFile, cf.Type)
					require.Equal(t, "src/x.go", *cf.FilePath)
					require.Equal(t, []domain.FileOperation{pair[0], pair[1]}, cf.Operations)
				} else {
					require.Equal(t, [][]string{{"A", "B"}}, waves(p))
					require.Empty(t, p.Conflicts)
				}
			})
		}
	}
	require.True(t, planning.OperationsConflict("TRUNCATE", domain.OpRead), "an unknown operation is assumed to conflict")
}

func TestDifferentFilesNeverConflict(t *testing.T) {
	p := planning.Compute(planning.Input{Tasks: []planning.Task{
		task("A", 40, file("a.go", domain.OpDelete)), task("B", 40, file("b.go", domain.OpDelete)),
	}})
	require.Equal(t, [][]string{{"A", "B"}}, waves(p))
}

func TestConflictsWithSplitsAWave(t *testing.T) {
	p := planning.Compute(planning.Input{
		Tasks: []planning.Task{task("A", 40), task("B", 40), task("C", 40)},
		Links: []planning.Link{conflictsWith("B", "A")},
	})
	require.Equal(t, [][]string{{"A", "C"}, {"B"}}, waves(p))
	require.Len(t, p.Conflicts, 1)
	require.Equal(t, planning.Conflict{A: "id-A", B: "id-B", Type: domain.ConflictResource,
		Operations: []domain.FileOperation{}}, p.Conflicts[0])
}

// TestPriorityDecidesWhoWaits: of two conflicting ready tasks the one with the
// higher score takes the earlier wave, whatever the display ids say.
func TestPriorityDecidesWhoWaits(t *testing.T) {
	p := planning.Compute(planning.Input{Tasks: []planning.Task{
		task("A", 40, file("f", domain.OpUpdate)), task("B", 100, file("f", domain.OpUpdate)),
	}})
	require.Equal(t, [][]string{{"B"}, {"A"}}, waves(p))
}

// TestEarliestWaveAfterDependencies: a task goes to the first wave after its
// dependencies where nothing conflicts — which may be an earlier wave than the
// last one, and conflicts placed later do not move it.
func TestEarliestWaveAfterDependencies(t *testing.T) {
	p := planning.Compute(planning.Input{
		Tasks: []planning.Task{
			task("A", 90, file("x", domain.OpUpdate)),
			task("B", 80),
			task("C", 70),
			task("D", 60, file("x", domain.OpUpdate)), // ready at once, conflicts with A in wave 1
			task("E", 50, file("x", domain.OpRead)),   // ready at once, READ is safe with UPDATE
		},
		Links: []planning.Link{dependsOn("B", "A"), dependsOn("C", "B")},
	})
	require.Equal(t, [][]string{{"A", "E"}, {"B", "D"}, {"C"}}, waves(p))
}

func TestBlocksIsTheReverseDependency(t *testing.T) {
	p := planning.Compute(planning.Input{
		Tasks: []planning.Task{task("A", 10), task("B", 100)},
		Links: []planning.Link{blocks("A", "B")},
	})
	require.Equal(t, [][]string{{"A"}, {"B"}}, waves(p))
	// The same edge twice (DEPENDS_ON one way, BLOCKS the other) is one edge.
	p2 := planning.Compute(planning.Input{
		Tasks: []planning.Task{task("A", 10), task("B", 100)},
		Links: []planning.Link{blocks("A", "B"), dependsOn("B", "A")},
	})
	require.Equal(t, p, p2)
}

func TestIgnoredLinkTypes(t *testing.T) {
	var links []planning.Link
	for _, typ := range []domain.RelationshipType{domain.RelRelatedTo, domain.RelDuplicateOf, domain.RelSubtaskOf,
		domain.RelSupersedes, domain.RelImplements, domain.RelEnables, domain.RelInspiredBy, domain.RelTests} {
		links = append(links, planning.Link{Source: "id-B", Target: "id-A", Type: typ})
	}
	p := planning.Compute(planning.Input{Tasks: []planning.Task{task("A", 40), task("B", 40)}, Links: links})
	require.Equal(t, [][]string{{"A", "B"}}, waves(p))
}

func TestCompletedTasksAreNotPlanned(t *testing.T) {
	done := task("A", 100, file("x", domain.OpUpdate))
	done.Status = domain.StatusCompleted
	p := planning.Compute(planning.Input{
		Tasks: []planning.Task{done, task("B", 40, file("x", domain.OpUpdate)), task("C", 40)},
		Links: []planning.Link{dependsOn("B", "A"), conflictsWith("C", "A")},
	})
	require.Equal(t, [][]string{{"B", "C"}}, waves(p), "a dependency on a COMPLETED list task is met")
	require.Empty(t, p.Conflicts)
	require.Equal(t, 2, p.TotalTasks)
}

// TestOtherStatusesArePlanned: every status but COMPLETED is unfinished work.
func TestOtherStatusesArePlanned(t *testing.T) {
	var tasks []planning.Task
	for i, s := range []domain.TaskStatus{domain.StatusDraft, domain.StatusEvaluating, domain.StatusPending, domain.StatusBlocked,
		domain.StatusInProgress, domain.StatusValidating, domain.StatusFailed} {
		tk := task(fmt.Sprintf("T%d", i), 40)
		tk.Status = s
		tasks = append(tasks, tk)
	}
	p := planning.Compute(planning.Input{Tasks: tasks})
	require.Equal(t, 7, p.TotalTasks)
	require.Len(t, p.Waves, 1)
}

func TestOutsideDependencies(t *testing.T) {
	in := planning.Input{
		Tasks: []planning.Task{task("A", 40), task("B", 40), task("C", 40), task("D", 40), task("E", 40)},
		Links: []planning.Link{
			dependsOn("A", "X"), // X outside, IN_PROGRESS
			dependsOn("B", "A"), // through A
			dependsOn("C", "Y"), // Y outside, COMPLETED
			{Source: "id-Z", Target: "id-D", Type: domain.RelBlocks},                   // Z outside, FAILED, blocks D
			{Source: "id-E", Target: "id-W", Type: domain.RelDependsOn},                // W unknown
			{Source: "id-V", Target: "id-C", Type: domain.RelDependsOn},                // V outside waits on C: no matter
			{Source: "id-C", Target: "id-U", Type: domain.RelBlocks},                   // C blocks U outside: no matter
			{Source: "id-A", Target: "id-X", Type: domain.RelConflictsWith},            // ignored: X is not planned
			{Source: "id-X", Target: "id-Y", Type: domain.RelDependsOn},                // between outside tasks
			{Source: "id-Q", Target: "id-R", Type: domain.RelConflictsWith},            // nothing to do with the list
			{Source: "id-B", Target: "id-B", Type: domain.RelConflictsWith},            // self link, ignored
			{Source: "id-C", Target: "id-Y", Type: domain.RelBlocks},                   // Y (done) waits on C: no matter
			{Source: "id-D", Target: "id-Z", Type: domain.RelRelatedTo},                // ignored type
			{Source: "id-A", Target: "id-B", Type: domain.RelationshipType("UNKNOWN")}, // ignored type
		},
		Outside: []planning.OutsideTask{
			{ID: "id-X", DisplayID: "X", Status: domain.StatusInProgress},
			{ID: "id-Y", DisplayID: "Y", Status: domain.StatusCompleted},
			{ID: "id-Z", DisplayID: "Z", Status: domain.StatusFailed},
		},
	}
	p := planning.Compute(in)
	require.Equal(t, [][]string{{"C"}}, waves(p))
	require.Equal(t, []planning.Unplannable{
		{TaskID: "id-A", Reason: "depends on X (IN_PROGRESS), which is outside this list and not COMPLETED", Blockers: []string{"id-X"}},
		{TaskID: "id-B", Reason: "depends on A, which cannot be planned", Blockers: []string{"id-A"}},
		{TaskID: "id-D", Reason: "depends on Z (FAILED), which is outside this list and not COMPLETED", Blockers: []string{"id-Z"}},
		{TaskID: "id-E", Reason: "depends on task id-W, which is outside this list and not COMPLETED", Blockers: []string{"id-W"}},
	}, p.Unplannable)

	// Once X is COMPLETED, A and B are planned.
	in.Outside[0].Status = domain.StatusCompleted
	p = planning.Compute(in)
	require.Equal(t, [][]string{{"A", "C"}, {"B"}}, waves(p))
	require.Len(t, p.Unplannable, 2)
}

func TestSeveralCauses(t *testing.T) {
	p := planning.Compute(planning.Input{
		Tasks: []planning.Task{task("A", 40), task("B", 40), task("C", 40)},
		Links: []planning.Link{dependsOn("A", "X"), dependsOn("C", "A"), dependsOn("C", "B"), dependsOn("C", "Y"), dependsOn("B", "X")},
		Outside: []planning.OutsideTask{
			{ID: "id-X", DisplayID: "X", Status: domain.StatusPending},
			{ID: "id-Y", DisplayID: "Y", Status: domain.StatusBlocked},
		},
	})
	require.Empty(t, p.Waves)
	require.Equal(t, "depends on Y (BLOCKED), which is outside this list and not COMPLETED; "+
		"depends on A, which cannot be planned; depends on B, which cannot be planned", p.Unplannable[2].Reason)
	require.Equal(t, []string{"id-Y", "id-A", "id-B"}, p.Unplannable[2].Blockers)
	require.Equal(t, planning.CriticalPath{TaskIDs: []string{}}, p.CriticalPath)
}

// TestCycles: links are checked for cycles when made, but a plan must not loop
// or drop tasks if one slips through.
func TestCycles(t *testing.T) {
	p := planning.Compute(planning.Input{
		Tasks: []planning.Task{task("A", 40), task("B", 40), task("C", 40), task("D", 40), task("E", 40), task("F", 40)},
		Links: []planning.Link{
			dependsOn("A", "B"), dependsOn("B", "C"), blocks("A", "C"), // A -> B -> C -> A
			dependsOn("D", "A"), // downstream of the cycle
			dependsOn("F", "F"), // a self-loop
		},
	})
	require.Equal(t, [][]string{{"E"}}, waves(p))
	require.Equal(t, []planning.Unplannable{
		{TaskID: "id-A", Reason: "is on a dependency cycle with B, C", Blockers: []string{"id-B", "id-C"}},
		{TaskID: "id-B", Reason: "is on a dependency cycle with A, C", Blockers: []string{"id-A", "id-C"}},
		{TaskID: "id-C", Reason: "is on a dependency cycle with A, B", Blockers: []string{"id-A", "id-B"}},
		{TaskID: "id-D", Reason: "depends on A, which cannot be planned", Blockers: []string{"id-A"}},
		{TaskID: "id-F", Reason: "depends on itself", Blockers: []string{"id-F"}},
	}, p.Unplannable)
}

func TestCriticalPathOfADiamond(t *testing.T) {
	// A -> {B (LARGE), C (SMALL)} -> D: the path goes through B.
	tasks := []planning.Task{task("A", 40), task("B", 40), task("C", 90), task("D", 40)}
	for i, e := range []domain.Effort{domain.EffortSmall, domain.EffortLarge, domain.EffortSmall, domain.EffortTrivial} {
		tasks[i].Effort = effort(e)
	}
	p := planning.Compute(planning.Input{Tasks: tasks,
		Links: []planning.Link{dependsOn("B", "A"), dependsOn("C", "A"), dependsOn("D", "B"), blocks("C", "D")}})
	require.Equal(t, [][]string{{"A"}, {"C", "B"}, {"D"}}, waves(p), "C has the higher score")
	require.Equal(t, []string{"A", "B", "D"}, display(p.CriticalPath.TaskIDs))
	require.Equal(t, 2+16+0.5, p.CriticalPath.EstimatedHours)
	require.Equal(t, 2+16+2+0.5, p.EstimatedHours)

	// An EPIC task on its own outweighs the chain.
	epic := task("E", 10)
	epic.Effort = effort(domain.EffortEpic)
	p = planning.Compute(planning.Input{Tasks: append(tasks, epic),
		Links: []planning.Link{dependsOn("B", "A"), dependsOn("C", "A"), dependsOn("D", "B"), blocks("C", "D")}})
	require.Equal(t, []string{"E"}, display(p.CriticalPath.TaskIDs))
	require.Equal(t, 40.0, p.CriticalPath.EstimatedHours)
}

// TestCriticalPathIgnoresConflicts: conflicts push tasks to later waves but are
// not dependencies.
func TestCriticalPathIgnoresConflicts(t *testing.T) {
	p := planning.Compute(planning.Input{
		Tasks: []planning.Task{task("A", 50, file("x", domain.OpCreate)), task("B", 40, file("x", domain.OpCreate))},
	})
	require.Equal(t, [][]string{{"A"}, {"B"}}, waves(p))
	require.Equal(t, []string{"A"}, display(p.CriticalPath.TaskIDs))
	require.Equal(t, 6.0, p.CriticalPath.EstimatedHours)
}

func TestHours(t *testing.T) {
	for e, h := range map[domain.Effort]float64{domain.EffortTrivial: 0.5, domain.EffortSmall: 2, domain.EffortMedium: 6,
		domain.EffortLarge: 16, domain.EffortEpic: 40, "HUGE": 6} {
		require.Equal(t, h, planning.Hours(effort(e)), e)
	}
	require.Equal(t, 6.0, planning.Hours(nil))
}

func TestConflictReport(t *testing.T) {
	// Several files, several operations on one file, and a pair that is both a
	// file and a resource conflict, and ordered by a dependency too.
	p := planning.Compute(planning.Input{
		Tasks: []planning.Task{
			task("C", 40, file("b", domain.OpRead), file("a", domain.OpDelete)),
			task("A", 40, file("a", domain.OpRead), file("a", domain.OpUpdate), file("b", domain.OpRead)),
			task("B", 40, file("b", domain.OpDelete), file("a", domain.OpCreate)),
		},
		Links: []planning.Link{conflictsWith("C", "A"), dependsOn("C", "A")},
	})
	path := func(s string) *string { return &s }
	require.Equal(t, []planning.Conflict{
		{A: "id-A", B: "id-B", Type: domain.ConflictFile, FilePath: path("b"), Operations: []domain.FileOperation{"READ", "DELETE"}},
		{A: "id-A", B: "id-C", Type: domain.ConflictFile, FilePath: path("a"), Operations: []domain.FileOperation{"UPDATE", "DELETE"}},
		{A: "id-A", B: "id-C", Type: domain.ConflictResource, Operations: []domain.FileOperation{}},
		{A: "id-B", B: "id-C", Type: domain.ConflictFile, FilePath: path("a"), Operations: []domain.FileOperation{"CREATE", "DELETE"}},
		{A: "id-B", B: "id-C", Type: domain.ConflictFile, FilePath: path("b"), Operations: []domain.FileOperation{"DELETE", "READ"}},
	}, p.Conflicts)
	require.Equal(t, [][]string{{"A"}, {"B"}, {"C"}}, waves(p))
}

func TestEmpty(t *testing.T) {
	p := planning.Compute(planning.Input{})
	require.Equal(t, &planning.Plan{Waves: []planning.Wave{}, Conflicts: []planning.Conflict{},
		CriticalPath: planning.CriticalPath{TaskIDs: []string{}}, Unplannable: []planning.Unplannable{}}, p)
}

func TestDuplicateInput(t *testing.T) {
	p := planning.Compute(planning.Input{
		Tasks: []planning.Task{task("A", 40), task("A", 40), task("B", 40)},
		Links: []planning.Link{dependsOn("B", "A"), dependsOn("B", "A")},
	})
	require.Equal(t, [][]string{{"A"}, {"B"}}, waves(p))
}
