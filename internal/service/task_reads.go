package service

import (
	"context"
	"errors"

	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/auth"
	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/store"
)

// editableTask loads a task the caller may change, by global id given in field.
func (s *Tasks) editableTask(ctx context.Context, p *auth.Principal, gid, field string) (*domain.Task, *domain.Project, error) {
	t, project, err := s.visibleTask(ctx, p, gid, field)
	if err != nil {
		return nil, nil, err
	}
	return t, project, checkWriter(p)
}

func (s *Tasks) visibleTask(ctx context.Context, p *auth.Principal, gid, field string) (*domain.Task, *domain.Project, error) {
	id, err := domain.DecodeID(domain.KindTask, gid, field)
	if err != nil {
		return nil, nil, err
	}
	t, err := s.load(ctx).tasks.Get(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	if t == nil {
		return nil, nil, &domain.Error{Code: domain.CodeNotFound, Field: field, Message: "task not found"}
	}
	project, err := s.load(ctx).projects.Get(ctx, t.ProjectID)
	if err != nil {
		return nil, nil, err
	}
	if !app.CanSee(p, project) {
		return nil, nil, &domain.Error{Code: domain.CodeNotFound, Field: field, Message: "task not found"}
	}
	return t, project, nil
}

// Task finds a task by global id or display id; nil when absent or invisible.
func (s *Tasks) Task(ctx context.Context, gid, displayID *string) (*domain.Task, error) {
	p, err := app.Caller(ctx)
	if err != nil {
		return nil, err
	}
	if (gid == nil) == (displayID == nil) {
		return nil, domain.InputError("id", "give exactly one of id and displayId")
	}
	var t *domain.Task
	if gid != nil {
		kind, id, ok := domain.ParseGlobalID(*gid)
		if !ok {
			return nil, domain.InputError("id", "%q is not a valid id", *gid)
		}
		if kind != domain.KindTask {
			return nil, nil
		}
		if t, err = s.load(ctx).tasks.Get(ctx, id); err != nil {
			return nil, err
		}
	} else if t, err = s.db.Tasks.TaskByDisplayID(ctx, *displayID); errors.Is(err, store.ErrNotFound) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	if t == nil {
		return nil, nil
	}
	if err := s.Projects.visibleProjectID(ctx, p, t.ProjectID); err != nil {
		if domain.ErrorCode(err) == domain.CodeNotFound {
			return nil, nil
		}
		return nil, err
	}
	return t, nil
}

// TaskByID loads a task for nested fields (nil when gone): read lean when
// the operation may (app.Lean), which keeps its ids, project and status.
func (s *Tasks) TaskByID(ctx context.Context, id *string) (*domain.Task, error) {
	if id == nil {
		return nil, nil
	}
	return s.load(ctx).shownTasks().Load(ctx, *id)
}

// TasksArgs are the arguments of a tasks connection.
type TasksArgs struct {
	Filter *domain.TaskFilter
	Order  *domain.TaskOrder
	Page   domain.PageArgs
}

// decodeFilter turns the filter's global ids into database ids.
func decodeFilter(f *domain.TaskFilter) (*domain.TaskFilter, error) {
	if f == nil || f.TaskListID == nil {
		return f, nil
	}
	out := *f
	id, err := domain.DecodeID(domain.KindTaskList, *f.TaskListID, "filter.taskListId")
	if err != nil {
		var de *domain.Error
		if errors.As(err, &de) && de.Code == domain.CodeNotFound {
			id = "00000000-0000-0000-0000-000000000000" // another kind of id matches no task
		} else {
			return nil, err
		}
	}
	out.TaskListID = &id
	return &out, nil
}

// leanPage is tq reading the tasks lean when the operation may (app.Lean):
// a page of tasks is only shown.
func leanPage(ctx context.Context, tq store.TaskQuery) store.TaskQuery {
	if shown := app.LeanOf(ctx).Tasks; shown.Lean {
		tq.Lean, tq.Fields = true, shown.Fields
	}
	return tq
}

// ListTasks pages the tasks of one project, or of every project the caller can see.
func (s *Tasks) ListTasks(ctx context.Context, projectGID *string, args TasksArgs) (domain.Page[*domain.Task], error) {
	p, err := app.Caller(ctx)
	if err != nil {
		return domain.Page[*domain.Task]{}, err
	}
	filter, err := decodeFilter(args.Filter)
	if err != nil {
		return domain.Page[*domain.Task]{}, err
	}
	tq := leanPage(ctx, store.TaskQuery{Scope: app.ScopeOf(p), Filter: filter, Order: args.Order, Page: args.Page})
	if projectGID != nil {
		project, err := s.Projects.visibleProject(ctx, p, *projectGID, "projectId")
		if err != nil {
			return domain.Page[*domain.Task]{}, err
		}
		tq.Scope = domain.ProjectScope{ProjectID: project.ID}
	}
	pages, err := s.db.Tasks.Tasks(ctx, tq)
	if err != nil {
		return domain.Page[*domain.Task]{}, err
	}
	pg := pages[""]
	pg.Total = func(ctx context.Context) (int, error) {
		n, err := s.db.Tasks.CountTasks(ctx, tq)
		return n[""], err
	}
	return pg, nil
}

// TasksOfProject pages a project's tasks (batched across projects).
func (s *Tasks) TasksOfProject(ctx context.Context, projectID string, args TasksArgs) (domain.Page[*domain.Task], error) {
	filter, err := decodeFilter(args.Filter)
	if err != nil {
		return domain.Page[*domain.Task]{}, err
	}
	return s.nestedTasks(ctx, "Project.tasks", projectID, store.TaskQuery{Scope: domain.ProjectScope{All: true},
		Filter: filter, Order: args.Order, Page: args.Page}, false)
}

// EvaluationQueue pages a project's queued tasks, highest priority score first.
func (s *Tasks) EvaluationQueue(ctx context.Context, projectID string, page domain.PageArgs) (domain.Page[*domain.Task], error) {
	return s.nestedTasks(ctx, "Project.evaluationQueue", projectID, store.TaskQuery{Scope: domain.ProjectScope{All: true},
		Filter: &domain.TaskFilter{InEvaluationQueue: ptr(true)},
		Order:  &domain.TaskOrder{Field: domain.OrderPriorityScore, Direction: domain.OrderDesc}, Page: page}, false)
}

// TasksOfIdea pages the tasks related to an idea.
func (s *Tasks) TasksOfIdea(ctx context.Context, ideaID string, page domain.PageArgs) (domain.Page[*domain.Task], error) {
	return s.nestedTasks(ctx, "Idea.tasks", ideaID, store.TaskQuery{Scope: domain.ProjectScope{All: true}, Page: page}, true)
}

func (s *Tasks) nestedTasks(ctx context.Context, field, parent string, tq store.TaskQuery, byIdea bool) (domain.Page[*domain.Task], error) {
	tq = leanPage(ctx, tq)
	withParents := func(parents []string) store.TaskQuery {
		out := tq
		if byIdea {
			out.IdeaIDs = parents
		} else {
			out.ProjectIDs = parents
		}
		return out
	}
	return app.NestedPage(ctx, s.db, field, tq, parent,
		func(ctx context.Context, q *store.Q, parents []string) (map[string]domain.Page[*domain.Task], error) {
			return q.Tasks.Tasks(ctx, withParents(parents))
		},
		func(ctx context.Context, q *store.Q, parents []string) (map[string]int, error) {
			return q.Tasks.CountTasks(ctx, withParents(parents))
		})
}
