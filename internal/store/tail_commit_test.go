package store_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/store"
)

// TestTailCommits: a tail that commits (on PostgreSQL in its own round
// trip, its arguments written in as literals) stores its events exactly,
// whatever their text holds, and the transaction ends cleanly.
func TestTailCommits(t *testing.T) {
	run(t, func(t *testing.T, b *bundle) {
		payload := domain.JSON(`{"title":"it's a \\ path – ünïcode \"q\" ?"}`)
		ev := &domain.Event{ProjectID: b.project.ID, Type: domain.ExecutionEventType("TASK_UPDATED"),
			Payload: payload, OccurredAt: ts(0)}
		require.NoError(t, b.db.InTx(b.ctx, func(q *store.Q) error {
			_, err := q.AppendTail(b.ctx, b.project.ID, []*domain.Event{ev}, nil, true, nil, true)
			return err
		}))
		require.Equal(t, int64(1), ev.Seq)
		evs, err := b.db.Events.EventsAfter(b.ctx, b.project.ID, 0, 10, nil, 10)
		require.NoError(t, err)
		require.Len(t, evs, 1)
		require.JSONEq(t, string(payload), string(evs[0].Payload))
		require.True(t, evs[0].OccurredAt.Equal(ts(0)))
		// The connection is clean for the next transaction.
		require.NoError(t, b.db.InTx(b.ctx, func(q *store.Q) error {
			_, err := q.AppendTail(b.ctx, b.project.ID, []*domain.Event{{ProjectID: b.project.ID,
				Type: domain.ExecutionEventType("TASK_UPDATED"), Payload: domain.JSON(`{}`), OccurredAt: ts(1)}}, nil, true, nil, true)
			return err
		}))
		last, err := b.db.Events.LastEventSeqs(b.ctx, []string{b.project.ID})
		require.NoError(t, err)
		require.Equal(t, int64(2), last[b.project.ID])
	})
}
