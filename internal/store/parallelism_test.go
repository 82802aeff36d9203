package store_test

import (
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/domain"
)

// TestParallelismAnalysisRows: rows go in by batched multi-row INSERTs, read
// back intact, page per list (current rows only unless asked), are found by
// either task, and are invalidated by list or by task — once.
func TestParallelismAnalysisRows(t *testing.T) {
	run(t, func(t *testing.T, b *bundle) {
		list := b.newList(t, "L", 3)
		const n = 40 // 780 pairs: two INSERT batches
		tasks := make([]*domain.Task, n)
		for i := range tasks {
			tasks[i] = b.insertTask(t, b.task(b.project, i+1))
		}
		var rows []*domain.ParallelismAnalysis
		typ := domain.ConflictFile
		for i := range tasks {
			for j := i + 1; j < n; j++ {
				a, c := tasks[i].ID, tasks[j].ID
				if c < a {
					a, c = c, a
				}
				rows = append(rows, &domain.ParallelismAnalysis{ID: uuid.NewString(), TaskListID: &list.ID, TaskAID: a, TaskBID: c,
					ConflictType: &typ, ConflictDetails: domain.JSON(`{"files":[{"filePath":"x.go","operations":["UPDATE","UPDATE"]}]}`),
					AnalyzedAt: ts(0)})
			}
		}
		before := b.db.Statements()
		require.NoError(t, b.db.Planning.InsertAnalyses(b.ctx, rows))
		require.Equal(t, int64(2), b.db.Statements()-before, "780 rows in batches of 500")

		got, err := b.db.Planning.AnalysesByIDs(b.ctx, []string{rows[0].ID})
		require.NoError(t, err)
		require.Len(t, got, 1)
		require.JSONEq(t, string(rows[0].ConflictDetails), string(got[0].ConflictDetails)) // JSONB re-spaces it
		want := *rows[0]
		want.ConflictDetails = got[0].ConflictDetails
		require.Equal(t, &want, utc(got[0]))
		files, err := got[0].Files()
		require.NoError(t, err)
		require.Equal(t, []*domain.ConflictedFile{{FilePath: "x.go", Operations: []domain.FileOperation{"UPDATE", "UPDATE"}}}, files)

		count := func(all bool) int {
			t.Helper()
			c, err := b.db.Planning.CountAnalysesByLists(b.ctx, []string{list.ID}, all)
			require.NoError(t, err)
			return c[list.ID]
		}
		require.Equal(t, len(rows), count(false))

		// Task 0 is in n-1 pairs; tasks 0 and 1 together in 2n-3.
		cur, err := b.db.Planning.CurrentAnalysesOfTasks(b.ctx, []string{tasks[0].ID, tasks[1].ID})
		require.NoError(t, err)
		require.Len(t, cur, 2*n-3)

		require.NoError(t, b.db.Planning.InvalidateAnalysesOfTasks(b.ctx, []string{tasks[0].ID}, ts(time.Second)))
		require.Equal(t, len(rows)-(n-1), count(false))
		require.Equal(t, len(rows), count(true))
		cur, err = b.db.Planning.CurrentAnalysesOfTasks(b.ctx, []string{tasks[0].ID})
		require.NoError(t, err)
		require.Empty(t, cur)

		// A later invalidation leaves invalidated rows' time alone.
		require.NoError(t, b.db.Planning.InvalidateAnalysesOfList(b.ctx, list.ID, ts(2*time.Second)))
		require.Equal(t, 0, count(false))
		got, err = b.db.Planning.AnalysesByIDs(b.ctx, []string{rows[0].ID, rows[len(rows)-1].ID})
		require.NoError(t, err)
		times := map[string]any{}
		for _, g := range got {
			times[g.ID] = g.InvalidatedAt.UTC()
		}
		require.Equal(t, ts(time.Second), times[rows[0].ID]) // pair (0, 1)
		require.Equal(t, ts(2*time.Second), times[rows[len(rows)-1].ID])

		// Paging newest analysis first: a second analysis comes before the first.
		newer := &domain.ParallelismAnalysis{ID: uuid.NewString(), TaskListID: &list.ID, TaskAID: rows[0].TaskAID,
			TaskBID: rows[0].TaskBID, ConflictType: &typ, ConflictDetails: domain.JSON(`{}`), AnalyzedAt: ts(3 * time.Second)}
		require.NoError(t, b.db.Planning.InsertAnalyses(b.ctx, []*domain.ParallelismAnalysis{newer}))
		pages, err := b.db.Planning.AnalysesByLists(b.ctx, []string{list.ID}, domain.PageArgs{First: ptr(2)}, true)
		require.NoError(t, err)
		pg := pages[list.ID]
		require.Len(t, pg.Items, 2)
		require.Equal(t, newer.ID, pg.Items[0].ID)
		require.True(t, pg.HasNextPage)
		pages, err = b.db.Planning.AnalysesByLists(b.ctx, []string{list.ID}, domain.PageArgs{}, false)
		require.NoError(t, err)
		require.Len(t, pages[list.ID].Items, 1)
		require.Equal(t, newer.ID, pages[list.ID].Items[0].ID)

		// The pair order is the table's: task A's id below task B's.
		bad := *newer
		bad.ID, bad.TaskAID, bad.TaskBID = uuid.NewString(), newer.TaskBID, newer.TaskAID
		require.Error(t, b.db.Planning.InsertAnalyses(b.ctx, []*domain.ParallelismAnalysis{&bad}))
	})
}
