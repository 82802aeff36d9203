package queue

import (
	"context"

	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/auth"
	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/loader"
	"github.com/taskgraph/taskgraph/internal/store"
)

type loaders struct {
	items     *loader.Loader[string, *domain.QueueItem]
	functions *loader.Loader[string, *domain.QueueFunction]
}

func (l *loaders) Clear() { l.items.Clear(); l.functions.Clear() }

type loadersKey struct{}

func (s *Service) load(ctx context.Context) *loaders {
	return app.Set(ctx, loadersKey{}, func(w loader.Timing) *loaders {
		q := &s.db.Q
		return &loaders{
			items:     loader.New(w, app.ByID(q.Queue.ItemsByIDs, func(v *domain.QueueItem) string { return v.ID })),
			functions: loader.New(w, app.ByID(q.Queue.FunctionsByIDs, func(v *domain.QueueFunction) string { return v.ID })),
		}
	})
}

// ItemByID loads an item for nested fields (event payloads): nil when absent.
func (s *Service) ItemByID(ctx context.Context, id string) (*domain.QueueItem, error) {
	return s.load(ctx).items.Load(ctx, id)
}

// Items pages the items of a project the caller may see, newest first.
func (s *Service) Items(ctx context.Context, projectGID string, f *domain.QueueItemFilter, page domain.PageArgs) (domain.Page[*domain.QueueItem], error) {
	var none domain.Page[*domain.QueueItem]
	p, err := app.Caller(ctx)
	if err != nil {
		return none, err
	}
	projectID, err := domain.DecodeID(domain.KindProject, projectGID, "projectId")
	if err != nil {
		return none, err
	}
	var sf store.QueueItemFilter
	if f != nil {
		for _, st := range f.Status {
			if !st.Valid() {
				return none, domain.InputError("filter.status", "unknown queue item status %q", st)
			}
		}
		sf.Statuses, sf.FunctionName = f.Status, f.FunctionName
		if f.EntityID != nil {
			_, id, ok := domain.ParseGlobalID(*f.EntityID)
			if !ok {
				return none, domain.InputError("filter.entityId", "%q is not a valid id", *f.EntityID)
			}
			sf.EntityID = &id
		}
	}
	ok, err := app.CanSeeProjectID(ctx, &s.db.Q, p, projectID)
	if err != nil {
		return none, err
	}
	if !ok {
		return none, &domain.Error{Code: domain.CodeNotFound, Field: "projectId", Message: "project not found"}
	}
	return s.db.Queue.Items(ctx, projectID, sf, page)
}

// NodeOf loads a queue item or function by kind for node(id:) (an
// app.NodeSource). Functions are global; items need their project visible.
func (s *Service) NodeOf(ctx context.Context, p *auth.Principal, kind domain.Kind, id string) (domain.Node, bool, error) {
	l := s.load(ctx)
	switch kind {
	case domain.KindQueueFunction:
		f, err := l.functions.Load(ctx, id)
		if err != nil || f == nil {
			return nil, true, err
		}
		return f, true, nil
	case domain.KindQueueItem:
		it, err := l.items.Load(ctx, id)
		if err != nil || it == nil {
			return nil, true, err
		}
		ok, err := app.CanSeeProjectID(ctx, &s.db.Q, p, it.ProjectID)
		if err != nil || !ok {
			return nil, true, err
		}
		return it, true, nil
	}
	return nil, false, nil
}
