package store_test

import (
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/domain"
)

// TestLeanReads: a lean read is the full read with the fields it leaves out
// zero, and nothing else different, on a task and impacts that set them all.
func TestLeanReads(t *testing.T) {
	run(t, func(t *testing.T, b *bundle) {
		task := b.task(b.project, 1)
		task.Description = "why"
		task.AcceptanceCriteria = domain.Strings{"a"}
		task.CodebaseTests = domain.Strings{"c"}
		task.APITests = domain.Strings{"api"}
		task.UITests = domain.Strings{"ui"}
		task.AffectedFiles = domain.Strings{"f.go"}
		task.ExecutionLog = domain.JSON(`{"k":1}`)
		task.Embedding = []byte{1, 2, 3}
		task.EmbeddingModel = ptr("m")
		task.Deadline = ptr(ts(48 * 3600e9))
		task.UpdatedAt = ts(3600e9)
		task.StartedAt = ptr(ts(7200e9))
		task.CompletedAt = ptr(ts(9000e9))
		task.Queue = ptr(domain.QueueEvaluation)
		task.Effort = ptr(domain.EffortSmall)
		task.ActualEffortMinutes = ptr(30)
		b.insertTask(t, task)

		full := b.loadTask(t, task.ID)
		lean, err := b.db.Tasks.LeanTasksByIDs(b.ctx, []string{task.ID})
		require.NoError(t, err)
		require.Len(t, lean, 1)
		want := *full
		want.Description, want.ExecutionLog, want.Embedding, want.EmbeddingModel = "", nil, nil, nil
		want.AcceptanceCriteria, want.CodebaseTests, want.APITests, want.UITests, want.AffectedFiles = nil, nil, nil, nil, nil
		want.Deadline, want.StartedAt, want.CompletedAt = nil, nil, nil
		want.UpdatedAt = lean[0].UpdatedAt
		require.True(t, lean[0].UpdatedAt.IsZero())
		require.Equal(t, utc(&want), utc(lean[0]))

		impact := &domain.TaskFileImpact{ID: uuid.NewString(), TaskID: task.ID, FilePath: "src/a.go", Operation: domain.OpUpdate,
			Confidence: 0.5, Source: domain.SourceAIEstimate, WasAccurate: ptr(true), ValidatedAt: ptr(ts(1e9)), CreatedAt: ts(0), UpdatedAt: ts(2e9)}
		require.NoError(t, b.db.Tasks.InsertFileImpacts(b.ctx, []*domain.TaskFileImpact{impact}))
		fullImpacts, err := b.db.Tasks.FileImpactsOfTasks(b.ctx, []string{task.ID})
		require.NoError(t, err)
		leanImpacts, err := b.db.Tasks.LeanFileImpactsOfTasks(b.ctx, []string{task.ID})
		require.NoError(t, err)
		require.Len(t, leanImpacts, 1)
		wantImpact := *fullImpacts[0]
		wantImpact.WasAccurate, wantImpact.ValidatedAt = nil, nil
		wantImpact.CreatedAt, wantImpact.UpdatedAt = leanImpacts[0].CreatedAt, leanImpacts[0].UpdatedAt
		require.True(t, leanImpacts[0].CreatedAt.IsZero() && leanImpacts[0].UpdatedAt.IsZero())
		require.Equal(t, &wantImpact, leanImpacts[0])
	})
}
