package grouping

import (
	"context"

	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/auth"
	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/loader"
	"github.com/taskgraph/taskgraph/internal/store"
)

// loaders are the request's batched reads of the grouping domain.
type loaders struct {
	suggestions *loader.Loader[string, *domain.GroupingSuggestion]
	agents      *loader.Loader[string, *domain.TaskAgentInstance]
	weights     *loader.Loader[string, domain.GroupingWeights]
	agentsOf    *loader.Loader[string, []*domain.TaskAgentInstance]
}

type loadersKey struct{}

func (l *loaders) Clear() {
	l.suggestions.Clear()
	l.agents.Clear()
	l.weights.Clear()
	l.agentsOf.Clear()
}

func (s *Service) load(ctx context.Context) *loaders {
	return app.Set(ctx, loadersKey{}, func(w loader.Timing) *loaders {
		q := &s.db.Q
		return &loaders{
			suggestions: loader.New(w, app.ByID(q.Grouping.SuggestionsByIDs, func(v *domain.GroupingSuggestion) string { return v.ID })),
			agents:      loader.New(w, app.ByID(q.Grouping.TaskAgentsByIDs, func(v *domain.TaskAgentInstance) string { return v.ID })),
			agentsOf: loader.New(w, app.GroupedBy(q.Grouping.TaskAgentsOfProjects,
				func(v *domain.TaskAgentInstance) string { return v.ProjectID })),
			weights: loader.New(w, func(ctx context.Context, ids []string) (map[string]domain.GroupingWeights, error) {
				rows, err := q.Grouping.WeightsOfProjects(ctx, ids)
				if err != nil {
					return nil, err
				}
				out := make(map[string]domain.GroupingWeights, len(ids))
				for _, id := range ids {
					out[id] = domain.DefaultGroupingWeights
				}
				for _, r := range rows {
					out[r.ProjectID] = r.Weights()
				}
				return out, nil
			}),
		}
	})
}

// SuggestionByID loads a suggestion for nested fields (nil when gone).
func (s *Service) SuggestionByID(ctx context.Context, id string) (*domain.GroupingSuggestion, error) {
	return s.load(ctx).suggestions.Load(ctx, id)
}

// TaskAgentByID loads a task agent for nested fields (nil when gone or id nil).
func (s *Service) TaskAgentByID(ctx context.Context, id *string) (*domain.TaskAgentInstance, error) {
	if id == nil {
		return nil, nil
	}
	return s.load(ctx).agents.Load(ctx, *id)
}

// SuggestedTasks loads a suggestion's tasks in order, batched with every
// other suggestion of the request.
func (s *Service) SuggestedTasks(ctx context.Context, sg *domain.GroupingSuggestion) ([]*domain.Task, error) {
	return s.core.Lists.PlannedTasks(ctx, sg.TaskIDs)
}

// SuggestionsOfProject pages a project's suggestions (oldest first),
// optionally only those with the given statuses.
func (s *Service) SuggestionsOfProject(ctx context.Context, projectID string, statuses []domain.GroupingSuggestionStatus, page domain.PageArgs) (domain.Page[*domain.GroupingSuggestion], error) {
	if err := page.Validate(); err != nil {
		return domain.Page[*domain.GroupingSuggestion]{}, err
	}
	for _, st := range statuses {
		if !st.Valid() {
			return domain.Page[*domain.GroupingSuggestion]{}, domain.InputError("status", "unknown status %q", st)
		}
	}
	args := struct {
		S []domain.GroupingSuggestionStatus
		P domain.PageArgs
	}{statuses, page}
	return app.NestedPage(ctx, s.db, "Project.groupingSuggestions", args, projectID,
		func(ctx context.Context, q *store.Q, parents []string) (map[string]domain.Page[*domain.GroupingSuggestion], error) {
			return q.Grouping.SuggestionsByProjects(ctx, parents, statuses, page)
		},
		func(ctx context.Context, q *store.Q, parents []string) (map[string]int, error) {
			return q.Grouping.CountSuggestionsByProjects(ctx, parents, statuses)
		})
}

// TaskAgentsOfProject lists a project's task agents, oldest first.
func (s *Service) TaskAgentsOfProject(ctx context.Context, projectID string) ([]*domain.TaskAgentInstance, error) {
	out, err := s.load(ctx).agentsOf.Load(ctx, projectID)
	if out == nil {
		out = []*domain.TaskAgentInstance{}
	}
	return out, err
}

// NodeOf resolves the grouping domain's kinds for node(id:).
func (s *Service) NodeOf(ctx context.Context, p *auth.Principal, kind domain.Kind, id string) (domain.Node, bool, error) {
	var projectID string
	var node domain.Node
	switch kind {
	case domain.KindGroupingSuggestion:
		sg, err := s.SuggestionByID(ctx, id)
		if err != nil || sg == nil {
			return nil, true, err
		}
		projectID, node = sg.ProjectID, sg
	case domain.KindTaskAgent:
		a, err := s.TaskAgentByID(ctx, &id)
		if err != nil || a == nil {
			return nil, true, err
		}
		projectID, node = a.ProjectID, a
	default:
		return nil, false, nil
	}
	pr, err := s.core.Projects.ProjectByID(ctx, projectID)
	if err != nil || !app.CanSee(p, pr) {
		return nil, true, err
	}
	return node, true, nil
}
