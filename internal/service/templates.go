package service

import (
	"context"

	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/auth"
	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/store"
)

// CreateTaskTemplate creates a template: GLOBAL (admins only), for a PROJECT the
// caller may change, or for a USER (the caller, or anyone for an admin).
func (s *Tasks) CreateTaskTemplate(ctx context.Context, in domain.CreateTaskTemplateInput) (*domain.TaskTemplate, error) {
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
	desc, err := domain.CheckText("description", deref(in.Description), domain.MaxDescription, false)
	if err != nil {
		return nil, err
	}
	lists, err := checkTaskLists(in.DefaultAcceptanceCriteria, in.DefaultCodebaseTests, in.DefaultAPITests, in.DefaultUITests, in.DefaultAffectedFiles)
	if err != nil {
		return nil, err
	}
	var scopeID *string
	switch in.Scope {
	case domain.ScopeGlobal:
		if !p.IsAdmin() {
			return nil, domain.Forbidden("only an admin can create GLOBAL templates")
		}
		if in.ProjectID != nil || in.UserID != nil {
			return nil, domain.InputError("scope", "a GLOBAL template takes neither projectId nor userId")
		}
	case domain.ScopeProject:
		if in.ProjectID == nil {
			return nil, domain.InputError("projectId", "a PROJECT template needs projectId")
		}
		project, err := s.Projects.writableProject(ctx, p, *in.ProjectID, "projectId")
		if err != nil {
			return nil, err
		}
		scopeID = &project.ID
	case domain.ScopeUser:
		userID := p.UserID
		if in.UserID != nil {
			if userID, err = domain.DecodeID(domain.KindUser, *in.UserID, "userId"); err != nil {
				return nil, err
			}
		}
		if userID != p.UserID && !p.IsAdmin() {
			return nil, domain.Forbidden("members create USER templates for themselves only")
		}
		if u, err := s.load(ctx).users.Get(ctx, userID); err != nil {
			return nil, err
		} else if u == nil {
			return nil, &domain.Error{Code: domain.CodeNotFound, Field: "userId", Message: "user not found"}
		}
		scopeID = &userID
	}
	now := s.now()
	t := &domain.TaskTemplate{ID: app.NewID(), Name: name, Description: desc, Category: in.Category,
		DefaultAcceptanceCriteria: lists.acceptance, DefaultCodebaseTests: lists.codebase, DefaultAPITests: lists.api,
		DefaultUITests: lists.ui, DefaultAffectedFiles: lists.files, Scope: in.Scope, ScopeID: scopeID,
		CreatedByID: &p.UserID, CreatedAt: now, UpdatedAt: now}
	if err := s.tx(ctx, func(tx *app.Tx) error { return tx.Lists.InsertTemplate(ctx, t) }); err != nil {
		return nil, err
	}
	return t, nil
}

// canUseTemplate: GLOBAL for all, PROJECT for who sees the project, USER for that
// user (and admins).
func (s *Tasks) canUseTemplate(ctx context.Context, p *auth.Principal, t *domain.TaskTemplate) (bool, error) {
	switch t.Scope {
	case domain.ScopeGlobal:
		return true, nil
	case domain.ScopeUser:
		return p.IsAdmin() || deref(t.ScopeID) == p.UserID, nil
	default:
		project, err := s.load(ctx).projects.Get(ctx, deref(t.ScopeID))
		return app.CanSee(p, project), err
	}
}

// CreateTaskFromTemplate creates a task prefilled from a template and counts the use.
func (s *Tasks) CreateTaskFromTemplate(ctx context.Context, in domain.CreateTaskFromTemplateInput) (*domain.Task, *domain.TaskTemplate, error) {
	p, err := app.Caller(ctx)
	if err != nil {
		return nil, nil, err
	}
	id, err := domain.DecodeID(domain.KindTemplate, in.TemplateID, "templateId")
	if err != nil {
		return nil, nil, err
	}
	tpl, err := s.load(ctx).templates.Get(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	missing := &domain.Error{Code: domain.CodeNotFound, Field: "templateId", Message: "task template not found"}
	if tpl == nil {
		return nil, nil, missing
	}
	if ok, err := s.canUseTemplate(ctx, p, tpl); err != nil {
		return nil, nil, err
	} else if !ok {
		return nil, nil, missing
	}
	project, err := s.Projects.writableProject(ctx, p, in.ProjectID, "projectId")
	if err != nil {
		return nil, nil, err
	}
	if tpl.Scope == domain.ScopeProject && deref(tpl.ScopeID) != project.ID {
		return nil, nil, domain.InputError("templateId", "this template belongs to another project")
	}
	create := domain.CreateTaskInput{ProjectID: in.ProjectID, Title: in.Title, Description: in.Description,
		Category: &tpl.Category, Priority: in.Priority, Effort: in.Effort, RiskLevel: in.RiskLevel, Deadline: in.Deadline,
		AcceptanceCriteria: tpl.DefaultAcceptanceCriteria, CodebaseTests: tpl.DefaultCodebaseTests,
		APITests: tpl.DefaultAPITests, UITests: tpl.DefaultUITests, AffectedFiles: tpl.DefaultAffectedFiles,
		TaskListID: in.TaskListID, InEvaluationQueue: in.InEvaluationQueue}
	if create.Description == nil && tpl.Description != "" {
		create.Description = &tpl.Description
	}
	var t *domain.Task
	err = s.tx(ctx, func(tx *app.Tx) error {
		if t, err = s.createTask(ctx, tx, p, project, create); err != nil {
			return err
		}
		return tx.Lists.CountTemplateUse(ctx, tpl.ID, s.now())
	})
	if err != nil {
		return nil, nil, err
	}
	tpl, err = s.load(ctx).templates.Get(ctx, id)
	return t, tpl, err
}

// TaskTemplates pages the templates the caller can use (in a project, if given).
func (s *Tasks) TaskTemplates(ctx context.Context, projectGID *string, page domain.PageArgs) (domain.Page[*domain.TaskTemplate], error) {
	p, err := app.Caller(ctx)
	if err != nil {
		return domain.Page[*domain.TaskTemplate]{}, err
	}
	tq := store.TemplateQuery{Scope: app.ScopeOf(p), UserID: p.UserID, Page: page}
	if projectGID != nil {
		project, err := s.Projects.visibleProject(ctx, p, *projectGID, "projectId")
		if err != nil {
			return domain.Page[*domain.TaskTemplate]{}, err
		}
		tq.ProjectID = project.ID
	}
	return s.db.Lists.Templates(ctx, tq)
}

// TemplatesOfProject pages the templates usable in a project the caller sees.
func (s *Tasks) TemplatesOfProject(ctx context.Context, projectID string, page domain.PageArgs) (domain.Page[*domain.TaskTemplate], error) {
	return s.TaskTemplates(ctx, ptr(domain.GlobalID(domain.KindProject, projectID)), page)
}
