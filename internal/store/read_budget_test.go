package store_test

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/testdb"
)

// TestChargedReadsScanAsSqlx: rows read under a request's read budget
// (scanned field by field, store.selectCharged) are the rows read without
// one (sqlx's StructScan), NULLs and set values of every kind alike, in
// full and lean reads of tasks, impacts and links.
func TestChargedReadsScanAsSqlx(t *testing.T) {
	run(t, func(t *testing.T, b *bundle) {
		bare := b.task(b.project, 0) // every nullable column NULL
		b.insertTask(t, bare)
		full := b.task(b.project, 1)
		full.Description = "why"
		full.AcceptanceCriteria = domain.Strings{"a", "b"}
		full.ExecutionLog = domain.JSON(`{"k":1}`)
		full.Embedding = []byte{1, 2, 3}
		full.EmbeddingModel = ptr("m")
		full.Deadline = ptr(ts(48 * 3600e9))
		full.StartedAt = ptr(ts(7200e9))
		full.Effort = ptr(domain.EffortSmall)
		full.ActualEffortMinutes = ptr(30)
		full.ParentTaskID = &bare.ID
		b.insertTask(t, full)
		require.NoError(t, b.db.Tasks.InsertFileImpacts(b.ctx, []*domain.TaskFileImpact{
			{ID: uuid.NewString(), TaskID: full.ID, FilePath: "src/a.go", Operation: domain.OpUpdate, Confidence: 0.5,
				Source: domain.SourceAIEstimate, WasAccurate: ptr(true), ValidatedAt: ptr(ts(1e9)), CreatedAt: ts(0), UpdatedAt: ts(2e9)},
			{ID: uuid.NewString(), TaskID: full.ID, FilePath: "src/b.go", Operation: domain.OpCreate, Confidence: 1,
				Source: domain.SourceAIEstimate, CreatedAt: ts(0), UpdatedAt: ts(0)},
		}))
		require.NoError(t, b.db.Tasks.InsertRelationship(b.ctx, &domain.TaskRelationship{ID: uuid.NewString(),
			SourceTaskID: full.ID, TargetTaskID: bare.ID, Type: domain.RelDependsOn, Strength: ptr(0.75), CreatedAt: ts(3e9)}))

		ids := []string{bare.ID, full.ID}
		charged := domain.WithReadBudget(b.ctx, 1<<20)
		for name, read := range map[string]func(ctx context.Context) (any, error){
			"tasks": func(ctx context.Context) (any, error) { return b.db.Tasks.TasksByIDs(ctx, ids) },
			"lean tasks": func(ctx context.Context) (any, error) {
				return b.db.Tasks.ShownTasksByIDs(ctx, []string{"Title", "Deadline", "Effort", "Embedding"}, ids)
			},
			"impacts": func(ctx context.Context) (any, error) { return b.db.Tasks.FileImpactsOfTasks(ctx, ids) },
			"lean impacts": func(ctx context.Context) (any, error) {
				return b.db.Tasks.ShownFileImpactsOfTasks(ctx, []string{"FilePath", "WasAccurate"}, ids)
			},
			"links": func(ctx context.Context) (any, error) { return b.db.Tasks.RelationshipsFromTasks(ctx, ids) },
		} {
			want, err := read(b.ctx)
			require.NoError(t, err, name)
			got, err := read(charged)
			require.NoError(t, err, name)
			require.Equal(t, want, got, name)
		}
		tasks, err := b.db.Tasks.TasksByIDs(charged, ids)
		require.NoError(t, err)
		require.Len(t, tasks, 2)
		for _, task := range tasks {
			if task.ID == bare.ID {
				require.Nil(t, task.Deadline)
				require.Nil(t, task.Effort)
				require.Nil(t, task.ParentTaskID)
			} else {
				require.True(t, full.Deadline.Equal(*task.Deadline))
				require.Equal(t, domain.EffortSmall, *task.Effort)
				require.Equal(t, bare.ID, *task.ParentTaskID)
			}
		}
		// The budget still binds: a budget smaller than the rows fails.
		_, err = b.db.Tasks.TasksByIDs(domain.WithReadBudget(b.ctx, 10), ids)
		require.Equal(t, domain.CodeLimitExceeded, domain.ErrorCode(err))
	})
}

// BenchmarkChargedTaskRows: 100 full task rows and the lean rows of
// BenchmarkReadShapes' wide shape, read under a request's read budget.
func BenchmarkChargedTaskRows(b *testing.B) {
	for _, c := range testdb.Cases(b) {
		b.Run(c.Name, func(b *testing.B) {
			bd := setup(b, c.URL(b))
			ids := make([]string, 100)
			for i := range ids {
				task := bd.task(bd.project, i)
				task.Deadline = ptr(ts(3600e9))
				require.NoError(b, bd.db.Tasks.InsertTask(bd.ctx, task))
				ids[i] = task.ID
			}
			wide := []string{"DisplayID", "Title", "Description", "Category", "Status", "Priority", "PriorityScore",
				"BlocksCount", "IsQuickWin", "RiskLevel", "Effort", "Owner", "Phase", "Deadline", "ActualEffortMinutes",
				"ExecutionLog", "Queue", "Version", "EmbeddingModel", "CreatedAt", "UpdatedAt", "StartedAt", "CompletedAt"}
			for name, read := range map[string]func(ctx context.Context) error{
				"full": func(ctx context.Context) error { _, err := bd.db.Tasks.TasksByIDs(ctx, ids); return err },
				"wide": func(ctx context.Context) error { _, err := bd.db.Tasks.ShownTasksByIDs(ctx, wide, ids); return err },
			} {
				b.Run(name, func(b *testing.B) {
					ctx := domain.WithReadBudget(bd.ctx, 1<<40)
					b.ReportAllocs()
					for b.Loop() {
						if err := read(ctx); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		})
	}
}
