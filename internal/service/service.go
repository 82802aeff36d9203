// Package service holds Taskgraph's use-cases: it authorizes the caller, applies
// the domain rules, and makes each change in one store transaction. Resolvers call
// it and nothing else.
package service

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"github.com/taskgraph/taskgraph/internal/auth"
	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/events"
	"github.com/taskgraph/taskgraph/internal/loader"
	"github.com/taskgraph/taskgraph/internal/storage"
	"github.com/taskgraph/taskgraph/internal/store"
)

// Options configure a Service.
type Options struct {
	// Clock is the time source (tests inject their own); default time.Now.
	Clock func() time.Time
	// LoaderTiming says when a read batch closes; default loader.DefaultTiming.
	LoaderTiming loader.Timing
	Logger       *slog.Logger
	// LoggerFrom returns the logger of a request (carrying its request id);
	// default: Logger for every request.
	LoggerFrom func(ctx context.Context) *slog.Logger
	// DataDir holds uploaded traces and examples; default "data".
	DataDir string
	// MaxUploadBytes bounds one uploaded file; default DefaultMaxUploadBytes.
	MaxUploadBytes int64
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
}

// Service is the application core.
type Service struct {
	db           *store.DB
	clock        func() time.Time
	loaderTiming loader.Timing
	log          *slog.Logger
	loggerFrom   func(ctx context.Context) *slog.Logger
	files        *storage.Dir
	maxUpload    int64
	events       *events.Broker
	heartbeat    time.Duration
	missed       int
	maxAttempts  int
}

// New returns a Service over db.
func New(db *store.DB, opts Options) *Service {
	s := &Service{db: db, clock: opts.Clock, loaderTiming: opts.LoaderTiming, log: opts.Logger, loggerFrom: opts.LoggerFrom,
		events: opts.Events, heartbeat: opts.HeartbeatInterval, missed: opts.MissedHeartbeats, maxAttempts: opts.MaxAttempts}
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
		s.clock = time.Now
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.loggerFrom == nil {
		s.loggerFrom = func(context.Context) *slog.Logger { return s.log }
	}
	if opts.DataDir == "" {
		opts.DataDir = "data"
	}
	s.files = storage.New(opts.DataDir)
	if s.maxUpload = opts.MaxUploadBytes; s.maxUpload <= 0 {
		s.maxUpload = DefaultMaxUploadBytes
	}
	return s
}

// logger is the logger of the request ctx belongs to.
func (s *Service) logger(ctx context.Context) *slog.Logger { return s.loggerFrom(ctx) }

// now is the current time as stored: UTC, microsecond precision (PostgreSQL's).
func (s *Service) now() time.Time { return s.clock().UTC().Truncate(time.Microsecond) }

// newID returns a time-ordered UUID (v7, monotonic within the process): rows
// written at the same timestamp, such as two status changes in one transaction,
// still read back in the order they were made when ordered by (time, id).
func newID() string { return uuid.Must(uuid.NewV7()).String() }

// caller returns the authenticated principal or UNAUTHENTICATED.
func caller(ctx context.Context) (*auth.Principal, error) {
	p := auth.FromContext(ctx)
	if p == nil {
		return nil, domain.Errorf(domain.CodeUnauthenticated, "authentication required")
	}
	return p, nil
}

// actor is how a principal is recorded in changed_by / resolved_by columns.
func actor(p *auth.Principal) string {
	if p.UserID == "" {
		return "system" // the engine itself (the heartbeat sweep)
	}
	return domain.GlobalID(domain.KindUser, p.UserID)
}

// scopeOf is what projects a caller may see.
func scopeOf(p *auth.Principal) domain.ProjectScope {
	switch p.Role {
	case domain.RoleAdmin:
		return domain.ProjectScope{All: true}
	case domain.RoleAgent:
		return domain.ProjectScope{ProjectID: deref(p.ProjectID)}
	default:
		return domain.ProjectScope{OwnerID: p.UserID}
	}
}

// canSee reports whether p may read project.
func canSee(p *auth.Principal, project *domain.Project) bool {
	if project == nil {
		return false
	}
	switch p.Role {
	case domain.RoleAdmin:
		return true
	case domain.RoleAgent:
		return p.ProjectID != nil && *p.ProjectID == project.ID
	default:
		return project.OwnerID == p.UserID
	}
}

// canSeeProjectID is canSee by project id inside a transaction: only a
// MEMBER's check reads the project (its owner), and it reads it through q —
// not the request's loaders, which read on the pool, where a transaction
// holding row locks must not wait for a connection.
func canSeeProjectID(ctx context.Context, q *store.Q, p *auth.Principal, projectID string) (bool, error) {
	if p.Role == domain.RoleAdmin || p.Role == domain.RoleAgent {
		return canSee(p, &domain.Project{ID: projectID}), nil // their rule needs only the id
	}
	projects, err := q.ProjectsByIDs(ctx, []string{projectID})
	if err != nil || len(projects) == 0 {
		return false, err
	}
	return canSee(p, projects[0]), nil
}

// tx runs fn in one transaction and, once committed, drops the request's cached
// reads so the payload shows the new state.
func (s *Service) tx(ctx context.Context, fn func(q *store.Q) error) error {
	if err := s.db.InTx(ctx, fn); err != nil {
		return err
	}
	if l := loadersFrom(ctx); l != nil {
		l.clear()
	}
	return nil
}

// notFound turns a store miss into NOT_FOUND for what.
func notFound(err error, what string) error {
	if errors.Is(err, store.ErrNotFound) {
		return domain.NotFound(what)
	}
	return err
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func ptr[T any](v T) *T { return &v }
