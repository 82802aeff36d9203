package store_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/store"
	"github.com/taskgraph/taskgraph/internal/testdb"
)

// TestTransactionPoolerPreparesNothing: the hot statements are prepared on
// their connection normally, and behind a transaction pooler not at all (a
// named statement would stay in a server session the pooler hands on).
func TestTransactionPoolerPreparesNothing(t *testing.T) {
	t.Parallel()
	url := testdb.Postgres(t)
	ctx := context.Background()
	prepared := func(opts ...store.Option) int {
		// One connection: the count below reads the session that ran the
		// statement.
		db, err := store.Open(ctx, url, append(opts, store.MaxConns(1))...)
		require.NoError(t, err)
		defer db.Close()
		_, err = db.Now(ctx) // a prepared statement (store.Q.Now)
		require.NoError(t, err)
		var n int
		require.NoError(t, db.SQL().QueryRowContext(ctx, `SELECT COUNT(*) FROM pg_prepared_statements`).Scan(&n))
		return n
	}
	require.Positive(t, prepared(), "without a pooler the statement is prepared")
	require.Zero(t, prepared(store.WithPooler(store.PoolerTransaction), store.DirectURL(url)))

	// The pooler needs PostgreSQL, a direct URL, and each statement in one
	// round trip.
	_, err := store.Open(ctx, testdb.SQLite(t), store.WithPooler(store.PoolerTransaction))
	require.Error(t, err)
	_, err = store.Open(ctx, url, store.WithPooler(store.PoolerTransaction))
	require.ErrorContains(t, err, "direct")
	_, err = store.Open(ctx, url+"&binary_parameters=no", store.WithPooler(store.PoolerTransaction), store.DirectURL(url))
	require.ErrorContains(t, err, "binary_parameters")
}
