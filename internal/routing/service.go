// Package routing holds the use-cases of routers (conversations with a user
// and their messages), the planners a router starts, the workers (task
// records) a planner runs, the messages of planners and workers, and the links
// between routers, their messages and planners.
//
// Every entity belongs to a project: routers and planners name theirs,
// messages and workers take that of their router or planner. ADMIN and the
// project's MEMBER owner change them; AGENT tokens read their project only.
// Its entities and rules are in internal/domain (routing.go), its SQL in
// internal/store (q.Routing). The function queue that runs planner and
// worker functions is internal/queue.
package routing

import (
	"context"
	"time"

	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/auth"
	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/store"
)

// Options configure a Service.
type Options struct {
	// Clock is the time source (tests inject their own); default the
	// database's clock (store.DB.Clock).
	Clock func() time.Time
}

// Service is the routing use-cases.
type Service struct {
	db    *store.DB
	run   *app.Runner
	clock func() time.Time
}

// New returns the routing use-cases over db, committing through run.
func New(db *store.DB, run *app.Runner, opts Options) *Service {
	s := &Service{db: db, run: run, clock: opts.Clock}
	if s.clock == nil {
		s.clock = db.Clock
	}
	return s
}

// now is the current time as stored: UTC, microsecond precision.
func (s *Service) now() time.Time { return s.clock().UTC().Truncate(time.Microsecond) }

func (s *Service) tx(ctx context.Context, fn func(tx *app.Tx) error) error {
	return s.run.InTx(ctx, fn)
}

// writer returns the caller when it may change routing entities at all:
// AGENT tokens may not.
func writer(ctx context.Context) (*auth.Principal, error) {
	p, err := app.Caller(ctx)
	if err != nil {
		return nil, err
	}
	if p.Role == domain.RoleAgent {
		return nil, domain.Forbidden("agent tokens may read routers, planners and workers but not change them")
	}
	return p, nil
}

// visible reports NOT_FOUND (what) unless p may see projectID; inside a
// transaction it reads through tx.
func visible(ctx context.Context, q *store.Q, p *auth.Principal, projectID, what string) error {
	ok, err := app.CanSeeProjectID(ctx, q, p, projectID)
	if err != nil {
		return err
	}
	if !ok {
		return domain.NotFound(what)
	}
	return nil
}

// defaultJSON is j, or def when j is absent or JSON null.
func defaultJSON(j domain.JSON, def string) domain.JSON {
	if len(j) == 0 || string(j) == "null" {
		return domain.JSON(def)
	}
	return j
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
