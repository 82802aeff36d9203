package app

import (
	"context"
	"errors"

	"github.com/google/uuid"

	"github.com/taskgraph/taskgraph/internal/auth"
	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/store"
)

// Caller returns the authenticated principal or UNAUTHENTICATED.
func Caller(ctx context.Context) (*auth.Principal, error) {
	p := auth.FromContext(ctx)
	if p == nil {
		return nil, domain.Errorf(domain.CodeUnauthenticated, "authentication required")
	}
	return p, nil
}

// Actor is how a principal is recorded in changed_by / resolved_by columns.
func Actor(p *auth.Principal) string {
	if p.UserID == "" {
		return "system" // the engine itself (the heartbeat sweep)
	}
	return domain.GlobalID(domain.KindUser, p.UserID)
}

// ScopeOf is what projects a caller may see.
func ScopeOf(p *auth.Principal) domain.ProjectScope {
	switch p.Role {
	case domain.RoleAdmin:
		return domain.ProjectScope{All: true}
	case domain.RoleAgent:
		if p.ProjectID == nil {
			return domain.ProjectScope{}
		}
		return domain.ProjectScope{ProjectID: *p.ProjectID}
	default:
		return domain.ProjectScope{OwnerID: p.UserID}
	}
}

// CanSee reports whether p may read project.
func CanSee(p *auth.Principal, project *domain.Project) bool {
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

// CanSeeProjectID is CanSee by project id inside a transaction: only a
// MEMBER's check reads the project (its owner), and it reads it through q —
// not the request's loaders, which read on the pool, where a transaction
// holding row locks must not wait for a connection.
func CanSeeProjectID(ctx context.Context, q *store.Q, p *auth.Principal, projectID string) (bool, error) {
	if p.Role == domain.RoleAdmin || p.Role == domain.RoleAgent {
		return CanSee(p, &domain.Project{ID: projectID}), nil // their rule needs only the id
	}
	projects, err := q.Projects.ProjectsByIDs(ctx, []string{projectID})
	if err != nil || len(projects) == 0 {
		return false, err
	}
	return CanSee(p, projects[0]), nil
}

// NotFound turns a store miss into NOT_FOUND for what.
func NotFound(err error, what string) error {
	if errors.Is(err, store.ErrNotFound) {
		return domain.NotFound(what)
	}
	return err
}

// NewID returns a time-ordered UUID (v7, monotonic within the process): rows
// written at the same timestamp, such as two status changes in one transaction,
// still read back in the order they were made when ordered by (time, id).
func NewID() string { return uuid.Must(uuid.NewV7()).String() }
