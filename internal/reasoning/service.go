// Package reasoning holds the use-cases of reasoning records: multi-pass
// reasoning executions with their versioned task profiles, passes,
// convergence assessments, semantic validation reports, refinements and plan
// steps. An execution belongs to a project, optionally to an agent session,
// a task and a run of it; its events go on that project's log (and the
// session's and the run's streams).
//
// Reasoning records are project-scoped: ADMIN changes any, MEMBER those of
// the projects it owns, AGENT tokens read their project's and change nothing.
// The rules are the pure functions of internal/domain/reasoning_rules.go; the
// SQL is internal/store's q.Reasoning.
package reasoning

import (
	"context"
	"errors"
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

// Service is the reasoning records' use-cases.
type Service struct {
	db    *store.DB
	run   *app.Runner
	clock func() time.Time
}

// New returns the reasoning use-cases over db, committing through run.
func New(db *store.DB, run *app.Runner, opts Options) *Service {
	s := &Service{db: db, run: run, clock: opts.Clock}
	if s.clock == nil {
		s.clock = db.Clock
	}
	return s
}

// now is the current time as stored: UTC, microsecond precision (PostgreSQL's).
func (s *Service) now() time.Time { return s.clock().UTC().Truncate(time.Microsecond) }

// writer returns the caller when it may change reasoning records: agent
// tokens only call the agent mutations.
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

// notFound is NOT_FOUND naming the input field that held the id.
func notFound(field, what string) error {
	return &domain.Error{Code: domain.CodeNotFound, Field: field, Message: what + " not found"}
}

func conflict(field, msg string) error {
	return &domain.Error{Code: domain.CodeConflict, Field: field, Message: msg}
}

// decode turns a global id of kind given in field into a database id; an id
// of another kind is NOT_FOUND naming the field.
func decode(kind domain.Kind, gid, field, what string) (string, error) {
	id, err := domain.DecodeID(kind, gid, field)
	if domain.ErrorCode(err) == domain.CodeNotFound {
		return "", notFound(field, what)
	}
	return id, err
}

// lockExecution loads the execution id names and locks it for the rest of
// the transaction: the changes of one execution go one at a time. NOT_FOUND
// (naming field) when it is absent or not visible to p.
func lockExecution(ctx context.Context, tx *app.Tx, p *auth.Principal, id, field string) (*domain.ReasoningExecution, error) {
	e, err := tx.Reasoning.ReasoningExecutionForUpdate(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, notFound(field, "reasoning execution")
	}
	if err != nil {
		return nil, err
	}
	ok, err := app.CanSeeProjectID(ctx, tx.Q, p, e.ProjectID)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, notFound(field, "reasoning execution")
	}
	return e, nil
}

// lockPass loads the pass gid names (field passId) and locks its execution.
func lockPass(ctx context.Context, tx *app.Tx, p *auth.Principal, gid string) (*domain.ExecutionPass, *domain.ReasoningExecution, error) {
	id, err := decode(domain.KindExecutionPass, gid, "passId", "execution pass")
	if err != nil {
		return nil, nil, err
	}
	passes, err := tx.Reasoning.ExecutionPassesByIDs(ctx, []string{id})
	if err != nil {
		return nil, nil, err
	}
	if len(passes) == 0 {
		return nil, nil, notFound("passId", "execution pass")
	}
	e, err := lockExecution(ctx, tx, p, passes[0].ExecutionID, "passId")
	if err != nil {
		return nil, nil, err
	}
	// Read again under the lock: the pass may have ended meanwhile.
	if passes, err = tx.Reasoning.ExecutionPassesByIDs(ctx, []string{id}); err != nil {
		return nil, nil, err
	}
	return passes[0], e, nil
}

// lastPass is an execution's newest pass, nil when it has none.
func lastPass(ctx context.Context, tx *app.Tx, executionID string) (*domain.ExecutionPass, error) {
	p, err := tx.Reasoning.LastExecutionPass(ctx, executionID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	return p, err
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
