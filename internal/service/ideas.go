package service

import (
	"context"
	"errors"

	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/store"
)

// AdvanceIdea moves an idea along its lifecycle: forward by one or more
// stages, or to ARCHIVED from any stage; nothing leaves ARCHIVED
// (INVALID_TRANSITION).
func (s *Projects) AdvanceIdea(ctx context.Context, in domain.AdvanceIdeaInput) (*domain.Idea, error) {
	p, err := app.Caller(ctx)
	if err != nil {
		return nil, err
	}
	if err := checkWriter(p); err != nil {
		return nil, err
	}
	id, err := domain.DecodeID(domain.KindIdea, in.ID, "id")
	if err != nil {
		return nil, err
	}
	if !in.To.Valid() {
		return nil, domain.InputError("to", "unknown stage %q", in.To)
	}
	idea, err := s.load(ctx).ideas.Load(ctx, id)
	if err != nil {
		return nil, err
	}
	if idea == nil {
		return nil, domain.NotFound("Idea")
	}
	if err := s.visibleProjectID(ctx, p, idea.ProjectID); err != nil {
		return nil, domain.NotFound("Idea")
	}
	err = s.tx(ctx, func(tx *app.Tx) error {
		cur, err := tx.Projects.IdeaForUpdate(ctx, id)
		if err != nil {
			return err
		}
		if !domain.CanAdvanceIdea(cur.LifecycleStage, in.To) {
			return &domain.Error{Code: domain.CodeInvalidTransition, Field: "to",
				Message: "an idea cannot move from " + string(cur.LifecycleStage) + " to " + string(in.To),
				Details: map[string]any{"from": string(cur.LifecycleStage), "to": string(in.To)}}
		}
		now := s.now()
		if err := tx.Projects.SetIdeaStage(ctx, id, in.To, now); err != nil {
			return err
		}
		idea = cur
		idea.LifecycleStage, idea.UpdatedAt = in.To, now
		return nil
	})
	if errors.Is(err, store.ErrNotFound) {
		return nil, domain.NotFound("Idea")
	}
	return idea, err
}
