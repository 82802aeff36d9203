package routing

import (
	"context"
	"errors"
	"time"

	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/auth"
	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/store"
)

// CreateRouter creates an ACTIVE router in a project the caller may change.
func (s *Service) CreateRouter(ctx context.Context, in domain.CreateRouterInput) (*domain.Router, error) {
	p, err := writer(ctx)
	if err != nil {
		return nil, err
	}
	projectID, err := domain.DecodeID(domain.KindProject, in.ProjectID, "projectId")
	if err != nil {
		return nil, err
	}
	model, err := domain.CheckText("model", in.Model, domain.MaxModelName, true)
	if err != nil {
		return nil, err
	}
	if err := domain.CheckTemperature("temperature", in.Temperature); err != nil {
		return nil, err
	}
	title, err := domain.CheckOptText("title", in.Title, domain.MaxTitle)
	if err != nil {
		return nil, err
	}
	preview, err := domain.CheckOptText("preview", in.Preview, domain.MaxTitle)
	if err != nil {
		return nil, err
	}
	if err := domain.CheckJSONSize("agentMetadata", in.AgentMetadata); err != nil {
		return nil, err
	}
	now := s.now()
	r := &domain.Router{ID: app.NewID(), ProjectID: projectID, Status: domain.RouterActive, Model: model,
		Temperature: deref(in.Temperature), Title: title, Preview: preview,
		AgentMetadata: defaultJSON(in.AgentMetadata, "{}"), SchemaVersion: 2, CreatedAt: now, UpdatedAt: now}
	if in.Temperature == nil {
		r.Temperature = 0.7
	}
	err = s.tx(ctx, func(tx *app.Tx) error {
		if err := visibleField(ctx, tx.Q, p, projectID, "project", "projectId"); err != nil {
			return err
		}
		return tx.Routing.InsertRouter(ctx, r)
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// visibleField is visible with the input field that named the entity.
func visibleField(ctx context.Context, q *store.Q, p *auth.Principal, projectID, what, field string) error {
	err := visible(ctx, q, p, projectID, what)
	if e, ok := domain.AsError(err); ok && e.Code == domain.CodeNotFound {
		return &domain.Error{Code: domain.CodeNotFound, Field: field, Message: what + " not found"}
	}
	return err
}

// notArchived refuses a write to an ARCHIVED router (final): CONFLICT,
// field routerId, what saying what it refuses.
func notArchived(r *domain.Router, what string) error {
	if r.Status != domain.RouterArchived {
		return nil
	}
	return &domain.Error{Code: domain.CodeConflict, Field: "routerId", Message: "the router is ARCHIVED: " + what,
		Details: map[string]any{"status": string(r.Status)}}
}

// routerForUpdate loads and locks a router the caller may see.
func routerForUpdate(ctx context.Context, tx *app.Tx, p *auth.Principal, id, field string) (*domain.Router, error) {
	r, err := tx.Routing.RouterForUpdate(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, &domain.Error{Code: domain.CodeNotFound, Field: field, Message: "router not found"}
	} else if err != nil {
		return nil, err
	}
	return r, visibleField(ctx, tx.Q, p, r.ProjectID, "router", field)
}

func plannerForUpdate(ctx context.Context, tx *app.Tx, p *auth.Principal, id, field string) (*domain.Planner, error) {
	pl, err := tx.Routing.PlannerForUpdate(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, &domain.Error{Code: domain.CodeNotFound, Field: field, Message: "planner not found"}
	} else if err != nil {
		return nil, err
	}
	return pl, visibleField(ctx, tx.Q, p, pl.ProjectID, "planner", field)
}

func workerForUpdate(ctx context.Context, tx *app.Tx, p *auth.Principal, id, field string) (*domain.Worker, error) {
	w, err := tx.Routing.WorkerForUpdate(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, &domain.Error{Code: domain.CodeNotFound, Field: field, Message: "worker not found"}
	} else if err != nil {
		return nil, err
	}
	return w, visibleField(ctx, tx.Q, p, w.ProjectID, "worker", field)
}

// SetRouterStatus moves a router along its lifecycle.
func (s *Service) SetRouterStatus(ctx context.Context, in domain.SetRouterStatusInput) (*domain.Router, error) {
	p, err := writer(ctx)
	if err != nil {
		return nil, err
	}
	id, err := domain.DecodeID(domain.KindRouter, in.ID, "id")
	if err != nil {
		return nil, err
	}
	if !in.Status.Valid() {
		return nil, domain.InputError("status", "unknown router status %q", in.Status)
	}
	var r *domain.Router
	err = s.tx(ctx, func(tx *app.Tx) error {
		r, err = routerForUpdate(ctx, tx, p, id, "id")
		if err != nil {
			return err
		}
		if err := domain.CheckRouterTransition(r.Status, in.Status); err != nil {
			return err
		}
		r.Status, r.UpdatedAt = in.Status, s.now()
		return tx.Routing.UpdateRouter(ctx, r)
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// AddRouterMessage adds a message to a router that is not ARCHIVED (CONFLICT);
// the router's updatedAt and preview follow it.
func (s *Service) AddRouterMessage(ctx context.Context, in domain.AddRouterMessageInput) (*domain.RouterMessage, error) {
	p, err := writer(ctx)
	if err != nil {
		return nil, err
	}
	id, err := domain.DecodeID(domain.KindRouter, in.RouterID, "routerId")
	if err != nil {
		return nil, err
	}
	if !in.Role.Valid() {
		return nil, domain.InputError("role", "unknown router message role %q", in.Role)
	}
	if in.Content == "" {
		return nil, domain.InputError("content", "content must not be empty")
	}
	if len(in.Content) > domain.MaxMessageContent {
		return nil, domain.InputError("content", "content is longer than %d bytes", domain.MaxMessageContent)
	}
	var m *domain.RouterMessage
	err = s.tx(ctx, func(tx *app.Tx) error {
		r, err := routerForUpdate(ctx, tx, p, id, "routerId")
		if err != nil {
			return err
		}
		if err := notArchived(r, "it takes no more messages"); err != nil {
			return err
		}
		now := s.now()
		if !now.After(r.UpdatedAt) {
			now = r.UpdatedAt.Add(time.Microsecond) // messages keep their order
		}
		m = &domain.RouterMessage{ID: app.NewID(), RouterID: r.ID, ProjectID: r.ProjectID, Role: in.Role,
			Content: in.Content, CreatedAt: now}
		if err := tx.Routing.InsertRouterMessage(ctx, m); err != nil {
			return err
		}
		preview := domain.PreviewOf(in.Content)
		r.Preview, r.UpdatedAt = &preview, now
		if err := tx.Routing.UpdateRouter(ctx, r); err != nil {
			return err
		}
		tx.Record(domain.NewRouterMessageAdded(m))
		return nil
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}
