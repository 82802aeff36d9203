// Package grouping holds the use-cases of auto-grouping: the grouping weights
// of a project, grouping suggestions (made on demand and, in the background,
// after candidate tasks are created or dependencies between them change),
// their acceptance into task lists, and task agent instances.
//
// The scoring and clustering are pure (internal/grouping/cluster); SQL is in
// internal/store (q.Grouping); lists are created through the core's list
// creation (service.Lists.CreateTaskListTx) inside the accepting transaction.
package grouping

import (
	"context"
	"log/slog"
	"time"

	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/auth"
	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/service"
	"github.com/taskgraph/taskgraph/internal/store"
)

// Options configure a Service.
type Options struct {
	Clock  func() time.Time
	Logger *slog.Logger
	// PollInterval is how often the background grouping looks for new
	// triggers; default 1s.
	PollInterval time.Duration
	// HeartbeatInterval × MissedHeartbeats is how long a task agent may stay
	// silent before the sweep terminates it; defaults 10s × 3.
	HeartbeatInterval time.Duration
	MissedHeartbeats  int
	// MaxCandidates bounds the tasks one clustering considers; default 2000.
	MaxCandidates int
}

// Service is the grouping use-cases.
type Service struct {
	db    *store.DB
	run   *app.Runner
	core  *service.Service
	clock func() time.Time
	log   *slog.Logger
	opts  Options
}

// New returns the grouping use-cases over db, committing through run.
func New(db *store.DB, run *app.Runner, core *service.Service, opts Options) *Service {
	if opts.Clock == nil {
		opts.Clock = db.Clock
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = time.Second
	}
	if opts.HeartbeatInterval <= 0 {
		opts.HeartbeatInterval = 10 * time.Second
	}
	if opts.MissedHeartbeats <= 0 {
		opts.MissedHeartbeats = 3
	}
	if opts.MaxCandidates <= 0 {
		opts.MaxCandidates = 2000
	}
	return &Service{db: db, run: run, core: core, clock: opts.Clock, log: opts.Logger, opts: opts}
}

func (s *Service) now() time.Time { return app.Now(s.clock) }

func (s *Service) tx(ctx context.Context, fn func(tx *app.Tx) error) error {
	return s.run.InTx(ctx, fn)
}

// dbNow is the database clock inside tx, as stored.
func dbNow(ctx context.Context, tx *app.Tx) (time.Time, error) {
	t, err := tx.Tasks.Now(ctx)
	return t.UTC().Truncate(time.Microsecond), err
}

// project returns the project gid names when p may see it.
func (s *Service) project(ctx context.Context, p *auth.Principal, gid, field string) (*domain.Project, error) {
	id, err := domain.DecodeID(domain.KindProject, gid, field)
	if err != nil {
		return nil, err
	}
	pr, err := s.core.Projects.ProjectByID(ctx, id)
	if err != nil && !isNotFound(err) {
		return nil, err
	}
	if pr == nil || !app.CanSee(p, pr) {
		return nil, domain.NotFound("Project")
	}
	return pr, nil
}

// writer is the caller when it may change a project's grouping (not agent
// tokens: theirs are only the agent mutations).
func writer(ctx context.Context) (*auth.Principal, error) {
	p, err := app.Caller(ctx)
	if err != nil {
		return nil, err
	}
	if p.Role == domain.RoleAgent {
		return nil, domain.Forbidden("agent tokens may only call the agent mutations")
	}
	return p, nil
}

func isNotFound(err error) bool {
	var de *domain.Error
	if e, ok := err.(*domain.Error); ok {
		de = e
	}
	return de != nil && de.Code == domain.CodeNotFound
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func timeMultiple(n int) time.Duration { return time.Duration(n) }
