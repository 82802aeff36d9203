package service_test

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/domain"
)

// TestParallelismAnalysisLifecycle: a run records one row per conflicting
// pair, with the run's time; wavePlan records nothing; file-impact, planning
// link and list changes invalidate the rows of the tasks they touch, inside
// their own transaction (a failed change invalidates nothing); a newer plan
// supersedes the list's rows; rows are nodes of the list's project only.
func TestParallelismAnalysisLifecycle(t *testing.T) {
	run(t, func(t *testing.T, b *bundle) {
		ctx := as(b.owner)
		list, err := b.svc.Lists.CreateTaskList(ctx, domain.CreateTaskListInput{ProjectID: b.project.GlobalID(), Name: "L"})
		require.NoError(t, err)
		other, err := b.svc.Lists.CreateTaskList(ctx, domain.CreateTaskListInput{ProjectID: b.project.GlobalID(), Name: "M"})
		require.NoError(t, err)
		impacts := func(ops ...domain.FileOperation) []*domain.FileImpactInput {
			var out []*domain.FileImpactInput
			for _, op := range ops {
				out = append(out, &domain.FileImpactInput{FilePath: "shared.go", Operation: op})
			}
			return out
		}
		inList := func(ops ...domain.FileOperation) func(*domain.CreateTaskInput) {
			return func(in *domain.CreateTaskInput) {
				in.TaskListID, in.FileImpacts = ptr(list.GlobalID()), impacts(ops...)
			}
		}
		a := b.createTask("A", inList(domain.OpUpdate))
		c := b.createTask("B", inList(domain.OpUpdate))
		d := b.createTask("C", inList(domain.OpRead))
		b.mustLink(c, a, domain.RelDependsOn) // and both UPDATE shared.go

		current := func() map[string]*domain.ParallelismAnalysis {
			t.Helper()
			pg, err := b.svc.Lists.AnalysisOfList(context.Background(), list.ID, domain.PageArgs{}, false)
			require.NoError(t, err)
			out := map[string]*domain.ParallelismAnalysis{}
			for _, r := range pg.Items {
				require.Less(t, r.TaskAID, r.TaskBID)
				out[r.TaskAID+"/"+r.TaskBID] = r
			}
			return out
		}
		pair := func(x, y *domain.Task) string {
			ids := []string{x.ID, y.ID}
			sort.Strings(ids)
			return ids[0] + "/" + ids[1]
		}

		_, err = b.svc.Lists.WavePlan(ctx, list.GlobalID())
		require.NoError(t, err)
		require.Empty(t, current(), "wavePlan is a dry run")

		b.clock.Advance(time.Minute)
		run1, err := b.svc.Runs.StartExecutionRun(ctx, domain.StartExecutionRunInput{TaskListID: list.GlobalID()})
		require.NoError(t, err)
		rows := current()
		require.Len(t, rows, 1, "C only reads: no conflict with A or B")
		row := rows[pair(a, c)]
		require.NotNil(t, row)
		require.False(t, row.CanParallel)
		require.Equal(t, domain.ConflictDependency, *row.ConflictType, "DEPENDENCY outranks FILE_CONFLICT")
		require.Equal(t, at(time.Minute), row.AnalyzedAt.UTC())
		require.Equal(t, list.ID, *row.TaskListID)
		details, err := row.Details()
		require.NoError(t, err)
		require.Equal(t, []domain.ConflictType{domain.ConflictDependency, domain.ConflictFile}, details.Types)
		require.Len(t, details.Dependencies, 1)
		require.Equal(t, c.GlobalID(), details.Dependencies[0].SourceTaskID)
		wantOrder := domain.OrderBBeforeA
		if row.TaskAID == a.ID {
			wantOrder = domain.OrderABeforeB
		}
		require.Equal(t, wantOrder, details.Dependencies[0].Order, "A runs first")
		require.Equal(t, []*domain.ConflictedFile{{FilePath: "shared.go",
			Operations: []domain.FileOperation{domain.OpUpdate, domain.OpUpdate}}}, details.Files)
		require.Empty(t, details.Resources)
		for _, task := range []*domain.Task{a, c} {
			got, err := b.svc.Lists.ConflictsOfTask(context.Background(), task.ID)
			require.NoError(t, err)
			require.Len(t, got, 1)
			require.Equal(t, row.ID, got[0].ID)
		}

		// Visibility: a node of the owner's project only.
		n, err := b.svc.Node(ctx, row.GlobalID())
		require.NoError(t, err)
		require.Equal(t, row.ID, n.(*domain.ParallelismAnalysis).ID)
		n, err = b.svc.Node(as(b.other), row.GlobalID())
		require.NoError(t, err)
		require.Nil(t, n)

		// A failed update changes nothing, the analysis included.
		_, err = b.svc.Tasks.UpdateTask(ctx, domain.UpdateTaskInput{ID: a.GlobalID(), ExpectedVersion: ptr(99),
			FileImpacts: impacts(domain.OpRead)})
		requireCode(t, err, domain.CodeVersionConflict)
		require.Len(t, current(), 1)
		// Neither does a change of confidence, nor a link that does not plan.
		_, err = b.svc.Tasks.UpdateTask(ctx, domain.UpdateTaskInput{ID: a.GlobalID(),
			FileImpacts: []*domain.FileImpactInput{{FilePath: "shared.go", Operation: domain.OpUpdate, Confidence: ptr(0.3)}}})
		require.NoError(t, err)
		b.mustLink(a, d, domain.RelRelatedTo)
		require.Len(t, current(), 1)

		// A planning link invalidates both its ends' rows, at the change's time.
		b.clock.Advance(time.Minute)
		b.mustLink(d, c, domain.RelConflictsWith)
		require.Empty(t, current())
		got, err := b.db.Planning.AnalysesByIDs(context.Background(), []string{row.ID})
		require.NoError(t, err)
		require.Equal(t, at(2*time.Minute), got[0].InvalidatedAt.UTC())
		conflicts, err := b.svc.Lists.ConflictsOfTask(context.Background(), a.ID)
		require.NoError(t, err)
		require.Empty(t, conflicts)

		// A new plan supersedes what is left and records afresh: A+B, B+C.
		_, err = b.svc.Runs.CancelExecutionRun(ctx, domain.RunActionInput{RunID: run1.GlobalID()})
		require.NoError(t, err)
		b.clock.Advance(time.Minute)
		_, err = b.svc.Runs.StartExecutionRun(ctx, domain.StartExecutionRunInput{TaskListID: list.GlobalID()})
		require.NoError(t, err)
		rows = current()
		require.Len(t, rows, 2)
		require.Equal(t, domain.ConflictResource, *rows[pair(c, d)].ConflictType)
		all, err := b.svc.Lists.AnalysisOfList(context.Background(), list.ID, domain.PageArgs{}, true)
		require.NoError(t, err)
		require.Len(t, all.Items, 3)
		require.Equal(t, at(3*time.Minute), all.Items[0].AnalyzedAt.UTC(), "newest first")

		// Moving a task to another list invalidates its rows; file impacts too.
		_, err = b.svc.Tasks.UpdateTask(ctx, domain.UpdateTaskInput{ID: d.GlobalID(), TaskListID: ptr(other.GlobalID())})
		require.NoError(t, err)
		require.Len(t, current(), 1)
		_, err = b.svc.Tasks.UpdateTask(ctx, domain.UpdateTaskInput{ID: c.GlobalID(), FileImpacts: impacts(domain.OpCreate)})
		require.NoError(t, err)
		require.Empty(t, current())
	})
}
