package store_test

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/store"
	"github.com/taskgraph/taskgraph/internal/testdb"
)

// writesDialer counts what the client writes on its connections: lib/pq
// sends each round trip's messages in one write.
type writesDialer struct{ writes atomic.Int64 }

func (d *writesDialer) Dial(network, address string) (net.Conn, error) {
	return d.DialTimeout(network, address, 0)
}

func (d *writesDialer) DialTimeout(network, address string, timeout time.Duration) (net.Conn, error) {
	c, err := net.DialTimeout(network, address, timeout)
	if err != nil {
		return nil, err
	}
	return &countedConn{Conn: c, writes: &d.writes}, nil
}

type countedConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c *countedConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

// TestTransactionRoundTrips: on PostgreSQL a transaction's BEGIN goes with
// its first statement and its COMMIT with its last when those are simple
// queries (the writes sent later, the tail that commits), so a write
// transaction can take one round trip; whatever happens inside it, the
// connection goes back to the pool outside any transaction.
func TestTransactionRoundTrips(t *testing.T) {
	t.Parallel()
	url := testdb.Postgres(t)
	ctx := context.Background()
	dial := &writesDialer{}
	db, err := store.Open(ctx, url, store.MaxConns(1), store.WithDialer(dial))
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	b := &bundle{db: db, ctx: ctx}
	b.user = b.newUser(t, "owner")
	b.project = b.newProject(t, "proj")

	// roundTrips runs fn in a transaction and returns its error and how
	// many round trips it took.
	roundTrips := func(fn func(q *store.Q) error) (int64, error) {
		before := dial.writes.Load()
		err := db.InTx(ctx, fn)
		return dial.writes.Load() - before, err
	}
	// outside: the pool's one connection is in no transaction (each
	// statement outside one is its own: now() is its start).
	outside := func() {
		t.Helper()
		var alone bool
		require.NoError(t, db.SQL().QueryRowContext(ctx, `SELECT now() = statement_timestamp()`).Scan(&alone))
		require.True(t, alone, "the connection was left inside a transaction")
	}
	event := func() []*domain.Event {
		return []*domain.Event{{ProjectID: b.project.ID, Type: domain.ExecutionEventType("TASK_UPDATED"),
			Payload: domain.JSON(`{}`), OccurredAt: ts(0)}}
	}

	n, err := roundTrips(func(*store.Q) error { return nil })
	require.NoError(t, err)
	require.Zero(t, n, "an empty transaction sends nothing")

	task := b.task(b.project, 1)
	n, err = roundTrips(func(q *store.Q) error { return q.Tasks.InsertTask(ctx, task) })
	require.NoError(t, err)
	require.Equal(t, int64(1), n, "BEGIN, the insert and COMMIT in one round trip")
	b.loadTask(t, task.ID)
	outside()

	task2 := b.task(b.project, 2)
	n, err = roundTrips(func(q *store.Q) error {
		if err := q.Tasks.InsertTask(ctx, task2); err != nil {
			return err
		}
		_, err := q.AppendTail(ctx, b.project.ID, event(), nil, false, nil, true)
		return err
	})
	require.NoError(t, err)
	require.Equal(t, int64(1), n, "BEGIN, the insert, the tail and COMMIT in one round trip")
	b.loadTask(t, task2.ID)
	outside()

	// A read with arguments first: BEGIN goes on its own before it. (The
	// read's statement is prepared on the pool first: a transaction that
	// meets it unprepared prepares it on its connection, one more round
	// trip.)
	task3 := b.task(b.project, 3)
	_, err = b.db.Tasks.TasksByIDs(ctx, []string{task.ID, task2.ID})
	require.NoError(t, err)
	n, err = roundTrips(func(q *store.Q) error {
		if _, err := q.Tasks.TasksByIDs(ctx, []string{task.ID, task2.ID}); err != nil {
			return err
		}
		return q.Tasks.InsertTask(ctx, task3)
	})
	require.NoError(t, err)
	require.Equal(t, int64(3), n, "BEGIN, the read, then the insert with COMMIT")
	outside()

	// A write sent later that fails fails the transaction: nothing of it
	// is stored, and the connection is clean.
	dup := b.task(b.project, 4)
	dup.ID = task.ID
	task5 := b.task(b.project, 5)
	_, err = roundTrips(func(q *store.Q) error {
		if err := q.Tasks.InsertTask(ctx, task5); err != nil {
			return err
		}
		return q.Tasks.InsertTask(ctx, dup)
	})
	require.Error(t, err)
	got, err := db.Tasks.TasksByIDs(ctx, []string{task5.ID})
	require.NoError(t, err)
	require.Empty(t, got, "the failed transaction's first insert is not stored")
	outside()

	// fn fails after a statement went: rolled back.
	task6 := b.task(b.project, 6)
	boom := errors.New("boom")
	_, err = roundTrips(func(q *store.Q) error {
		if err := q.Tasks.InsertTask(ctx, task6); err != nil {
			return err
		}
		if _, err := q.Tasks.TasksByIDs(ctx, []string{task6.ID}); err != nil {
			return err
		}
		return boom
	})
	require.ErrorIs(t, err, boom)
	got, err = db.Tasks.TasksByIDs(ctx, []string{task6.ID})
	require.NoError(t, err)
	require.Empty(t, got)
	outside()

	// The request's context ends inside the transaction.
	cctx, cancel := context.WithCancel(ctx)
	err = db.InTx(cctx, func(q *store.Q) error {
		if _, err := q.Tasks.TasksByIDs(cctx, []string{task.ID}); err != nil {
			return err
		}
		cancel()
		_, err := q.Tasks.TasksByIDs(cctx, []string{task.ID})
		return err
	})
	require.Error(t, err)
	outside()

	// A read-only transaction (options: lib/pq's own BEGIN) still works.
	require.NoError(t, db.InReadTx(ctx, func(q *store.Q) error {
		_, err := q.Tasks.TasksByIDs(ctx, []string{task.ID})
		return err
	}))
	outside()
}

// TestTransactionAfterBackendTerminated: a pooled connection whose backend
// died while idle (a restart, pg_terminate_backend) is refused as the pool
// hands it out, so the next transaction, whose first statement carries its
// work, runs on a new connection and commits.
func TestTransactionAfterBackendTerminated(t *testing.T) {
	t.Parallel()
	url := testdb.Postgres(t)
	ctx := context.Background()
	db, err := store.Open(ctx, url, store.MaxConns(1))
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	b := &bundle{db: db, ctx: ctx}
	b.user = b.newUser(t, "owner")
	b.project = b.newProject(t, "proj")

	for i := range 3 {
		var pid int
		require.NoError(t, db.SQL().QueryRowContext(ctx, `SELECT pg_backend_pid()`).Scan(&pid))
		admin, err := store.Open(ctx, url, store.MaxConns(1))
		require.NoError(t, err)
		var ok bool
		require.NoError(t, admin.SQL().QueryRowContext(ctx, `SELECT pg_terminate_backend($1, 5000)`, pid).Scan(&ok))
		require.True(t, ok)
		require.NoError(t, admin.Close())

		task := b.task(b.project, i+1)
		require.NoError(t, db.InTx(ctx, func(q *store.Q) error { return q.Tasks.InsertTask(ctx, task) }))
		b.loadTask(t, task.ID)
	}
}
