package catalog

import (
	"context"
	"errors"

	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/auth"
	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/files"
	"github.com/taskgraph/taskgraph/internal/store"
)

// Training data: models, trace sessions with their uploaded input events, and
// examples with their messages. Files live in the data directory
// (internal/files); rows record where.

// CreateExample creates a PENDING example of a session, built with a model and
// an action tool map of the session's suite; it records the map's version.
func (s *Service) CreateExample(ctx context.Context, in domain.CreateExampleInput) (*domain.Example, error) {
	p, err := catalogWriter(ctx)
	if err != nil {
		return nil, err
	}
	c := s.cat(ctx)
	ts, err := entity(ctx, c.sessions, domain.KindTraceSession, in.SessionID, "sessionId", "trace session")
	if err != nil {
		return nil, err
	}
	model, err := entity(ctx, c.models, domain.KindModel, in.ModelID, "modelId", "model")
	if err != nil {
		return nil, err
	}
	m, err := entity(ctx, c.maps, domain.KindActionToolMap, in.ActionToolMapID, "actionToolMapId", "action tool map")
	if err != nil {
		return nil, err
	}
	if m.SuiteID != ts.SuiteID {
		return nil, domain.InputError("actionToolMapId", "the map binds another suite than the session's; an example is built with a map of its session's suite")
	}
	conf := domain.JSON("{}")
	if len(in.ModelConfiguration) > 0 && string(in.ModelConfiguration) != "null" {
		if in.ModelConfiguration[0] != '{' {
			return nil, domain.InputError("modelConfiguration", "modelConfiguration must be a JSON object")
		}
		conf = in.ModelConfiguration
	}
	now := s.now()
	e := &domain.Example{ID: app.NewID(), SessionID: ts.ID, ModelID: model.ID, ActionToolMapID: m.ID,
		ModelConfiguration: conf, Status: domain.ExamplePending, CreatedByID: &p.UserID, CreatedAt: now, UpdatedAt: now}
	err = s.tx(ctx, func(tx *app.Tx) error {
		// Under the map's lock: the version recorded is the one the mappings are at.
		cur, err := tx.Catalog.ActionToolMapForUpdate(ctx, m.ID)
		if err != nil {
			return app.NotFound(err, "action tool map")
		}
		e.ActionToolMapVersion = cur.Version
		if err := tx.Examples.InsertExample(ctx, e); errors.Is(err, store.ErrForeignKey) {
			return domain.Errorf(domain.CodeNotFound, "the session or model was deleted meanwhile")
		} else if err != nil {
			return err
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return e, nil
}

// Examples pages the examples matching a filter, oldest first.
func (s *Service) Examples(ctx context.Context, f *domain.ExampleFilter, page domain.PageArgs) (domain.Page[*domain.Example], error) {
	if _, err := app.Caller(ctx); err != nil {
		return domain.Page[*domain.Example]{}, err
	}
	eq := store.ExampleQuery{Page: page}
	if f != nil {
		eq.Filter.Status = f.Status
		for _, ref := range []struct {
			gid   *string
			kind  domain.Kind
			field string
			out   **string
		}{{f.SuiteID, domain.KindSuite, "filter.suiteId", &eq.Filter.SuiteID}, {f.ModelID, domain.KindModel, "filter.modelId", &eq.Filter.ModelID},
			{f.ActionToolMapID, domain.KindActionToolMap, "filter.actionToolMapId", &eq.Filter.ActionToolMapID},
			{f.SessionID, domain.KindTraceSession, "filter.sessionId", &eq.Filter.SessionID}} {
			if ref.gid == nil {
				continue
			}
			id, err := domain.DecodeID(ref.kind, *ref.gid, ref.field)
			if e, ok := domain.AsError(err); ok && e.Code == domain.CodeNotFound {
				id = "00000000-0000-0000-0000-000000000000" // an id of another kind matches nothing
			} else if err != nil {
				return domain.Page[*domain.Example]{}, err
			}
			*ref.out = &id
		}
	}
	return s.db.Examples.Examples(ctx, eq)
}

// ClaimExample moves one PENDING example to PROCESSING for the caller: the one
// named by in.ID, or else the oldest matching the filters. Of concurrent
// claimers exactly one gets an example; without an id, nil means nothing is
// waiting. Claiming an example someone else claimed is CONFLICT.
func (s *Service) ClaimExample(ctx context.Context, in domain.ClaimExampleInput) (*domain.Example, error) {
	p, err := catalogWriter(ctx)
	if err != nil {
		return nil, err
	}
	c := s.cat(ctx)
	claim := store.ExampleClaim{By: p.UserID, At: s.now()}
	if in.ID != nil {
		e, err := entity(ctx, c.examples, domain.KindExample, *in.ID, "id", "example")
		if err != nil {
			return nil, err
		}
		claim.ID = e.ID
	}
	for _, ref := range []struct {
		gid   *string
		get   func(gid string) (string, error)
		field string
	}{
		{in.SuiteID, func(g string) (string, error) {
			v, err := entity(ctx, c.suites, domain.KindSuite, g, "suiteId", "suite")
			return idOf(v, err, func(v *domain.Suite) string { return v.ID })
		}, "suiteId"},
		{in.ModelID, func(g string) (string, error) {
			v, err := entity(ctx, c.models, domain.KindModel, g, "modelId", "model")
			return idOf(v, err, func(v *domain.Model) string { return v.ID })
		}, "modelId"},
		{in.ActionToolMapID, func(g string) (string, error) {
			v, err := entity(ctx, c.maps, domain.KindActionToolMap, g, "actionToolMapId", "action tool map")
			return idOf(v, err, func(v *domain.ActionToolMap) string { return v.ID })
		}, "actionToolMapId"},
	} {
		if ref.gid == nil {
			continue
		}
		id, err := ref.get(*ref.gid)
		if err != nil {
			return nil, err
		}
		switch ref.field {
		case "suiteId":
			claim.SuiteID = id
		case "modelId":
			claim.ModelID = id
		default:
			claim.ActionToolMapID = id
		}
	}
	var out *domain.Example
	err = s.tx(ctx, func(tx *app.Tx) error {
		e, err := tx.Examples.ClaimExample(ctx, claim)
		if errors.Is(err, store.ErrNotFound) {
			if claim.ID == "" {
				return nil
			}
			cur, err := tx.Examples.ExampleForUpdate(ctx, claim.ID)
			if err != nil {
				return app.NotFound(err, "example")
			}
			if cur.Status == domain.ExampleProcessing {
				return &domain.Error{Code: domain.CodeConflict, Field: "id",
					Message: "the example is already claimed for processing", Details: map[string]any{"status": string(cur.Status)}}
			}
			if cur.Status != domain.ExamplePending {
				return withField(domain.CheckExampleTransition(cur.Status, domain.ExampleProcessing), "id")
			}
			// Still PENDING: another claimer held its lock (SKIP LOCKED passed it
			// over) and gave up, or it does not match the filters. We hold the
			// lock now, so a second try decides.
			if out, err = tx.Examples.ClaimExample(ctx, claim); errors.Is(err, store.ErrNotFound) {
				return &domain.Error{Code: domain.CodeConflict, Field: "id", Message: "the example does not match the filters"}
			}
			return err
		} else if err != nil {
			return err
		}
		out = e
		return nil
	})
	return out, err
}

func idOf[T any](v *T, err error, id func(*T) string) (string, error) {
	if err != nil {
		return "", err
	}
	return id(v), nil
}

// withField names the input field of a domain error that has none.
func withField(err error, field string) error {
	if e, ok := domain.AsError(err); ok && e.Field == "" {
		c := *e
		c.Field = field
		return &c
	}
	return err
}

// lockExampleFor re-reads an example under its lock and checks that it may
// move to `to`.
func lockExampleFor(ctx context.Context, tx *app.Tx, p *auth.Principal, id string, to domain.ExampleStatus) (*domain.Example, error) {
	e, err := tx.Examples.ExampleForUpdate(ctx, id)
	if err != nil {
		return nil, app.NotFound(err, "example")
	}
	// A claimed example is finished by its claimer (or an admin) only.
	if e.Status == domain.ExampleProcessing && !p.IsAdmin() && (e.ClaimedByID == nil || *e.ClaimedByID != p.UserID) {
		return nil, &domain.Error{Code: domain.CodeLeaseLost, Field: "id", Message: "the example is claimed by another user"}
	}
	if err := domain.CheckExampleTransition(e.Status, to); err != nil {
		return nil, withField(err, "id")
	}
	return e, nil
}

// CompleteExample stores a PROCESSING example's messages.jsonl at
// examples/<id>/messages.jsonl and marks it COMPLETED. Every line must be a
// conversation in the chat completion format (domain.CheckConversation), and
// every tool an assistant message calls must be mapped by the example's
// action tool map; the first bad line is named in the error and nothing of a
// refused file is kept.
func (s *Service) CompleteExample(ctx context.Context, gid string, f domain.File) (*domain.Example, error) {
	const field = "messages"
	p, err := catalogWriter(ctx)
	if err != nil {
		return nil, err
	}
	e, err := entity(ctx, s.cat(ctx).examples, domain.KindExample, gid, "id", "example")
	if err != nil {
		return nil, err
	}
	if err := domain.CheckExampleTransition(e.Status, domain.ExampleCompleted); err != nil {
		return nil, withField(err, "id")
	}
	if f.Size > s.maxUpload {
		return nil, tooLarge(field, s.maxUpload)
	}
	names, err := s.db.Catalog.MappedToolNames(ctx, e.ActionToolMapID)
	if err != nil {
		return nil, err
	}
	mapped := make(map[string]bool, len(names))
	for _, n := range names {
		mapped[n] = true
	}
	isMapped := func(name string) bool { return mapped[name] }
	rel := domain.ExampleStoragePath(e.ID)
	staged, err := s.files.Stage(rel, f.Content, files.Limits{MaxBytes: s.maxUpload, MaxLine: maxLine},
		func(_ int, line []byte) error {
			_, err := domain.CheckConversation(line, isMapped)
			return err
		})
	if err != nil {
		return nil, uploadError(field, err, s.maxUpload)
	}
	defer staged.Discard()
	var out *domain.Example
	err = s.tx(ctx, func(tx *app.Tx) error {
		cur, err := lockExampleFor(ctx, tx, p, e.ID, domain.ExampleCompleted)
		if err != nil {
			return err
		}
		now := s.now()
		size, lines := int(staged.Bytes), staged.Lines
		cur.Status, cur.StoragePath, cur.SizeBytes, cur.ConversationCount = domain.ExampleCompleted, &rel, &size, &lines
		cur.FinishedAt, cur.UpdatedAt = &now, now
		if err := tx.Examples.UpdateExampleState(ctx, cur); err != nil {
			return err
		}
		tx.AfterCommit(func() { s.commitFile(ctx, staged) })
		out = cur
		return nil
	})
	return out, err
}

// FailExample marks a PENDING or PROCESSING example FAILED with a reason.
func (s *Service) FailExample(ctx context.Context, in domain.FailExampleInput) (*domain.Example, error) {
	p, err := catalogWriter(ctx)
	if err != nil {
		return nil, err
	}
	e, err := entity(ctx, s.cat(ctx).examples, domain.KindExample, in.ID, "id", "example")
	if err != nil {
		return nil, err
	}
	reason, err := domain.CheckText("reason", in.Reason, 10_000, true)
	if err != nil {
		return nil, err
	}
	var out *domain.Example
	err = s.tx(ctx, func(tx *app.Tx) error {
		cur, err := lockExampleFor(ctx, tx, p, e.ID, domain.ExampleFailed)
		if err != nil {
			return err
		}
		now := s.now()
		cur.Status, cur.FailureReason, cur.FinishedAt, cur.UpdatedAt = domain.ExampleFailed, &reason, &now, now
		if err := tx.Examples.UpdateExampleState(ctx, cur); err != nil {
			return err
		}
		out = cur
		return nil
	})
	return out, err
}

// DeleteExample deletes an example and its messages file.
func (s *Service) DeleteExample(ctx context.Context, gid string) (string, error) {
	if _, err := catalogWriter(ctx); err != nil {
		return "", err
	}
	e, err := entity(ctx, s.cat(ctx).examples, domain.KindExample, gid, "id", "example")
	if err != nil {
		return "", err
	}
	if err := s.tx(ctx, func(tx *app.Tx) error { return tx.Examples.DeleteExample(ctx, e.ID) }); err != nil {
		return "", err
	}
	if e.StoragePath != nil {
		s.removeFile(ctx, *e.StoragePath)
	}
	return e.GlobalID(), nil
}
