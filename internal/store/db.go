// Package store holds all of Taskgraph's SQL: one file per aggregate, the dialect
// seam between PostgreSQL and the embedded SQLite default, transactions, and the
// mapping of database errors. It holds no business rules.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"    // PostgreSQL driver
	_ "modernc.org/sqlite" // pure-Go SQLite driver
)

// Dialect is the SQL flavour of the database.
type Dialect string

// Supported dialects.
const (
	SQLite   Dialect = "sqlite"
	Postgres Dialect = "postgres"
)

// DB is the database handle. Its embedded Q runs statements on the pool; InTx
// runs a function with a Q bound to one transaction.
type DB struct {
	Q
	sqlx    *sqlx.DB
	dialect Dialect
	url     string
	// pooler: what url reaches (pooler.go); directURL: the direct URL of
	// session work, "" for url itself.
	pooler    Pooler
	directURL string
	// direct: behind a transaction pooler, the pool of session work —
	// leader locks and migrations (sessionPool); nil otherwise.
	direct     *sqlx.DB
	statements atomic.Int64
	aborts     atomic.Int64
	clock      dbClock
	stmts      sync.Map // query → *sqlx.Stmt (prepared.go)
	// keyLists: the key-list texts admitted to stmts (key_lists.go).
	keyLists atomic.Int32
	// sideStmts: the statements prepared on the counters' and the leases'
	// pools (prepared.go sideGet).
	sideStmts sync.Map // sideKey → *sqlx.Stmt
	// background: the pool's statements being prepared off a transaction's
	// path (prepared.go); Close waits for them, so that no connection
	// outlives it.
	background sync.WaitGroup
	// counters: PostgreSQL's pool for display numbers, taken outside the
	// transaction that asks (tasks.go TakeDisplayNumber); nil on SQLite.
	counters *sqlx.DB
	// lease: PostgreSQL's pool for agents' leases (heartbeats.go PulseAgent,
	// StampLease, StampClaim) and requests' authentication (TokenByHash):
	// single statements that wait for no lock, and never wait for a
	// connection behind the main pool's transactions; nil on SQLite.
	lease *sqlx.DB
	// writer queues SQLite's write transactions in the process: SQLite has
	// one writer, and writers waiting in its busy handler poll unfairly —
	// under load some waited past the busy timeout (SQLITE_BUSY). Lease
	// renewals go first (writer.go).
	writer *writeQueue
}

// DefaultMaxConns is the size of a PostgreSQL pool unless MaxConns says
// otherwise. PostgreSQL serves the most transactions when it runs about as
// many busy connections as a few per core: more of them make a lock's
// holder (a project's event sequence, held through its commit) wait behind
// the others for a core. On this project's 2-core bench machine 10
// connections claimed 6–30 % more tasks per second than 20
// (BenchmarkClaim, 32 agents).
const DefaultMaxConns = 10

// countersConns is the size of the display counters' pool.
const countersConns = 4

// leaseConns is the size of the leases' pool.
const leaseConns = 4

// Option sets how Open connects.
type Option func(*openOptions)

type openOptions struct {
	maxConns  int
	pooler    Pooler
	directURL string
	dialer    pq.Dialer // the main pool's, on PostgreSQL (tests); nil: lib/pq's
}

// MaxConns caps a PostgreSQL pool at n connections (at least 1). SQLite's
// pool is fixed: one writer, a few readers.
func MaxConns(n int) Option { return func(o *openOptions) { o.maxConns = max(1, n) } }

// Open connects to url: "sqlite:<path>" (the file and its directory are created)
// or "postgres://…" / "postgresql://…". It does not migrate; call Migrate.
func Open(ctx context.Context, url string, opts ...Option) (*DB, error) {
	o := openOptions{maxConns: DefaultMaxConns, pooler: PoolerNone}
	for _, opt := range opts {
		opt(&o)
	}
	if _, err := ParsePooler(string(o.pooler)); err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	pooled := o.pooler == PoolerTransaction
	var (
		driver, dsn string
		dialect     Dialect
	)
	switch {
	case strings.HasPrefix(url, "postgres://"), strings.HasPrefix(url, "postgresql://"):
		driver, dialect = "postgres", Postgres
		var err error
		if dsn, err = postgresDSN(url); err != nil {
			return nil, err
		}
		if pooled {
			if err := checkPooledDSN(url); err != nil {
				return nil, err
			}
		}
	case strings.HasPrefix(url, "sqlite:"):
		path := strings.TrimPrefix(strings.TrimPrefix(url, "sqlite:"), "//")
		if path == "" {
			return nil, errors.New("store: sqlite url needs a file path, e.g. sqlite:data/taskgraph.db")
		}
		if dir := filepath.Dir(path); dir != "." {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return nil, fmt.Errorf("store: create database directory: %w", err)
			}
		}
		// WAL lets readers run beside the one writer; immediate transactions take
		// the write lock up front so two writers never deadlock upgrading a read lock.
		dsn = "file:" + sqliteURIPath(path) + "?_pragma=foreign_keys(1)&_pragma=journal_mode(WAL)" +
			"&_pragma=busy_timeout(10000)&_pragma=synchronous(NORMAL)&_txlock=immediate&_time_format=sqlite"
		driver, dialect = "sqlite", SQLite
	default:
		return nil, fmt.Errorf("store: unsupported database url %q (want sqlite:<path> or postgres://…)", redact(url))
	}
	if pooled && dialect != Postgres {
		return nil, errors.New("store: a transaction pooler stands in front of PostgreSQL only (the database url is SQLite)")
	}
	x, err := openMain(driver, dsn, o.dialer)
	if err != nil {
		return nil, fmt.Errorf("store: open: %w", err)
	}
	if dialect == SQLite {
		x.SetMaxOpenConns(8)
	} else {
		x.SetMaxOpenConns(o.maxConns)
		x.SetMaxIdleConns(o.maxConns) // all of them: closing idle ones under load reopens them at once
		x.SetConnMaxIdleTime(5 * time.Minute)
	}
	d := &DB{sqlx: x, dialect: dialect, url: url, pooler: o.pooler, directURL: o.directURL, writer: newWriteQueue()}
	if dialect == Postgres {
		// Behind a transaction pooler a connection carries no settings of
		// its own (a pooler refuses startup parameters it does not track):
		// the counters' and leases' pools commit synchronously there.
		sideDSN := countersDSN(dsn)
		if pooled {
			sideDSN = dsn
			if d.direct, err = openDirect(o.directURL); err != nil {
				x.Close()
				return nil, err
			}
		}
		// Connects on first use; its statements wait for nothing but one
		// another, so transactions of the main pool may wait for it.
		if d.counters, err = sqlx.Open(driver, sideDSN); err != nil {
			d.closeDirect()
			x.Close()
			return nil, fmt.Errorf("store: open: %w", err)
		}
		d.counters.SetMaxOpenConns(countersConns)
		d.counters.SetMaxIdleConns(countersConns)
		d.counters.SetConnMaxIdleTime(5 * time.Minute)
		// The leases' stamps commit without waiting for the disk, as the
		// counters' (see PulseAgent).
		if d.lease, err = sqlx.Open(driver, sideDSN); err != nil {
			d.counters.Close()
			d.closeDirect()
			x.Close()
			return nil, fmt.Errorf("store: open: %w", err)
		}
		d.lease.SetMaxOpenConns(leaseConns)
		d.lease.SetMaxIdleConns(leaseConns)
		d.lease.SetConnMaxIdleTime(5 * time.Minute)
	}
	d.Q = Q{ext: x, db: d}
	d.Q.bind()
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := x.PingContext(pingCtx); err != nil {
		d.Close()
		return nil, fmt.Errorf("store: connect to %s: %w", redact(url), err)
	}
	if dialect == Postgres {
		if err := d.syncClock(pingCtx); err != nil {
			d.Close()
			return nil, fmt.Errorf("store: read the clock of %s: %w", redact(url), err)
		}
	}
	return d, nil
}

// openMain opens the main pool; on PostgreSQL its transactions begin and
// commit with their statements (lazy_begin.go).
func openMain(driver, dsn string, dialer pq.Dialer) (*sqlx.DB, error) {
	if driver != "postgres" {
		return sqlx.Open(driver, dsn)
	}
	c, err := pq.NewConnector(dsn)
	if err != nil {
		return nil, err
	}
	c.Dialer(checkedDialer{inner: dialer})
	return sqlx.NewDb(sql.OpenDB(lazyConnector{c}), driver), nil
}

// sqliteURIPath escapes what a file: URI gives meaning to (SQLite decodes %HH in
// the path): unescaped, "#" would end the file name early and "?" start the query.
var sqliteURIPath = strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace

// Dialect reports the SQL flavour.
func (d *DB) Dialect() Dialect { return d.dialect }

// SQL exposes the pool for health checks and pool metrics.
func (d *DB) SQL() *sql.DB { return d.sqlx.DB }

// Close closes the pool.
func (d *DB) Close() error {
	d.background.Wait()
	closeStmts := func(_, st any) bool {
		if pooled, ok := st.(*sqlx.Stmt); ok {
			_ = pooled.Close()
		}
		return true
	}
	d.stmts.Range(closeStmts)
	d.sideStmts.Range(closeStmts)
	if d.counters != nil {
		_ = d.counters.Close()
	}
	if d.lease != nil {
		_ = d.lease.Close()
	}
	d.closeDirect()
	return d.sqlx.Close()
}

func (d *DB) closeDirect() {
	if d.direct != nil {
		_ = d.direct.Close()
	}
}

// Ping checks that the database answers.
func (d *DB) Ping(ctx context.Context) error { return d.sqlx.PingContext(ctx) }

// Aborts is the number of transactions the database aborted since Open — a
// deadlock or a serialization failure — that InTx redid or gave up on. With
// one lock order on every path it stays at zero.
func (d *DB) Aborts() int64 { return d.aborts.Load() }

// Statements is the number of SQL statements run since Open; tests and benchmarks
// use it to show that statements grow with query depth, not with rows.
func (d *DB) Statements() int64 { return d.statements.Load() }

// InTx runs fn in one transaction, committing when fn returns nil. On SQLite the
// transaction takes the write lock at BEGIN (immediate), so writers queue instead
// of failing on lock upgrades — in the process first, in turn (DB.writer).
func (d *DB) InTx(ctx context.Context, fn func(q *Q) error) error {
	// PostgreSQL may abort a transaction that deadlocked with another or lost a
	// serialization race; the work is redone from the start, a few times.
	for attempt := 1; ; attempt++ {
		err := d.inTx(ctx, fn, attempt)
		if !errors.Is(err, ErrRetry) {
			return err
		}
		d.aborts.Add(1)
		if attempt == maxTxAttempts || ctx.Err() != nil {
			return err
		}
	}
}

const maxTxAttempts = 4

func (d *DB) inTx(ctx context.Context, fn func(q *Q) error, attempt int) (err error) {
	ctx, span := d.startTx(ctx, attempt)
	var traced *txTrace
	if span.IsRecording() {
		traced = &txTrace{span: span}
	}
	defer func() { endTx(span, traced, err) }()
	if d.dialect == SQLite {
		d.writer.lock(isUrgent(ctx))
		defer d.writer.unlock()
	}
	tx, err := d.sqlx.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: begin: %w", mapErr(err))
	}
	d.statements.Add(1)
	defer func() {
		if p := recover(); p != nil {
			_ = tx.Rollback()
			panic(p)
		}
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	q := newQ(tx, d, true)
	q.trace = traced
	if err = fn(q); err != nil {
		return err
	}
	if err = q.flushCommit(ctx); err != nil {
		return err
	}
	d.statements.Add(1)
	if q.committed {
		// The work committed with its last statement (selectCommit,
		// flushCommit): this only closes database/sql's transaction, and
		// the connection sends nothing (lazy_begin.go); its error (the
		// request's context ended since) is not the work's.
		_ = tx.Commit()
		return nil
	}
	if err = tx.Commit(); err != nil {
		return fmt.Errorf("store: commit: %w", mapErr(err))
	}
	return nil
}

// Q runs statements, on the pool or inside one transaction. Its queries are
// grouped by aggregate, one group per field, each defined in the file of its
// tables: q.Tasks.InsertTask, q.Runs.RunForUpdate, …
type Q struct {
	ext  sqlx.ExtContext
	db   *DB
	inTx bool
	// committed: the transaction's work committed with its last statement
	// (selectCommit, flushCommit).
	committed bool
	// pending: writes waiting to go with the transaction's next statement
	// (later.go).
	pending []string
	// trace: the events a traced transaction wrote (trace.go); nil when
	// its transaction has no span.
	trace *txTrace

	Users    UserQueries     // users.go: users and API tokens
	Projects ProjectQueries  // projects.go: projects and ideas
	Tasks    TaskQueries     // tasks.go, relationships.go, history.go: tasks, links, impacts, history, blocks, templates
	Lists    ListQueries     // tasklists.go: task lists and their items
	Planning PlanningQueries // planning.go, parallelism.go: plan input and parallelism analysis
	Runs     RunQueries      // execution.go, heartbeats.go: runs, waves, agents, executions, test results
	Events   EventQueries    // events.go: the event log
	Catalog  CatalogQueries  // catalog.go, catalog_maps.go: suites, actions, MCP servers, tools and the maps between them
	Examples ExampleQueries  // examples.go: models, trace sessions and examples
	Routing  RoutingQueries  // routing.go: routers, planners, workers, their messages and links
	Queue    QueueQueries    // queue.go: the function queue

	Validation ValidationQueries // validation.go: validation rules
	Reasoning  ReasoningQueries  // reasoning.go: reasoning executions, passes, assessments, reports, refinements, steps
	Grouping   GroupingQueries   // grouping.go: grouping weights, suggestions, task agents, grouping cursors
	Questions  QuestionQueries   // questions.go: questions put to people
	Sessions   SessionQueries    // sessions.go: agent sessions, their states, todo lists and steps; lessons
}

// The query groups: each is Q seen through one aggregate.
type (
	UserQueries     struct{ *Q }
	ProjectQueries  struct{ *Q }
	TaskQueries     struct{ *Q }
	ListQueries     struct{ *Q }
	PlanningQueries struct{ *Q }
	RunQueries      struct{ *Q }
	EventQueries    struct{ *Q }
	CatalogQueries  struct{ *Q }
	ExampleQueries  struct{ *Q }
	RoutingQueries  struct{ *Q }
	QueueQueries    struct{ *Q }

	ValidationQueries struct{ *Q }
	ReasoningQueries  struct{ *Q }
	QuestionQueries   struct{ *Q }
	SessionQueries    struct{ *Q }
)

// newQ returns a Q over ext.
func newQ(ext sqlx.ExtContext, db *DB, inTx bool) *Q {
	q := &Q{ext: ext, db: db, inTx: inTx}
	q.bind()
	return q
}

// bind points q's query groups at q.
func (q *Q) bind() {
	q.Users, q.Projects, q.Tasks, q.Lists = UserQueries{q}, ProjectQueries{q}, TaskQueries{q}, ListQueries{q}
	q.Planning, q.Runs, q.Events, q.Catalog = PlanningQueries{q}, RunQueries{q}, EventQueries{q}, CatalogQueries{q}
	q.Examples = ExampleQueries{q}
	q.Routing, q.Queue = RoutingQueries{q}, QueueQueries{q}
	q.Validation = ValidationQueries{q}
	q.Reasoning = ReasoningQueries{q}
	q.Grouping = GroupingQueries{q}
	q.Questions = QuestionQueries{q}
	q.Sessions = SessionQueries{q}
}

func (q *Q) get(ctx context.Context, dest any, query string, args ...any) error {
	if err := q.flush(ctx); err != nil {
		return err
	}
	q.db.statements.Add(1)
	ctx, span := q.startStatement(ctx, query)
	err := mapErr(getCharged(ctx, q.ext, dest, q.ext.Rebind(query), args...))
	endStatement(span, err)
	return err
}

func (q *Q) selectx(ctx context.Context, dest any, query string, args ...any) error {
	return q.selectRows(ctx, dest, query, false, args...)
}

// selectRows is selectx; with extraCols the rows may have columns that no
// field of dest's elements takes, which are dropped (sqlx's Unsafe): a
// page's row number.
func (q *Q) selectRows(ctx context.Context, dest any, query string, extraCols bool, args ...any) error {
	if err := q.flush(ctx); err != nil {
		return err
	}
	q.db.statements.Add(1)
	ctx, span := q.startStatement(ctx, query)
	ext := q.ext
	if extraCols {
		ext = unsafe(ext)
	}
	err := mapErr(selectCharged(ctx, ext, dest, q.ext.Rebind(query), args...))
	endStatement(span, err)
	return err
}

func (q *Q) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if err := q.flush(ctx); err != nil {
		return nil, err
	}
	q.db.statements.Add(1)
	ctx, span := q.startStatement(ctx, query)
	res, err := q.ext.ExecContext(ctx, q.ext.Rebind(query), args...)
	err = mapErr(err)
	endStatement(span, err)
	return res, err
}

// in expands a query with IN (?) over slices, as sqlx.In does.
func in(query string, args ...any) (string, []any) {
	out, outArgs, err := sqlx.In(query, args...)
	if err != nil {
		panic("store: bad IN query: " + err.Error()) // programming error: arguments do not match the query
	}
	return out, outArgs
}

// pool returns a Q on the pool, for lazy reads made after a transaction ended.
func (d *DB) pool() *Q { return &d.Q }

func (q *Q) namedExec(ctx context.Context, query string, arg any) (sql.Result, error) {
	if err := q.flush(ctx); err != nil {
		return nil, err
	}
	q.db.statements.Add(1)
	ctx, span := q.startStatement(ctx, query)
	res, err := sqlx.NamedExecContext(ctx, q.ext, query, arg)
	err = mapErr(err)
	endStatement(span, err)
	return res, err
}

// forUpdate is the row-lock suffix of a SELECT inside a transaction. On
// PostgreSQL it is FOR NO KEY UPDATE: Taskgraph never changes a key, and this
// lock, unlike FOR UPDATE, does not block the key-share lock that inserting a
// row referring to the locked one takes (a heartbeat's row naming its run
// while a claim holds the run). Two transactions that lock the same row still
// queue. SQLite needs none: its immediate transactions hold the single write
// lock.
func (q *Q) forUpdate() string {
	if q.db.dialect == Postgres && q.inTx {
		return " FOR NO KEY UPDATE"
	}
	return ""
}

// Now is the database's clock at this statement: clock_timestamp() on
// PostgreSQL — not the transaction's start, so a lease stamped after waiting
// for locks starts when the locks are held — and on SQLite, whose clock is the
// process's, time.Now. UTC at microsecond precision, as stored.
func (q *Q) Now(ctx context.Context) (time.Time, error) {
	if q.db.dialect == SQLite {
		return time.Now().UTC().Truncate(time.Microsecond), nil
	}
	var t time.Time
	err := q.getP(ctx, &t, `SELECT clock_timestamp()`)
	return t.UTC().Truncate(time.Microsecond), err
}

// skipLocked is forUpdate that passes over rows another transaction holds
// (claims and sweeps that share work between replicas).
func (q *Q) skipLocked() string {
	if q.db.dialect == Postgres && q.inTx {
		return " FOR NO KEY UPDATE SKIP LOCKED"
	}
	return ""
}
