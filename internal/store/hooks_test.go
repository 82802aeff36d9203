package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/store"
)

// TestTransactionHooks: BeforeCommit work is part of the transaction (its
// error rolls everything back), AfterCommit runs only after a commit, and
// TxLocal is one value per transaction.
func TestTransactionHooks(t *testing.T) {
	run(t, func(t *testing.T, b *bundle) {
		type counter struct{ n int }
		var order []string
		boom := errors.New("boom")
		for _, fail := range []bool{false, true} {
			order = nil
			task := b.task(b.project, map[bool]int{false: 1, true: 2}[fail])
			err := b.db.InTx(b.ctx, func(q *store.Q) error {
				for range 3 {
					c := store.TxLocal(q, "k", func() *counter {
						q.BeforeCommit(func(ctx context.Context, q *store.Q) error {
							order = append(order, "before")
							if err := q.InsertTask(ctx, task); err != nil {
								return err
							}
							if fail {
								return boom
							}
							return nil
						})
						q.AfterCommit(func() { order = append(order, "after") })
						return &counter{}
					})
					c.n++
					require.LessOrEqual(t, c.n, 3)
				}
				order = append(order, "work")
				return nil
			})
			got, lerr := b.db.TasksByIDs(b.ctx, []string{task.ID})
			require.NoError(t, lerr)
			if fail {
				require.ErrorIs(t, err, boom)
				require.Equal(t, []string{"work", "before"}, order)
				require.Empty(t, got, "rolled back")
			} else {
				require.NoError(t, err)
				require.Equal(t, []string{"work", "before", "after"}, order)
				require.Len(t, got, 1)
			}
		}
		require.Panics(t, func() { b.db.BeforeCommit(func(context.Context, *store.Q) error { return nil }) },
			"outside a transaction")
	})
}
