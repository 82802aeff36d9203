// Package service holds the use-cases of Taskgraph's core — users and tokens,
// projects, tasks and their links, task lists and their plans, execution runs
// and the event log — which share their rows and transactions. Each use-case
// authorizes the caller, applies the domain's rules and makes its change in one
// transaction (app.Runner), recording its events there. Self-contained domains
// (internal/catalog, …) have packages of their own; see docs/architecture.md.
package service

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/events"
	"github.com/taskgraph/taskgraph/internal/store"
)

// Options configure a Service.
type Options struct {
	// Clock is the time source (tests inject their own); default the
	// database's clock (store.DB.Clock).
	Clock  func() time.Time
	Logger *slog.Logger
	// LoggerFrom returns the logger of a request (carrying its request id);
	// default: Logger for every request.
	LoggerFrom func(ctx context.Context) *slog.Logger
	// Events streams the event log to subscribers and is woken after every
	// commit that recorded events. Nil: events are recorded, but nobody can
	// subscribe.
	Events *events.Broker
	// HeartbeatInterval is the expected period of agents' heartbeats; an agent
	// is dead after MissedHeartbeats of them without one. MaxAttempts bounds
	// the attempts at a task per run. Zero: the defaults.
	HeartbeatInterval time.Duration
	MissedHeartbeats  int
	MaxAttempts       int
	// Gate checks tasks entering PENDING and runs starting (gate.go); nil:
	// no checks.
	Gate Gate
}

// Service is the core's use-cases, one group per field; what the groups
// share (the database, the clock, the request's loaders, visibility) is
// Service's own.
type Service struct {
	Accounts *Accounts // users.go, operator.go: users, API tokens, authentication
	Projects *Projects // projects.go: projects and ideas
	Tasks    *Tasks    // tasks.go, relationships.go, blocks.go, templates.go
	Lists    *Lists    // tasklists.go, planning.go, parallelism.go: task lists and their plans
	Runs     *Runs     // execution*.go, run_actions.go, sweep.go: runs, claims, agents, the sweep
	Events   *Events   // events.go: the event log, paged and streamed

	db          *store.DB
	run         *app.Runner
	clock       func() time.Time
	log         *slog.Logger
	loggerFrom  func(ctx context.Context) *slog.Logger
	events      *events.Broker
	heartbeat   time.Duration
	missed      int
	maxAttempts int
	runEndHooks []RunEndHook // agent_calls.go: other domains' work when a run ends
	gate        Gate
	claimed     sync.Map       // claims.go: run id → when a claim of it last handed out a task (unix ns)
	vectors     *vectorCache   // similarity.go: projects' task vectors, checked by their stamp
	dims        dimensionCache // dimensions.go: the committed dimension of each project's models
	latency     latencyWindow  // latency.go: the longest requests of the last seconds, for the sweep
}

// New returns a Service over db.
func New(db *store.DB, opts Options) *Service {
	s := &Service{db: db, run: app.NewRunner(db, opts.Events), clock: opts.Clock, log: opts.Logger, loggerFrom: opts.LoggerFrom,
		events: opts.Events, heartbeat: opts.HeartbeatInterval, missed: opts.MissedHeartbeats, maxAttempts: opts.MaxAttempts,
		gate: opts.Gate, vectors: newVectorCache(vectorCacheBytes)}
	if s.heartbeat <= 0 {
		s.heartbeat = DefaultHeartbeatInterval
	}
	if s.missed <= 0 {
		s.missed = DefaultMissedHeartbeats
	}
	if s.maxAttempts <= 0 {
		s.maxAttempts = DefaultMaxAttempts
	}
	if s.clock == nil {
		s.clock = db.Clock
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.loggerFrom == nil {
		s.loggerFrom = func(context.Context) *slog.Logger { return s.log }
	}
	s.Accounts, s.Projects, s.Tasks, s.Lists = &Accounts{s}, &Projects{s}, &Tasks{s}, &Lists{s}
	s.Runs, s.Events = &Runs{s}, &Events{s}
	return s
}

// The groups of use-cases: each is the Service seen through one part of the
// core.
type (
	Accounts struct{ *Service }
	Projects struct{ *Service }
	Tasks    struct{ *Service }
	Lists    struct{ *Service }
	Runs     struct{ *Service }
	Events   struct{ *Service }
)

// logger is the logger of the request ctx belongs to.
func (s *Service) logger(ctx context.Context) *slog.Logger { return s.loggerFrom(ctx) }

// now is the current time as stored (app.Now).
func (s *Service) now() time.Time { return app.Now(s.clock) }

// tx runs fn in one transaction (see app.Runner.InTx).
func (s *Service) tx(ctx context.Context, fn func(tx *app.Tx) error) error {
	return s.run.InTx(ctx, fn)
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func ptr[T any](v T) *T { return &v }
