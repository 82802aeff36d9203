package service

import (
	"context"
	"errors"

	"github.com/taskgraph/taskgraph/internal/auth"
	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/store"
)

// OperatorToken creates a token from the command line (`taskgraph token create`),
// where whoever runs the binary against the database is trusted as an admin.
func (s *Accounts) OperatorToken(ctx context.Context, userSlug string, role domain.Role, projectSlug, name string) (string, *domain.APIToken, error) {
	u, err := s.db.Users.UserBySlug(ctx, userSlug)
	if errors.Is(err, store.ErrNotFound) {
		return "", nil, &domain.Error{Code: domain.CodeNotFound, Field: "user", Message: "no user with slug " + userSlug}
	} else if err != nil {
		return "", nil, err
	}
	in := domain.CreateAPITokenInput{UserID: u.GlobalID(), Name: name, Role: role}
	if projectSlug != "" {
		p, err := s.db.Projects.ProjectBySlug(ctx, projectSlug)
		if errors.Is(err, store.ErrNotFound) {
			return "", nil, &domain.Error{Code: domain.CodeNotFound, Field: "project", Message: "no project with slug " + projectSlug}
		} else if err != nil {
			return "", nil, err
		}
		gid := p.GlobalID()
		in.ProjectID = &gid
	}
	ctx = auth.WithPrincipal(ctx, &auth.Principal{UserID: u.ID, Role: domain.RoleAdmin})
	return s.CreateAPIToken(ctx, in)
}
