package app

import (
	"context"
	"errors"
	"time"

	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/events"
	"github.com/taskgraph/taskgraph/internal/store"
)

// Tx is one use-case's transaction: the statements it runs (store.Q), the
// events it records, the execution run it acts for, and the work it leaves for
// after the commit. A use-case gets a fresh Tx on every attempt (Runner.InTx
// redoes the whole function after a deadlock), so nothing recorded by a failed
// attempt survives.
type Tx struct {
	*store.Q
	events []*domain.Event
	runID  string
	agent  string
	after  []func()
	tail   tail
}

// Record adds events to the transaction. They are written with the change,
// numbered just before COMMIT, and streamed to subscribers once committed.
func (tx *Tx) Record(evs ...*domain.Event) { tx.events = append(tx.events, evs...) }

// ActFor says the transaction works for execution run runID: the task
// transitions it records belong to that run (TaskStateChange.run).
func (tx *Tx) ActFor(runID string) { tx.runID = runID }

// Run is the run the transaction acts for, or nil.
func (tx *Tx) Run() *string {
	if tx.runID == "" {
		return nil
	}
	id := tx.runID
	return &id
}

// ActAsAgent says the transaction's task transitions are caused by the build
// agent with global id agentGID: their history names it (TaskStateChange
// changedBy) instead of the caller.
func (tx *Tx) ActAsAgent(agentGID string) { tx.agent = agentGID }

// Agent is the build agent (global id) the transaction acts as, or nil.
func (tx *Tx) Agent() *string {
	if tx.agent == "" {
		return nil
	}
	id := tx.agent
	return &id
}

// AfterCommit queues fn to run once the transaction has committed (never after
// a rollback), in the order queued.
func (tx *Tx) AfterCommit(fn func()) { tx.after = append(tx.after, fn) }

// Runner runs use-cases' transactions over one database.
type Runner struct {
	db     *store.DB
	broker *events.Broker
}

// NewRunner returns a Runner over db that wakes broker (which may be nil:
// events are recorded, but nobody streams them) after commits with events.
func NewRunner(db *store.DB, broker *events.Broker) *Runner { return &Runner{db: db, broker: broker} }

// DB is the database the runner works on.
func (r *Runner) DB() *store.DB { return r.db }

// Broker is the event broker, or nil.
func (r *Runner) Broker() *events.Broker { return r.broker }

// InTx runs fn in one transaction. When fn returns nil, its tail is written
// — the events it recorded, numbered under their project's event sequence,
// which is then held until the commit only, and the list and wave counters
// it moved (see tail) — and the transaction commits. Then, in order: the
// request's cached reads are dropped (the payload shows the new state),
// fn's after-commit work runs, and subscribers are woken.
func (r *Runner) InTx(ctx context.Context, fn func(tx *Tx) error) error {
	var done *Tx
	listsFirst := false
	for {
		err := r.db.InTx(ctx, func(q *store.Q) error {
			tx := &Tx{Q: q, tail: tail{listsFirst: listsFirst}}
			if err := fn(tx); err != nil {
				return err
			}
			if err := tx.writeTail(ctx); err != nil {
				return err
			}
			done = tx
			return nil
		})
		// A list row was held by a transaction that may wait for our event
		// sequence: again, with the lists first, as that one does.
		if errors.Is(err, store.ErrBusy) && !listsFirst {
			listsFirst = true
			continue
		}
		if err != nil {
			return err
		}
		break
	}
	ClearLoaders(ctx)
	for _, f := range done.after {
		f()
	}
	if r.broker != nil && len(done.events) > 0 {
		r.broker.Published(events.Projects(done.events)...)
	}
	return nil
}

// Now is clock's time as the database stores it: UTC at microsecond precision
// (PostgreSQL's), so a value read back equals the one written.
func Now(clock func() time.Time) time.Time { return clock().UTC().Truncate(time.Microsecond) }
