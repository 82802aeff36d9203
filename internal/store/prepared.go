package store

import (
	"context"
	"database/sql"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"
)

// Prepared statements for the agent protocol's hot paths (claims,
// completions). A statement the database parses and plans on every call
// spends more time there than executing; these are prepared once per
// connection (database/sql keeps one per connection it ran on) and, on
// PostgreSQL, planned generically once their plans settle. Only statements
// whose text never varies go through here, and the key lists of
// key_lists.go, whose texts are bounded: a text with a variable IN list
// would fill the cache.
//
// Behind a transaction pooler (PoolerTransaction) nothing is prepared: a
// named statement lives in one server connection's session, which the
// pooler hands to other clients between transactions. The statements then
// go as unnamed ones, parsed, bound and run in one round trip
// (binary_parameters).

// stmt is query's prepared statement for q: bound to q's transaction when q
// is one (released when it ends), else on the pool. The pool's statement is
// prepared on first use; a transaction that meets a statement the pool has
// not prepared yet prepares it on its own connection and has the pool
// prepare it in the background — never waiting for a pool connection while
// it holds one (and, maybe, row locks that the pool's holders wait for).
func (q *Q) stmt(ctx context.Context, query string) (*sqlx.Stmt, error) {
	if err := q.flush(ctx); err != nil {
		return nil, err
	}
	query = q.db.sqlx.Rebind(query)
	if st, ok := q.db.stmts.Load(query); ok {
		if pooled, ok := st.(*sqlx.Stmt); ok {
			if tx, ok := q.ext.(*sqlx.Tx); ok {
				return tx.StmtxContext(ctx, pooled), nil
			}
			return pooled, nil
		}
	}
	if tx, ok := q.ext.(*sqlx.Tx); ok {
		if _, preparing := q.db.stmts.LoadOrStore(query, preparing{}); !preparing {
			q.db.background.Add(1)
			go func() {
				defer q.db.background.Done()
				q.db.preparePooled(query)
			}()
		}
		st, err := tx.PreparexContext(ctx, query)
		return st, mapErr(err)
	}
	st, err := q.db.sqlx.PreparexContext(ctx, query)
	if err != nil {
		return nil, mapErr(err)
	}
	return q.db.keep(query, st), nil
}

// keep caches st as query's pooled statement unless one is cached already
// (then st is closed and that one returned): a cached statement may be in
// use, so it is never replaced.
func (d *DB) keep(query string, st *sqlx.Stmt) *sqlx.Stmt { return keepStmt(&d.stmts, query, st) }

// keepStmt caches st under key in cache, as keep does; a marker other than
// a statement (preparing) is replaced.
func keepStmt(cache *sync.Map, key any, st *sqlx.Stmt) *sqlx.Stmt {
	for {
		prev, loaded := cache.LoadOrStore(key, st)
		if !loaded {
			return st
		}
		if pooled, ok := prev.(*sqlx.Stmt); ok {
			_ = st.Close()
			return pooled
		}
		if cache.CompareAndSwap(key, prev, st) {
			return st
		}
	}
}

// preparing marks a statement the pool is preparing in the background.
type preparing struct{}

// preparePooled prepares query on the pool for later transactions.
func (d *DB) preparePooled(query string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := d.sqlx.PreparexContext(ctx, query)
	if err != nil {
		d.stmts.CompareAndDelete(query, preparing{}) // the next use tries again
		return
	}
	d.keep(query, st)
}

// getP is get through a prepared statement.
func (q *Q) getP(ctx context.Context, dest any, query string, args ...any) error {
	if q.db.transactionPooled() {
		return q.get(ctx, dest, query, args...)
	}
	st, err := q.stmt(ctx, query)
	if err != nil {
		return err
	}
	q.db.statements.Add(1)
	ctx, span := q.startStatement(ctx, query)
	err = mapErr(st.GetContext(ctx, dest, args...))
	endStatement(span, err)
	return err
}

// selectP is selectx through a prepared statement.
func (q *Q) selectP(ctx context.Context, dest any, query string, args ...any) error {
	return q.selectPrepared(ctx, dest, query, false, args...)
}

// selectPrepared is selectP, with extraCols as selectRows takes it.
func (q *Q) selectPrepared(ctx context.Context, dest any, query string, extraCols bool, args ...any) error {
	if q.db.transactionPooled() {
		return q.selectRows(ctx, dest, query, extraCols, args...)
	}
	st, err := q.stmt(ctx, query)
	if err != nil {
		return err
	}
	if extraCols {
		st = st.Unsafe()
	}
	q.db.statements.Add(1)
	ctx, span := q.startStatement(ctx, query)
	err = mapErr(selectCharged(ctx, stmtQueryer{st}, dest, "", args...))
	endStatement(span, err)
	return err
}

// stmtQueryer runs its prepared statement as a queryer (for selectCharged,
// which charges the rows read to the request's read budget); the query text
// it is given is the statement's own.
type stmtQueryer struct{ st *sqlx.Stmt }

func (s stmtQueryer) QueryContext(ctx context.Context, _ string, args ...any) (*sql.Rows, error) {
	return s.st.QueryContext(ctx, args...)
}

func (s stmtQueryer) QueryxContext(ctx context.Context, _ string, args ...any) (*sqlx.Rows, error) {
	return s.st.QueryxContext(ctx, args...)
}

func (s stmtQueryer) QueryRowxContext(ctx context.Context, _ string, args ...any) *sqlx.Row {
	return s.st.QueryRowxContext(ctx, args...)
}

// execP is exec through a prepared statement.
func (q *Q) execP(ctx context.Context, query string, args ...any) (int64, error) {
	if q.db.transactionPooled() {
		res, err := q.exec(ctx, query, args...)
		if err != nil {
			return 0, err
		}
		n, err := res.RowsAffected()
		return n, mapErr(err)
	}
	st, err := q.stmt(ctx, query)
	if err != nil {
		return 0, err
	}
	q.db.statements.Add(1)
	ctx, span := q.startStatement(ctx, query)
	res, err := st.ExecContext(ctx, args...)
	if err != nil {
		err = mapErr(err)
		endStatement(span, err)
		return 0, err
	}
	endStatement(span, nil)
	n, err := res.RowsAffected()
	return n, mapErr(err)
}

// namedExecP is namedExec of one row through a prepared statement.
func (q *Q) namedExecP(ctx context.Context, query string, arg any) (int64, error) {
	bound, args, err := sqlx.Named(query, arg)
	if err != nil {
		return 0, err
	}
	return q.execP(ctx, bound, args...)
}

// sideKey names a statement prepared on one of the side pools.
type sideKey struct {
	pool  *sqlx.DB
	query string
}

// sideGet is get on pool — the counters' or the leases' — through query's
// statement prepared on it: a request's authentication and a create's
// display number are the same texts on every call, which PostgreSQL would
// otherwise parse and plan each time (a token's lookup: 0.15–0.17 ms
// unnamed, 0.10–0.11 ms prepared, in pgbench). Behind a transaction pooler
// it is an unnamed statement, as getP's.
func (d *DB) sideGet(ctx context.Context, pool *sqlx.DB, dest any, query string, args ...any) error {
	query = pool.Rebind(query)
	if d.transactionPooled() {
		return sqlx.GetContext(ctx, pool, dest, query, args...)
	}
	key := sideKey{pool, query}
	st, ok := d.sideStmts.Load(key)
	if !ok {
		prepared, err := pool.PreparexContext(ctx, query)
		if err != nil {
			return err
		}
		st = keepStmt(&d.sideStmts, key, prepared)
	}
	return st.(*sqlx.Stmt).GetContext(ctx, dest, args...)
}
