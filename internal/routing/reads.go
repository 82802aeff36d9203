package routing

import (
	"context"

	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/auth"
	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/loader"
	"github.com/taskgraph/taskgraph/internal/store"
)

// loaders are the request's batched reads of routing entities (cleared with
// the request's loaders after every write).
type loaders struct {
	routers        *loader.Loader[string, *domain.Router]
	routerMessages *loader.Loader[string, *domain.RouterMessage]
	planners       *loader.Loader[string, *domain.Planner]
	workers        *loader.Loader[string, *domain.Worker]
	agentMessages  *loader.Loader[string, *domain.AgentMessage]
	workersOf      *loader.Loader[string, []*domain.Worker]
	linksOfRouter  *loader.Loader[string, []*domain.RouterPlannerLink]
	linksOfPlanner *loader.Loader[string, []*domain.RouterPlannerLink]
	linksOfMessage *loader.Loader[string, []*domain.RouterPlannerLink]
	all            []app.Clearer
}

type loadersKey struct{}

func (s *Service) load(ctx context.Context) *loaders {
	return app.Set(ctx, loadersKey{}, func(w loader.Timing) *loaders {
		q := &s.db.Q
		l := &loaders{}
		l.routers = loader.New(w, app.ByID(q.Routing.RoutersByIDs, func(v *domain.Router) string { return v.ID }))
		l.routerMessages = loader.New(w, app.ByID(q.Routing.RouterMessagesByIDs, func(v *domain.RouterMessage) string { return v.ID }))
		l.planners = loader.New(w, app.ByID(q.Routing.PlannersByIDs, func(v *domain.Planner) string { return v.ID }))
		l.workers = loader.New(w, app.ByID(q.Routing.WorkersByIDs, func(v *domain.Worker) string { return v.ID }))
		l.agentMessages = loader.New(w, app.ByID(q.Routing.AgentMessagesByIDs, func(v *domain.AgentMessage) string { return v.ID }))
		l.workersOf = loader.New(w, app.GroupedBy(q.Routing.WorkersOfPlanners, func(v *domain.Worker) string { return v.PlannerID }))
		links := func(column string, key func(*domain.RouterPlannerLink) []string) *loader.Loader[string, []*domain.RouterPlannerLink] {
			return loader.New(w, app.Grouped(func(ctx context.Context, ids []string) ([]*domain.RouterPlannerLink, error) {
				return q.Routing.LinksOf(ctx, column, ids)
			}, key))
		}
		l.linksOfRouter = links("router_id", func(v *domain.RouterPlannerLink) []string { return []string{v.RouterID} })
		l.linksOfPlanner = links("planner_id", func(v *domain.RouterPlannerLink) []string { return []string{v.PlannerID} })
		l.linksOfMessage = links("message_id", func(v *domain.RouterPlannerLink) []string {
			if v.MessageID == nil {
				return nil
			}
			return []string{*v.MessageID}
		})
		l.all = []app.Clearer{l.routers, l.routerMessages, l.planners, l.workers, l.agentMessages, l.workersOf,
			l.linksOfRouter, l.linksOfPlanner, l.linksOfMessage}
		return l
	})
}

// Clear forgets every cached read.
func (l *loaders) Clear() {
	for _, c := range l.all {
		c.Clear()
	}
}

// seen returns v when the caller may see projectID, else nil.
func seen[T any](ctx context.Context, s *Service, p *auth.Principal, v *T, projectID func(*T) string) (*T, error) {
	if v == nil {
		return nil, nil
	}
	ok, err := app.CanSeeProjectID(ctx, &s.db.Q, p, projectID(v))
	if err != nil || !ok {
		return nil, err
	}
	return v, nil
}

// entry decodes a global id of kind and loads it for the caller: nil when it
// does not exist or is not visible.
func entry[T any](ctx context.Context, s *Service, kind domain.Kind, gid string,
	get func(l *loaders) *loader.Loader[string, *T], projectID func(*T) string) (*T, error) {
	p, err := app.Caller(ctx)
	if err != nil {
		return nil, err
	}
	id, err := domain.DecodeID(kind, gid, "id")
	if err != nil {
		if domain.ErrorCode(err) == domain.CodeNotFound {
			return nil, nil
		}
		return nil, err
	}
	v, err := get(s.load(ctx)).Get(ctx, id) // an entry point: nothing to batch with
	if err != nil {
		return nil, err
	}
	return seen(ctx, s, p, v, projectID)
}

func routerProject(r *domain.Router) string   { return r.ProjectID }
func plannerProject(p *domain.Planner) string { return p.ProjectID }
func workerProject(w *domain.Worker) string   { return w.ProjectID }

// Router is the router of a global id, nil when not visible.
func (s *Service) Router(ctx context.Context, gid string) (*domain.Router, error) {
	return entry(ctx, s, domain.KindRouter, gid, func(l *loaders) *loader.Loader[string, *domain.Router] { return l.routers }, routerProject)
}

// Planner is the planner of a global id, nil when not visible.
func (s *Service) Planner(ctx context.Context, gid string) (*domain.Planner, error) {
	return entry(ctx, s, domain.KindPlanner, gid, func(l *loaders) *loader.Loader[string, *domain.Planner] { return l.planners }, plannerProject)
}

// Worker is the worker of a global id, nil when not visible.
func (s *Service) Worker(ctx context.Context, gid string) (*domain.Worker, error) {
	return entry(ctx, s, domain.KindWorker, gid, func(l *loaders) *loader.Loader[string, *domain.Worker] { return l.workers }, workerProject)
}

// Routers pages a visible project's routers, newest first.
func (s *Service) Routers(ctx context.Context, projectGID string, statuses []domain.RouterStatus, page domain.PageArgs) (domain.Page[*domain.Router], error) {
	var none domain.Page[*domain.Router]
	p, err := app.Caller(ctx)
	if err != nil {
		return none, err
	}
	projectID, err := domain.DecodeID(domain.KindProject, projectGID, "projectId")
	if err != nil {
		return none, err
	}
	for _, st := range statuses {
		if !st.Valid() {
			return none, domain.InputError("status", "unknown router status %q", st)
		}
	}
	if err := visibleField(ctx, &s.db.Q, p, projectID, "project", "projectId"); err != nil {
		return none, err
	}
	return s.db.Routing.Routers(ctx, projectID, statuses, page)
}

// The nested fields below are reached from an entity the caller already saw,
// and read what belongs to it, in its project.

// RouterByID loads a router for nested fields.
func (s *Service) RouterByID(ctx context.Context, id string) (*domain.Router, error) {
	return s.load(ctx).routers.Load(ctx, id)
}

// PlannerByID loads a planner for nested fields.
func (s *Service) PlannerByID(ctx context.Context, id string) (*domain.Planner, error) {
	return s.load(ctx).planners.Load(ctx, id)
}

// WorkerByID loads a worker for nested fields.
func (s *Service) WorkerByID(ctx context.Context, id string) (*domain.Worker, error) {
	return s.load(ctx).workers.Load(ctx, id)
}

// RouterMessageByID loads a router message for nested fields (nil: none).
func (s *Service) RouterMessageByID(ctx context.Context, id *string) (*domain.RouterMessage, error) {
	if id == nil {
		return nil, nil
	}
	return s.load(ctx).routerMessages.Load(ctx, *id)
}

// RouterMessages pages a router's messages, oldest first.
func (s *Service) RouterMessages(ctx context.Context, r *domain.Router, page domain.PageArgs) (domain.Page[*domain.RouterMessage], error) {
	return app.NestedPage(ctx, s.db, "Router.messages", page, r.ID,
		func(ctx context.Context, q *store.Q, routers []string) (map[string]domain.Page[*domain.RouterMessage], error) {
			return q.Routing.MessagesOfRouters(ctx, routers, page)
		},
		func(ctx context.Context, q *store.Q, routers []string) (map[string]int, error) {
			return q.Routing.CountMessagesOfRouters(ctx, routers)
		})
}

// AgentMessages pages a planner's or worker's (kind) messages, oldest first.
func (s *Service) AgentMessages(ctx context.Context, kind domain.Kind, ownerID string, page domain.PageArgs) (domain.Page[*domain.AgentMessage], error) {
	field := string(kind) + ".messages"
	return app.NestedPage(ctx, s.db, field, page, ownerID,
		func(ctx context.Context, q *store.Q, owners []string) (map[string]domain.Page[*domain.AgentMessage], error) {
			return q.Routing.AgentMessagesOf(ctx, kind, owners, page)
		},
		func(ctx context.Context, q *store.Q, owners []string) (map[string]int, error) {
			return q.Routing.CountAgentMessagesOf(ctx, kind, owners)
		})
}

// RouterLinks lists a router's links to planners, oldest first.
func (s *Service) RouterLinks(ctx context.Context, routerID string) ([]*domain.RouterPlannerLink, error) {
	return nonNil(s.load(ctx).linksOfRouter.Load(ctx, routerID))
}

// PlannerLinks lists a planner's links to routers, oldest first.
func (s *Service) PlannerLinks(ctx context.Context, plannerID string) ([]*domain.RouterPlannerLink, error) {
	return nonNil(s.load(ctx).linksOfPlanner.Load(ctx, plannerID))
}

// MessagePlanners lists the planners linked to a router message (the
// design's planner-by-message), in the order they were linked.
func (s *Service) MessagePlanners(ctx context.Context, messageID string) ([]*domain.Planner, error) {
	links, err := s.load(ctx).linksOfMessage.Load(ctx, messageID)
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(links))
	seen := map[string]bool{}
	for _, l := range links {
		if !seen[l.PlannerID] {
			seen[l.PlannerID] = true
			ids = append(ids, l.PlannerID)
		}
	}
	got, err := s.load(ctx).planners.LoadMany(ctx, ids) // one batch for all of them
	if err != nil {
		return nil, err
	}
	out := make([]*domain.Planner, 0, len(got))
	for _, pl := range got {
		if pl != nil {
			out = append(out, pl)
		}
	}
	return out, nil
}

// PlannerWorkers lists a planner's workers, oldest first.
func (s *Service) PlannerWorkers(ctx context.Context, plannerID string) ([]*domain.Worker, error) {
	return nonNil(s.load(ctx).workersOf.Load(ctx, plannerID))
}

func nonNil[T any](v []T, err error) ([]T, error) {
	if v == nil && err == nil {
		v = []T{}
	}
	return v, err
}

// visibleNode is a loaded entity as a Node when the caller may see its project.
func visibleNode[T any, P interface {
	*T
	domain.Node
}](ctx context.Context, s *Service, p *auth.Principal, v P, err error, projectID func(P) string) (domain.Node, error) {
	if err != nil || v == nil {
		return nil, err
	}
	ok, err := app.CanSeeProjectID(ctx, &s.db.Q, p, projectID(v))
	if err != nil || !ok {
		return nil, err
	}
	return v, nil
}

// NodeOf loads a routing entity by kind for node(id:) (an app.NodeSource);
// nil when the caller may not see its project.
func (s *Service) NodeOf(ctx context.Context, p *auth.Principal, kind domain.Kind, id string) (node domain.Node, ok bool, err error) {
	l := s.load(ctx)
	switch kind {
	case domain.KindRouter:
		v, err := l.routers.Load(ctx, id)
		node, err = visibleNode(ctx, s, p, v, err, routerProject)
		return node, true, err
	case domain.KindRouterMessage:
		v, err := l.routerMessages.Load(ctx, id)
		node, err = visibleNode(ctx, s, p, v, err, func(m *domain.RouterMessage) string { return m.ProjectID })
		return node, true, err
	case domain.KindPlanner:
		v, err := l.planners.Load(ctx, id)
		node, err = visibleNode(ctx, s, p, v, err, plannerProject)
		return node, true, err
	case domain.KindWorker:
		v, err := l.workers.Load(ctx, id)
		node, err = visibleNode(ctx, s, p, v, err, workerProject)
		return node, true, err
	case domain.KindAgentMessage:
		v, err := l.agentMessages.Load(ctx, id)
		node, err = visibleNode(ctx, s, p, v, err, func(m *domain.AgentMessage) string { return m.ProjectID })
		return node, true, err
	}
	return nil, false, nil
}
