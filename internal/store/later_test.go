package store_test

import (
	"errors"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/store"
)

// TestWritesSentLater: the inserts a transaction sends with its next
// statement (on PostgreSQL) store exactly what they were given — bytes,
// quotes, question marks, nulls — the transaction reads them back before
// it commits, and a committing tail takes them along.
func TestWritesSentLater(t *testing.T) {
	run(t, func(t *testing.T, b *bundle) {
		task := b.task(b.project, 1)
		task.Title = `it's "a" \ task? – ünïcode`
		task.Embedding = domain.EncodeEmbedding([]float64{0, -1.5, 3.25})
		task.Deadline = ptr(ts(3))
		task.AcceptanceCriteria = domain.Strings{"one?", "two's"}
		task.CodebaseTests, task.APITests, task.UITests, task.AffectedFiles = domain.Strings{}, domain.Strings{},
			domain.Strings{}, domain.Strings{} // as read back
		change := &domain.TaskStateChange{ID: uuid.NewString(), TaskID: task.ID, ToStatus: domain.StatusDraft,
			Reason: ptr("created?"), ChangedAt: ts(1)}
		impact := &domain.TaskFileImpact{ID: uuid.NewString(), TaskID: task.ID, FilePath: "a/b?.go",
			Operation: domain.OpUpdate, Source: domain.SourceAIEstimate, Confidence: 0.5, CreatedAt: ts(1), UpdatedAt: ts(1)}
		ev := &domain.Event{ProjectID: b.project.ID, Type: domain.ExecutionEventType("TASK_CREATED"),
			Payload: domain.JSON(`{}`), OccurredAt: ts(1)}
		require.NoError(t, b.db.InTx(b.ctx, func(q *store.Q) error {
			require.NoError(t, q.Tasks.InsertTask(b.ctx, task))
			require.NoError(t, q.Tasks.InsertStateChange(b.ctx, change))
			// Read inside the transaction: the writes go first.
			got, err := q.Tasks.TasksByIDs(b.ctx, []string{task.ID})
			require.NoError(t, err)
			require.Len(t, got, 1)
			require.NoError(t, q.Tasks.InsertFileImpacts(b.ctx, []*domain.TaskFileImpact{impact}))
			_, err = q.AppendTail(b.ctx, b.project.ID, []*domain.Event{ev}, nil, false, nil, true)
			return err
		}))
		got := b.loadTask(t, task.ID)
		require.Equal(t, utc(task), utc(got))
		history, err := b.db.Tasks.StateHistoryOfTasks(b.ctx, []string{task.ID})
		require.NoError(t, err)
		require.Len(t, history, 1)
		require.Equal(t, "created?", *history[0].Reason)
		impacts, err := b.db.Tasks.FileImpactsOfTasks(b.ctx, []string{task.ID})
		require.NoError(t, err)
		require.Len(t, impacts, 1)
		require.Equal(t, "a/b?.go", impacts[0].FilePath)
	})
}

// TestFailedWriteSentLater: a write that fails fails the statement it went
// with — never as an error that statement could have raised itself — and
// the transaction stores nothing.
func TestFailedWriteSentLater(t *testing.T) {
	run(t, func(t *testing.T, b *bundle) {
		task := b.task(b.project, 1)
		orphan := &domain.TaskStateChange{ID: uuid.NewString(), TaskID: uuid.NewString(), ToStatus: domain.StatusDraft,
			ChangedAt: ts(1)}
		err := b.db.InTx(b.ctx, func(q *store.Q) error {
			if err := q.Tasks.InsertTask(b.ctx, task); err != nil {
				return err
			}
			if err := q.Tasks.InsertStateChange(b.ctx, orphan); err != nil {
				return err
			}
			_, err := q.Tasks.TasksByIDs(b.ctx, []string{task.ID})
			return err
		})
		require.Error(t, err)
		if b.db.Dialect() == store.Postgres {
			require.False(t, errors.Is(err, store.ErrForeignKey), "a write sent later: %v", err)
		} else {
			require.ErrorIs(t, err, store.ErrForeignKey)
		}
		got, err := b.db.Tasks.TasksByIDs(b.ctx, []string{task.ID})
		require.NoError(t, err)
		require.Empty(t, got)
	})
}

// TestFailedWriteSentWithTheTail: a write that fails in the committing
// tail's round trip rolls the whole transaction back, events included, and
// the next transaction runs cleanly.
func TestFailedWriteSentWithTheTail(t *testing.T) {
	run(t, func(t *testing.T, b *bundle) {
		orphan := &domain.TaskStateChange{ID: uuid.NewString(), TaskID: uuid.NewString(), ToStatus: domain.StatusDraft,
			ChangedAt: ts(1)}
		ev := &domain.Event{ProjectID: b.project.ID, Type: domain.ExecutionEventType("TASK_UPDATED"),
			Payload: domain.JSON(`{}`), OccurredAt: ts(1)}
		err := b.db.InTx(b.ctx, func(q *store.Q) error {
			if err := q.Tasks.InsertStateChange(b.ctx, orphan); err != nil {
				return err
			}
			_, err := q.AppendTail(b.ctx, b.project.ID, []*domain.Event{ev}, nil, false, nil, true)
			return err
		})
		require.Error(t, err)
		if b.db.Dialect() == store.Postgres {
			require.False(t, errors.Is(err, store.ErrForeignKey), "a write sent later: %v", err)
		}
		last, err := b.db.Events.LastEventSeqs(b.ctx, []string{b.project.ID})
		require.NoError(t, err)
		require.Zero(t, last[b.project.ID], "no event of the failed transaction")

		task := b.task(b.project, 1)
		require.NoError(t, b.db.InTx(b.ctx, func(q *store.Q) error { return q.Tasks.InsertTask(b.ctx, task) }))
		require.Equal(t, task.ID, b.loadTask(t, task.ID).ID)
	})
}
