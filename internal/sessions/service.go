// Package sessions holds the use-cases of agent sessions: a ReAct agent's
// versioned state (compare-and-swap on an integer version, whole state or
// RFC 7396 merge patch, explicit pruning), its todo lists, its append-only
// ReAct steps (numbered 1..N per session, gapless, in commit order), the
// lessons agents keep across sessions (full-text ranked on both databases),
// and the sessionEvents stream.
//
// Sessions belong to a project, so the core's role rules hold: ADMIN
// everything, MEMBER its own projects, AGENT tokens their one project. A
// session opened for a build agent belongs to that agent's task and run: its
// events are also on the run's stream.
//
// Its entities and rules are in internal/domain (sessions.go,
// session_events.go), its SQL in internal/store (q.Sessions).
package sessions

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
	// Clock is the time source (tests inject their own); default the
	// database's clock (store.DB.Clock).
	Clock func() time.Time
	// LoggerFrom returns the logger of a request; default slog.Default().
	LoggerFrom func(ctx context.Context) *slog.Logger
}

// Service is the agent sessions' use-cases.
type Service struct {
	db         *store.DB
	run        *app.Runner
	core       *service.Service
	clock      func() time.Time
	loggerFrom func(ctx context.Context) *slog.Logger
}

// New returns the sessions' use-cases over db, committing through run; core
// resolves the projects, tasks and agents sessions name, and streams events.
func New(db *store.DB, run *app.Runner, core *service.Service, opts Options) *Service {
	s := &Service{db: db, run: run, core: core, clock: opts.Clock, loggerFrom: opts.LoggerFrom}
	if s.clock == nil {
		s.clock = db.Clock
	}
	if s.loggerFrom == nil {
		s.loggerFrom = func(context.Context) *slog.Logger { return slog.Default() }
	}
	return s
}

// now is the current time as stored: UTC, microsecond precision (PostgreSQL's).
func (s *Service) now() time.Time { return s.clock().UTC().Truncate(time.Microsecond) }

// tx runs fn in one transaction (see app.Runner.InTx).
func (s *Service) tx(ctx context.Context, fn func(tx *app.Tx) error) error {
	return s.run.InTx(ctx, fn)
}

// visibleProject loads a project the caller may read, by global id in field.
func (s *Service) visibleProject(ctx context.Context, p *auth.Principal, gid, field string) (*domain.Project, error) {
	id, err := domain.DecodeID(domain.KindProject, gid, field)
	if err != nil {
		return nil, err
	}
	project, err := s.core.Projects.ProjectByID(ctx, id)
	if err != nil {
		return nil, err
	}
	if !app.CanSee(p, project) {
		return nil, &domain.Error{Code: domain.CodeNotFound, Field: field, Message: "project not found"}
	}
	return project, nil
}

// canSeeProject reports whether the caller may read project id (outside a
// transaction, through the request's loaders).
func (s *Service) canSeeProject(ctx context.Context, p *auth.Principal, id string) (bool, error) {
	if p.Role != domain.RoleMember {
		return app.CanSee(p, &domain.Project{ID: id}), nil
	}
	project, err := s.core.Projects.ProjectByID(ctx, id)
	if err != nil {
		return false, err
	}
	return app.CanSee(p, project), nil
}

// lockSession reads and locks a session inside tx, by global id in field,
// and checks that the caller may see it (NOT_FOUND otherwise).
func lockSession(ctx context.Context, tx *app.Tx, p *auth.Principal, gid, field string) (*domain.AgentSession, error) {
	id, err := domain.DecodeID(domain.KindAgentSession, gid, field)
	if err != nil {
		return nil, err
	}
	sess, err := tx.Sessions.SessionForUpdate(ctx, id)
	if err != nil {
		return nil, fieldNotFound(app.NotFound(err, "agent session"), field)
	}
	if ok, err := app.CanSeeProjectID(ctx, tx.Q, p, sess.ProjectID); err != nil {
		return nil, err
	} else if !ok {
		return nil, &domain.Error{Code: domain.CodeNotFound, Field: field, Message: "agent session not found"}
	}
	return sess, nil
}

// fieldNotFound names the input field of a NOT_FOUND.
func fieldNotFound(err error, field string) error {
	if de, ok := domain.AsError(err); ok && de.Code == domain.CodeNotFound && de.Field == "" {
		c := *de
		c.Field = field
		return &c
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
