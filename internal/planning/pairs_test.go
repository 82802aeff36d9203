package planning_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/planning"
)

// TestPairs: one pair per conflicting pair of planned tasks, in id order (not
// display order: operations follow), with every reason; unplannable and
// finished tasks, and tasks keep rejects, are left out.
func TestPairs(t *testing.T) {
	withID := func(id, display string, files ...planning.FileImpact) planning.Task {
		tk := task(display, 40, files...)
		tk.ID = id
		return tk
	}
	link := func(s, tg string, typ domain.RelationshipType) planning.Link {
		return planning.Link{Source: s, Target: tg, Type: typ}
	}
	done := withID("id-y", "T7")
	done.Status = domain.StatusCompleted
	in := planning.Input{
		Tasks: []planning.Task{
			withID("id-z", "T1", file("a.go", domain.OpUpdate), file("b.go", domain.OpCreate)),
			withID("id-a", "T2", file("a.go", domain.OpDelete), file("b.go", domain.OpCreate)),
			withID("id-m", "T3", file("a.go", domain.OpRead)),
			withID("id-c", "T4"), withID("id-d", "T5"),
			withID("id-u", "T6", file("a.go", domain.OpDelete)), // waits on an unfinished outside task
			done,
		},
		Links: []planning.Link{
			link("id-m", "id-z", domain.RelDependsOn),
			link("id-c", "id-d", domain.RelConflictsWith), link("id-d", "id-c", domain.RelConflictsWith),
			link("id-u", "id-out", domain.RelDependsOn), link("id-u", "id-z", domain.RelConflictsWith),
			link("id-a", "id-y", domain.RelDependsOn),
			link("id-a", "id-m", domain.RelRelatedTo),
		},
		Outside: []planning.OutsideTask{{ID: "id-out", DisplayID: "X1", Status: domain.StatusPending}},
	}
	p := planning.Compute(in)
	require.Len(t, p.Unplannable, 1)
	pairs := planning.Pairs(in, p, nil)
	require.Equal(t, []planning.Pair{
		{A: "id-a", B: "id-m", Files: []planning.PairFile{{Path: "a.go", OpA: domain.OpDelete, OpB: domain.OpRead}}},
		{A: "id-a", B: "id-z", Files: []planning.PairFile{
			{Path: "a.go", OpA: domain.OpDelete, OpB: domain.OpUpdate}, {Path: "b.go", OpA: domain.OpCreate, OpB: domain.OpCreate}}},
		{A: "id-c", B: "id-d", Resources: []planning.Link{
			link("id-c", "id-d", domain.RelConflictsWith), link("id-d", "id-c", domain.RelConflictsWith)}},
		{A: "id-m", B: "id-z", Dependencies: []planning.Link{link("id-m", "id-z", domain.RelDependsOn)}},
	}, pairs)
	require.Equal(t, []domain.ConflictType{domain.ConflictFile}, pairs[0].Types())

	kept := planning.Pairs(in, p, func(id string) bool { return id != "id-a" })
	require.Len(t, kept, 2)
	require.Equal(t, "id-c", kept[0].A)
	require.Equal(t, "id-m", kept[1].A)
}

// TestPairTypes: a pair with several kinds of conflict lists them strongest
// first, and StrongestConflict names the row by the first.
func TestPairTypes(t *testing.T) {
	in := planning.Input{
		Tasks: []planning.Task{task("T1", 40, file("a.go", domain.OpUpdate)), task("T2", 40, file("a.go", domain.OpUpdate))},
		Links: []planning.Link{conflictsWith("T1", "T2"), blocks("T1", "T2")},
	}
	pairs := planning.Pairs(in, planning.Compute(in), nil)
	require.Len(t, pairs, 1)
	types := pairs[0].Types()
	require.Equal(t, []domain.ConflictType{domain.ConflictDependency, domain.ConflictFile, domain.ConflictResource}, types)
	require.Equal(t, domain.ConflictDependency, domain.StrongestConflict(types...))
	require.Equal(t, domain.ConflictFile, domain.StrongestConflict(domain.ConflictResource, domain.ConflictFile))
	require.Equal(t, domain.ConflictType(""), domain.StrongestConflict())
}
