package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"syscall"
)

// A PostgreSQL transaction's BEGIN and COMMIT travel with its statements.
//
// lib/pq sends BEGIN in a round trip of its own when database/sql begins a
// transaction, and COMMIT in another when it commits. The main pool's
// connections are wrapped (lazyConn) so that BEGIN waits for the
// transaction's first statement: one sent as a simple query (no
// parameters: the writes sent later, the tail that commits) carries BEGIN
// at the head of its text; any other statement sends BEGIN first, as
// lib/pq did. A statement whose context is marked endsTx has COMMIT at the
// end of its text: the transaction ends there, and its Commit sends
// nothing. A transaction that sent no statement commits and rolls back
// without a round trip. A create outside a list then makes one round trip
// inside its transaction instead of three.
//
// Transactions with options (an isolation level, read only) are lib/pq's
// own, unchanged.

// beginText is what lib/pq sends to begin a transaction without options.
const beginText = "BEGIN READ WRITE"

// endsTxKey marks a statement's context: its text ends the transaction
// with COMMIT (withEndsTx).
type endsTxKey struct{}

// withEndsTx marks ctx's statement as ending its transaction.
func withEndsTx(ctx context.Context) context.Context {
	return context.WithValue(ctx, endsTxKey{}, true)
}

// pqConn is what lazyConn needs of lib/pq's connection.
type pqConn interface {
	driver.Conn
	driver.Tx // lib/pq's connection is its own transaction
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.QueryerContext
	driver.ExecerContext
	driver.NamedValueChecker
	driver.Pinger
	driver.SessionResetter
	driver.Validator
}

// lazyConnector opens lib/pq connections wrapped in lazyConn.
type lazyConnector struct{ driver.Connector }

// Its connector dials through checkedDialer, which hands Connect the socket
// for the connection check (conn_check.go).
func (c lazyConnector) Connect(ctx context.Context) (driver.Conn, error) {
	var sock net.Conn
	cn, err := c.Connector.Connect(context.WithValue(ctx, dialSlotKey{}, &sock))
	if err != nil {
		return nil, err
	}
	pq, ok := cn.(pqConn)
	if !ok {
		_ = cn.Close()
		return nil, fmt.Errorf("store: the PostgreSQL driver's connection (%T) lacks what the store's transactions use", cn)
	}
	return &lazyConn{pq: pq, raw: rawOf(sock)}, nil
}

// txState is where a lazyConn's transaction is.
type txState int

const (
	txNone    txState = iota
	txPending         // begun, BEGIN not sent yet
	txOpen            // BEGIN sent
	txEnded           // a statement carrying COMMIT was sent
	txDriver          // lib/pq's own transaction (options): inner
)

// lazyConn is a lib/pq connection whose transactions begin with their first
// statement. database/sql uses a connection from one goroutine at a time.
type lazyConn struct {
	pq    pqConn
	state txState
	inner driver.Tx
	// bad: a ROLLBACK failed; the connection may still be in a
	// transaction, so the pool drops it.
	bad bool
	// raw: the socket, checked as the pool hands the connection out again.
	raw syscall.RawConn
}

func (c *lazyConn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

func (c *lazyConn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

func (c *lazyConn) Close() error { return c.pq.Close() }

func (c *lazyConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if c.state != txNone {
		return nil, errors.New("store: a transaction is already open on this connection")
	}
	if opts.Isolation != driver.IsolationLevel(sql.LevelDefault) || opts.ReadOnly {
		tx, err := c.pq.BeginTx(ctx, opts)
		if err != nil {
			return nil, err
		}
		c.state, c.inner = txDriver, tx
		return lazyTx{c}, nil
	}
	c.state = txPending
	return lazyTx{c}, nil
}

// begin sends BEGIN if the transaction has not yet.
func (c *lazyConn) begin(ctx context.Context) error {
	if c.state != txPending {
		return nil
	}
	if _, err := c.pq.ExecContext(ctx, beginText, nil); err != nil {
		return err
	}
	c.state = txOpen
	return nil
}

// text is query as sent: with BEGIN before it when it is the pending
// transaction's first statement and goes as a simple query (no arguments),
// else after BEGIN was sent on its own.
func (c *lazyConn) text(ctx context.Context, query string, args []driver.NamedValue) (string, error) {
	if c.state == txPending && len(args) == 0 {
		query = beginText + ";\n" + query
		c.state = txOpen
	} else if err := c.begin(ctx); err != nil {
		return "", err
	}
	if c.state == txOpen && ctx.Value(endsTxKey{}) != nil {
		c.state = txEnded
	}
	return query, nil
}

func (c *lazyConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	query, err := c.text(ctx, query, args)
	if err != nil {
		return nil, err
	}
	return c.pq.QueryContext(ctx, query, args)
}

func (c *lazyConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	query, err := c.text(ctx, query, args)
	if err != nil {
		return nil, err
	}
	return c.pq.ExecContext(ctx, query, args)
}

// PrepareContext sends BEGIN first inside a transaction, so that a
// statement is parsed where it runs (behind a transaction pooler, the
// transaction's server connection).
func (c *lazyConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	if err := c.begin(ctx); err != nil {
		return nil, err
	}
	st, err := c.pq.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	return lazyStmt{c: c, st: st}, nil
}

func (c *lazyConn) CheckNamedValue(v *driver.NamedValue) error { return c.pq.CheckNamedValue(v) }

func (c *lazyConn) Ping(ctx context.Context) error { return c.pq.Ping(ctx) }

// ResetSession runs as the pool hands the connection out again: one that
// died while idle is refused, and the pool takes another (conn_check.go).
func (c *lazyConn) ResetSession(ctx context.Context) error {
	if c.bad || c.state != txNone || !alive(c.raw) {
		return driver.ErrBadConn
	}
	return c.pq.ResetSession(ctx)
}

func (c *lazyConn) IsValid() bool { return !c.bad && c.state == txNone && c.pq.IsValid() }

// lazyTx ends a lazyConn's transaction.
type lazyTx struct{ c *lazyConn }

func (t lazyTx) Commit() error {
	c := t.c
	state := c.state
	c.state = txNone
	switch state {
	case txOpen:
		return c.pq.Commit()
	case txDriver:
		inner := c.inner
		c.inner = nil
		return inner.Commit()
	case txEnded, txPending:
		return nil // committed with its last statement, or sent nothing
	}
	return errors.New("store: commit without a transaction")
}

func (t lazyTx) Rollback() error {
	c := t.c
	state := c.state
	c.state = txNone
	switch state {
	case txOpen, txEnded:
		// Whatever the server's state: in the transaction, in a failed one,
		// or out of it (its COMMIT ran or failed; then ROLLBACK only warns).
		if _, err := c.pq.ExecContext(context.Background(), "ROLLBACK", nil); err != nil {
			c.bad = true
			return err
		}
		return nil
	case txDriver:
		inner := c.inner
		c.inner = nil
		return inner.Rollback()
	case txPending:
		return nil
	}
	return errors.New("store: rollback without a transaction")
}

// lazyStmt is a prepared statement of a lazyConn: it sends its
// connection's BEGIN first when it is the transaction's first statement.
type lazyStmt struct {
	c  *lazyConn
	st driver.Stmt
}

func (s lazyStmt) Close() error  { return s.st.Close() }
func (s lazyStmt) NumInput() int { return s.st.NumInput() }

func (s lazyStmt) Exec(args []driver.Value) (driver.Result, error) {
	return s.ExecContext(context.Background(), named(args))
}

func (s lazyStmt) Query(args []driver.Value) (driver.Rows, error) {
	return s.QueryContext(context.Background(), named(args))
}

func (s lazyStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	if err := s.c.begin(ctx); err != nil {
		return nil, err
	}
	if st, ok := s.st.(driver.StmtExecContext); ok {
		return st.ExecContext(ctx, args)
	}
	return s.st.Exec(values(args)) //nolint:staticcheck // a statement without the context form (lib/pq's COPY)
}

func (s lazyStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	if err := s.c.begin(ctx); err != nil {
		return nil, err
	}
	if st, ok := s.st.(driver.StmtQueryContext); ok {
		return st.QueryContext(ctx, args)
	}
	return s.st.Query(values(args)) //nolint:staticcheck // a statement without the context form (lib/pq's COPY)
}

// named and values convert between the two forms of a statement's arguments.
func named(args []driver.Value) []driver.NamedValue {
	out := make([]driver.NamedValue, len(args))
	for i, v := range args {
		out[i] = driver.NamedValue{Ordinal: i + 1, Value: v}
	}
	return out
}

func values(args []driver.NamedValue) []driver.Value {
	out := make([]driver.Value, len(args))
	for i, a := range args {
		out[i] = a.Value
	}
	return out
}
