// Package queue holds the use-cases of the function queue: registered
// functions, and items — one call of a function for a planner or a worker —
// that workers claim under a lease, extend, complete or fail, with retries
// at attempt⁴ seconds, a sweep that rescues items whose lease expired, and
// cancel. Its rules are those River, Oban and graphile-worker users expect:
// a claim hands an item to exactly one claimer (FOR UPDATE SKIP LOCKED on
// PostgreSQL, SQLite's single writer), every call of a claimer is fenced by
// its lease (LEASE_LOST otherwise), every error is kept, final items
// (COMPLETED, FAILED, CANCELLED) never move again and are kept so that what
// ran stays visible.
//
// It is a package apart from internal/routing because nothing in it depends
// on routing's rules: it only reads which project a planner or worker
// belongs to (through the store) to scope and authorize its items.
package queue

import (
	"context"
	"log/slog"
	"time"

	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/auth"
	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/store"
)

// Options configure a Service.
type Options struct {
	// Now is the clock of the queue's decisions (due items, leases, backoff,
	// rescue); default: the database's clock at the statement (q.Now), so
	// that a lease stamped after waiting for a lock starts when it is held.
	// Tests inject their own.
	Now func(ctx context.Context, q *store.Q) (time.Time, error)
	// SweepInterval is the period of the lease-expiry sweep; default 1s.
	SweepInterval time.Duration
	// Logger logs sweep failures; default slog.Default().
	Logger *slog.Logger
}

// Service is the function queue's use-cases.
type Service struct {
	db    *store.DB
	run   *app.Runner
	clock func(ctx context.Context, q *store.Q) (time.Time, error)
	sweep time.Duration
	log   *slog.Logger
}

// New returns the queue over db, committing through run.
func New(db *store.DB, run *app.Runner, opts Options) *Service {
	s := &Service{db: db, run: run, clock: opts.Now, sweep: opts.SweepInterval, log: opts.Logger}
	if s.clock == nil {
		s.clock = func(ctx context.Context, q *store.Q) (time.Time, error) { return q.Now(ctx) }
	}
	if s.sweep <= 0 {
		s.sweep = time.Second
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	return s
}

// now is the queue's current time as stored (UTC, microseconds).
func (s *Service) now(ctx context.Context, q *store.Q) (time.Time, error) {
	t, err := s.clock(ctx, q)
	return t.UTC().Truncate(time.Microsecond), err
}

func (s *Service) tx(ctx context.Context, fn func(tx *app.Tx) error) error {
	return s.run.InTx(ctx, fn)
}

// writer returns the caller when it may change the queue's items at all:
// AGENT tokens only call the worker mutations (claim, extend, complete, fail).
func writer(ctx context.Context) (*auth.Principal, error) {
	p, err := app.Caller(ctx)
	if err != nil {
		return nil, err
	}
	if p.Role == domain.RoleAgent {
		return nil, domain.Forbidden("agent tokens may only claim, extend, complete and fail queue items")
	}
	return p, nil
}

// claimerID identifies the claimer behind a principal: its API token.
func claimerID(p *auth.Principal) string {
	if p.TokenID != "" {
		return p.TokenID
	}
	return "user:" + p.UserID
}
