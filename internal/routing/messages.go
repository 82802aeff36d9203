package routing

import (
	"context"

	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/auth"
	"github.com/taskgraph/taskgraph/internal/domain"
)

// AddAgentMessage adds a message with JSON content to a planner or a worker.
func (s *Service) AddAgentMessage(ctx context.Context, in domain.AddAgentMessageInput) (*domain.AgentMessage, error) {
	p, err := writer(ctx)
	if err != nil {
		return nil, err
	}
	kind, id, field, err := oneOwner(in.PlannerID, in.WorkerID, nil)
	if err != nil {
		return nil, err
	}
	if !in.Role.Valid() {
		return nil, domain.InputError("role", "unknown message role %q", in.Role)
	}
	if len(in.Content) == 0 || string(in.Content) == "null" {
		return nil, domain.InputError("content", "content must not be empty")
	}
	if len(in.Content) > domain.MaxMessageContent {
		return nil, domain.InputError("content", "content is larger than %d bytes", domain.MaxMessageContent)
	}
	m := &domain.AgentMessage{ID: app.NewID(), OwnerID: id, OwnerKind: kind, Role: in.Role, Content: in.Content, CreatedAt: s.now()}
	err = s.tx(ctx, func(tx *app.Tx) error {
		projectID, err := ownerProject(ctx, tx, p, kind, id, field)
		if err != nil {
			return err
		}
		m.ProjectID = projectID
		return tx.Routing.InsertAgentMessage(ctx, kind, m)
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// ownerProject locks a planner or worker the caller may see and returns its project.
func ownerProject(ctx context.Context, tx *app.Tx, p *auth.Principal, kind domain.Kind, id, field string) (string, error) {
	switch kind {
	case domain.KindRouter:
		r, err := routerForUpdate(ctx, tx, p, id, field)
		if err != nil {
			return "", err
		}
		return r.ProjectID, nil
	case domain.KindPlanner:
		pl, err := plannerForUpdate(ctx, tx, p, id, field)
		if err != nil {
			return "", err
		}
		return pl.ProjectID, nil
	default:
		w, err := workerForUpdate(ctx, tx, p, id, field)
		if err != nil {
			return "", err
		}
		return w.ProjectID, nil
	}
}

// oneOwner decodes the one of plannerId, workerId (and routerId) given.
func oneOwner(plannerID, workerID, routerID *string) (domain.Kind, string, string, error) {
	var (
		kind  domain.Kind
		gid   *string
		field string
		n     int
	)
	for _, o := range []struct {
		kind  domain.Kind
		gid   *string
		field string
	}{{domain.KindRouter, routerID, "routerId"}, {domain.KindPlanner, plannerID, "plannerId"}, {domain.KindWorker, workerID, "workerId"}} {
		if o.gid != nil {
			kind, gid, field = o.kind, o.gid, o.field
			n++
		}
	}
	if n != 1 {
		names := "plannerId or workerId"
		if routerID != nil || (plannerID == nil && workerID == nil) {
			names = "routerId, plannerId or workerId"
		}
		return "", "", "", domain.InputError("plannerId", "give exactly one of %s", names)
	}
	id, err := domain.DecodeID(kind, *gid, field)
	return kind, id, field, err
}

// ClearAgentMessages deletes every message of a router (not an ARCHIVED
// one: CONFLICT), a planner or a worker and returns how many it deleted.
// Links of planners to a router's cleared messages stay, as links to the
// router.
func (s *Service) ClearAgentMessages(ctx context.Context, in domain.ClearAgentMessagesInput) (int, error) {
	p, err := writer(ctx)
	if err != nil {
		return 0, err
	}
	kind, id, field, err := oneOwner(in.PlannerID, in.WorkerID, in.RouterID)
	if err != nil {
		return 0, err
	}
	n := 0
	err = s.tx(ctx, func(tx *app.Tx) error {
		if kind == domain.KindRouter {
			r, err := routerForUpdate(ctx, tx, p, id, field)
			if err != nil {
				return err
			}
			if err := notArchived(r, "its messages stay"); err != nil {
				return err
			}
			n, err = tx.Routing.DeleteRouterMessages(ctx, id)
			return err
		}
		if _, err := ownerProject(ctx, tx, p, kind, id, field); err != nil {
			return err
		}
		var err error
		n, err = tx.Routing.DeleteAgentMessages(ctx, kind, id)
		return err
	})
	return n, err
}
