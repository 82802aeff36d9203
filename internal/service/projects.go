package service

import (
	"context"
	"errors"

	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/auth"
	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/store"
)

// visibleProject loads a project the caller may read, by global id given in field.
func (s *Projects) visibleProject(ctx context.Context, p *auth.Principal, gid, field string) (*domain.Project, error) {
	id, err := domain.DecodeID(domain.KindProject, gid, field)
	if err != nil {
		return nil, err
	}
	project, err := s.visibleProjectByID(ctx, p, id)
	if domain.ErrorCode(err) == domain.CodeNotFound {
		// Like the other lookups by input id, name the field that held it.
		return nil, &domain.Error{Code: domain.CodeNotFound, Field: field, Message: "project not found"}
	}
	return project, err
}

func (s *Projects) visibleProjectByID(ctx context.Context, p *auth.Principal, id string) (*domain.Project, error) {
	project, err := s.load(ctx).projects.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	if !app.CanSee(p, project) {
		return nil, domain.NotFound("project")
	}
	return project, nil
}

// visibleProjectID checks that the caller may see project id, the project
// of a row just read (its foreign key holds it): an ADMIN's or an AGENT's
// rule needs only the id, so only a MEMBER's check reads the project.
func (s *Projects) visibleProjectID(ctx context.Context, p *auth.Principal, id string) error {
	if p.Role == domain.RoleAdmin || p.Role == domain.RoleAgent {
		if !app.CanSee(p, &domain.Project{ID: id}) {
			return domain.NotFound("project")
		}
		return nil
	}
	_, err := s.visibleProjectByID(ctx, p, id)
	return err
}

// writableProject loads a project the caller may change: visible, and not through
// an AGENT token (agents only call the agent mutations).
func (s *Projects) writableProject(ctx context.Context, p *auth.Principal, gid, field string) (*domain.Project, error) {
	project, err := s.visibleProject(ctx, p, gid, field)
	if err != nil {
		return nil, err
	}
	return project, checkWriter(p)
}

func checkWriter(p *auth.Principal) error {
	if p.Role == domain.RoleAgent {
		return domain.Forbidden("agent tokens may only call the agent mutations")
	}
	return nil
}

// CreateProject creates a project owned by the caller.
func (s *Projects) CreateProject(ctx context.Context, in domain.CreateProjectInput) (*domain.Project, error) {
	p, err := app.Caller(ctx)
	if err != nil {
		return nil, err
	}
	if err := checkWriter(p); err != nil {
		return nil, err
	}
	name, err := domain.CheckText("name", in.Name, domain.MaxName, true)
	if err != nil {
		return nil, err
	}
	if err := domain.CheckSlug("slug", in.Slug); err != nil {
		return nil, err
	}
	desc, err := domain.CheckText("description", deref(in.Description), domain.MaxDescription, false)
	if err != nil {
		return nil, err
	}
	now := s.now()
	project := &domain.Project{ID: app.NewID(), Slug: in.Slug, Name: name, Description: desc, OwnerID: p.UserID,
		Status: domain.ProjectActive, CreatedAt: now, UpdatedAt: now}
	taken := &domain.Error{Code: domain.CodeConflict, Field: "slug", Message: "slug " + in.Slug + " is taken"}
	// On PostgreSQL a concurrent creation can take the slug or the chosen
	// display code between the reads and the insert: the unique index refuses
	// it, and the next try reads again.
	for try := 0; ; try++ {
		err = s.tx(ctx, func(tx *app.Tx) error {
			if used, err := tx.Projects.SlugTaken(ctx, in.Slug); err != nil {
				return err
			} else if used {
				return taken
			}
			codes, err := tx.Projects.DisplayCodesFrom(ctx, domain.DisplayCodeStem(in.Slug))
			if err != nil {
				return err
			}
			code, ok := domain.PickDisplayCode(in.Slug, codes)
			if !ok {
				return &domain.Error{Code: domain.CodeConflict, Field: "slug", Message: "every display code for slugs starting like " +
					in.Slug + " is taken: choose a slug that starts differently"}
			}
			project.DisplayCode = code
			return tx.Projects.CreateProject(ctx, project)
		})
		if errors.Is(err, store.ErrUnique) && try < 3 {
			continue
		}
		if errors.Is(err, store.ErrUnique) {
			return nil, taken
		}
		if err != nil {
			return nil, err
		}
		return project, nil
	}
}

// UpdateProject changes a project's name, description or status.
func (s *Projects) UpdateProject(ctx context.Context, in domain.UpdateProjectInput) (*domain.Project, error) {
	p, err := app.Caller(ctx)
	if err != nil {
		return nil, err
	}
	project, err := s.writableProject(ctx, p, in.ID, "id")
	if err != nil {
		return nil, err
	}
	next := *project
	if in.Name != nil {
		if next.Name, err = domain.CheckText("name", *in.Name, domain.MaxName, true); err != nil {
			return nil, err
		}
	}
	if in.Description != nil {
		if next.Description, err = domain.CheckText("description", *in.Description, domain.MaxDescription, false); err != nil {
			return nil, err
		}
	}
	if in.Status != nil {
		next.Status = *in.Status
	}
	next.UpdatedAt = s.now()
	if err := s.tx(ctx, func(tx *app.Tx) error { return tx.Projects.UpdateProject(ctx, &next) }); err != nil {
		return nil, err
	}
	return &next, nil
}

// Project finds a project by global id or slug; nil when absent or invisible.
func (s *Projects) Project(ctx context.Context, gid, slug *string) (*domain.Project, error) {
	p, err := app.Caller(ctx)
	if err != nil {
		return nil, err
	}
	if (gid == nil) == (slug == nil) {
		return nil, domain.InputError("id", "give exactly one of id and slug")
	}
	var project *domain.Project
	if gid != nil {
		kind, id, ok := domain.ParseGlobalID(*gid)
		if !ok {
			return nil, domain.InputError("id", "%q is not a valid id", *gid)
		}
		if kind != domain.KindProject {
			return nil, nil
		}
		if project, err = s.load(ctx).projects.Get(ctx, id); err != nil {
			return nil, err
		}
	} else {
		project, err = s.db.Projects.ProjectBySlug(ctx, *slug)
		if errors.Is(err, store.ErrNotFound) {
			return nil, nil
		} else if err != nil {
			return nil, err
		}
	}
	if !app.CanSee(p, project) {
		return nil, nil
	}
	return project, nil
}

// ProjectByID loads a project for nested fields.
//
// Every nested field that names a project resolves through here, so each
// applies node()'s rule: a project the caller may not see is null (an API
// token of another project, listed to an AGENT token of the same user, names
// a project that token may not read).
func (s *Projects) ProjectByID(ctx context.Context, id string) (*domain.Project, error) {
	p, err := app.Caller(ctx)
	if err != nil {
		return nil, err
	}
	project, err := s.load(ctx).projects.Load(ctx, id)
	if err != nil || !app.CanSee(p, project) {
		return nil, err
	}
	return project, nil
}

// ListProjects pages the projects the caller can see.
func (s *Projects) ListProjects(ctx context.Context, f *domain.ProjectFilter, page domain.PageArgs) (domain.Page[*domain.Project], error) {
	p, err := app.Caller(ctx)
	if err != nil {
		return domain.Page[*domain.Project]{}, err
	}
	return s.db.Projects.Projects(ctx, app.ScopeOf(p), f, page)
}

// ProjectsOfUser pages the projects a user owns that the caller can see.
func (s *Projects) ProjectsOfUser(ctx context.Context, userID string, page domain.PageArgs) (domain.Page[*domain.Project], error) {
	p, err := app.Caller(ctx)
	if err != nil {
		return domain.Page[*domain.Project]{}, err
	}
	scope := app.ScopeOf(p)
	return app.NestedPage(ctx, s.db, "User.projects", page, userID,
		func(ctx context.Context, q *store.Q, parents []string) (map[string]domain.Page[*domain.Project], error) {
			return q.Projects.ProjectsByOwners(ctx, scope, parents, page)
		},
		func(ctx context.Context, q *store.Q, parents []string) (map[string]int, error) {
			return q.Projects.CountProjectsByOwners(ctx, scope, parents)
		})
}

// CreateIdea creates an idea in a project.
func (s *Projects) CreateIdea(ctx context.Context, in domain.CreateIdeaInput) (*domain.Idea, error) {
	p, err := app.Caller(ctx)
	if err != nil {
		return nil, err
	}
	project, err := s.writableProject(ctx, p, in.ProjectID, "projectId")
	if err != nil {
		return nil, err
	}
	name, err := domain.CheckText("name", in.Name, domain.MaxName, true)
	if err != nil {
		return nil, err
	}
	if err := domain.CheckSlug("slug", in.Slug); err != nil {
		return nil, err
	}
	desc, err := domain.CheckText("description", deref(in.Description), domain.MaxDescription, false)
	if err != nil {
		return nil, err
	}
	stage := domain.IdeaSpark
	if in.LifecycleStage != nil {
		if stage = *in.LifecycleStage; !stage.Valid() {
			return nil, domain.InputError("lifecycleStage", "unknown stage %q", stage)
		}
	}
	now := s.now()
	idea := &domain.Idea{ID: app.NewID(), Slug: in.Slug, ProjectID: project.ID, Name: name, Description: desc,
		LifecycleStage: stage, CreatedAt: now, UpdatedAt: now}
	err = s.tx(ctx, func(tx *app.Tx) error { return tx.Projects.CreateIdea(ctx, idea) })
	if errors.Is(err, store.ErrUnique) {
		return nil, &domain.Error{Code: domain.CodeConflict, Field: "slug", Message: "the project already has an idea with slug " + in.Slug}
	}
	return idea, err
}

// IdeaByID loads an idea for nested fields.
func (s *Projects) IdeaByID(ctx context.Context, id string) (*domain.Idea, error) {
	return s.load(ctx).ideas.Load(ctx, id)
}

// IdeasOfProject pages a project's ideas.
func (s *Projects) IdeasOfProject(ctx context.Context, projectID string, page domain.PageArgs) (domain.Page[*domain.Idea], error) {
	return app.NestedPage(ctx, s.db, "Project.ideas", page, projectID,
		func(ctx context.Context, q *store.Q, parents []string) (map[string]domain.Page[*domain.Idea], error) {
			return q.Projects.IdeasByProjects(ctx, parents, page)
		},
		func(ctx context.Context, q *store.Q, parents []string) (map[string]int, error) {
			return q.Projects.CountIdeasByProjects(ctx, parents)
		})
}

// TaskListsOfProject pages a project's task lists.
func (s *Projects) TaskListsOfProject(ctx context.Context, projectID string, page domain.PageArgs) (domain.Page[*domain.TaskList], error) {
	return app.NestedPage(ctx, s.db, "Project.taskLists", page, projectID,
		func(ctx context.Context, q *store.Q, parents []string) (map[string]domain.Page[*domain.TaskList], error) {
			return q.Lists.TaskListsByProjects(ctx, parents, page)
		},
		func(ctx context.Context, q *store.Q, parents []string) (map[string]int, error) {
			return q.Lists.CountTaskListsByProjects(ctx, parents)
		})
}
