package catalog

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/files"
	"github.com/taskgraph/taskgraph/internal/store"
)

// Training data: models, trace sessions with their uploaded input events, and
// examples with their messages. Files live in the data directory
// (internal/files); rows record where.

// DefaultMaxUploadBytes bounds one uploaded file unless configured otherwise.
const DefaultMaxUploadBytes int64 = 100 << 20

// maxLine bounds one line of an uploaded JSONL file: memory holds one line at a time.
const maxLine = 8 << 20

// CreateModel creates a model; (provider, name) is unique.
func (s *Service) CreateModel(ctx context.Context, in domain.CreateModelInput) (*domain.Model, error) {
	if _, err := catalogWriter(ctx); err != nil {
		return nil, err
	}
	if !in.Provider.Valid() {
		return nil, domain.InputError("provider", "unknown provider %q", in.Provider)
	}
	name, err := checkName("name", in.Name)
	if err != nil {
		return nil, err
	}
	m := &domain.Model{ID: app.NewID(), Provider: in.Provider, Name: name, CreatedAt: s.now()}
	err = s.tx(ctx, func(tx *app.Tx) error { return tx.Examples.InsertModel(ctx, m) })
	if errors.Is(err, store.ErrUnique) {
		return nil, conflict("name", "a %s model named %q exists", in.Provider, name)
	}
	return m, err
}

// Models pages every model by name.
func (s *Service) Models(ctx context.Context, page domain.PageArgs) (domain.Page[*domain.Model], error) {
	if _, err := app.Caller(ctx); err != nil {
		return domain.Page[*domain.Model]{}, err
	}
	return s.db.Examples.Models(ctx, page)
}

// DeleteModel deletes a model; CONFLICT while examples use it.
func (s *Service) DeleteModel(ctx context.Context, gid string) (string, error) {
	if _, err := catalogWriter(ctx); err != nil {
		return "", err
	}
	m, err := entity(ctx, s.cat(ctx).models, domain.KindModel, gid, "id", "model")
	if err != nil {
		return "", err
	}
	return m.GlobalID(), s.deleteUnused(ctx, "model", m.Name, m.ID, modelRefs, func(tx *app.Tx) error { return tx.Examples.DeleteModel(ctx, m.ID) })
}

// CreateTraceSession creates a session of the caller in a suite; its trace is
// uploaded with UploadTraceEvents.
func (s *Service) CreateTraceSession(ctx context.Context, in domain.CreateTraceSessionInput) (*domain.TraceSession, error) {
	p, err := catalogWriter(ctx)
	if err != nil {
		return nil, err
	}
	suite, err := entity(ctx, s.cat(ctx).suites, domain.KindSuite, in.SuiteID, "suiteId", "suite")
	if err != nil {
		return nil, err
	}
	desc, err := domain.CheckText("description", deref(in.Description), domain.MaxDescription, false)
	if err != nil {
		return nil, err
	}
	ts := &domain.TraceSession{ID: app.NewID(), UserID: p.UserID, SuiteID: suite.ID, Description: desc, CreatedAt: s.now()}
	if err := s.tx(ctx, func(tx *app.Tx) error { return tx.Examples.InsertTraceSession(ctx, ts) }); err != nil {
		return nil, err
	}
	return ts, nil
}

// uploadError turns what went wrong with an uploaded file into the API's error
// on the input field that carried it.
func (s *Service) uploadError(field string, err error) error {
	var le *files.LineError
	switch {
	case errors.As(err, &le):
		return &domain.Error{Code: domain.CodeBadUserInput, Field: field,
			Message: fmt.Sprintf("line %d: %s", le.Line, le.Err), Details: map[string]any{"line": le.Line}}
	case errors.Is(err, files.ErrTooLarge):
		return s.tooLarge(field)
	case errors.Is(err, files.ErrEmpty):
		return domain.InputError(field, "the file has no lines")
	}
	return err
}

func (s *Service) tooLarge(field string) error {
	return &domain.Error{Code: domain.CodeLimitExceeded, Field: field,
		Message: fmt.Sprintf("the file is larger than the upload limit of %d bytes", s.maxUpload),
		Details: map[string]any{"max": s.maxUpload}}
}

// UploadTraceEvents stores a session's input_events.jsonl at
// sessions/<id>/input_events.jsonl in the data directory, streaming it (one
// line in memory at a time) into a temporary file beside it while checking
// that every line is a JSON object, and renaming it into place when all passed.
// The first bad line's number is in the error, and nothing of a refused upload
// is kept. A new upload replaces the trace while no example is derived from it.
func (s *Service) UploadTraceEvents(ctx context.Context, sessionGID string, f domain.File) (*domain.TraceSession, error) {
	const field = "inputEvents"
	if _, err := catalogWriter(ctx); err != nil {
		return nil, err
	}
	ts, err := entity(ctx, s.cat(ctx).sessions, domain.KindTraceSession, sessionGID, "sessionId", "trace session")
	if err != nil {
		return nil, err
	}
	if f.Size > s.maxUpload {
		return nil, s.tooLarge(field)
	}
	if err := s.checkNoExamples(ctx, &s.db.Q, ts); err != nil {
		return nil, err
	}
	rel := domain.SessionStoragePath(ts.ID)
	staged, err := s.files.Stage(rel, f.Content, files.Limits{MaxBytes: s.maxUpload, MaxLine: maxLine},
		func(_ int, line []byte) error { return domain.CheckJSONObject(line) })
	if err != nil {
		return nil, s.uploadError(field, err)
	}
	defer staged.Discard()
	now := s.now()
	var out *domain.TraceSession
	err = s.tx(ctx, func(tx *app.Tx) error {
		cur, err := tx.Examples.TraceSessionForUpdate(ctx, ts.ID)
		if err != nil {
			return app.NotFound(err, "trace session")
		}
		if err := s.checkNoExamples(ctx, tx.Q, cur); err != nil {
			return err
		}
		size, lines := int(staged.Bytes), staged.Lines
		cur.StoragePath, cur.SizeBytes, cur.EventCount, cur.UploadedAt = &rel, &size, &lines, &now
		if err := tx.Examples.SetTraceUpload(ctx, cur); err != nil {
			return err
		}
		// Last, so that a failure before it leaves the old file (if any) in place.
		if err := staged.Commit(); err != nil {
			return err
		}
		out = cur
		return nil
	})
	return out, err
}

// checkNoExamples refuses to replace a trace that examples were derived from.
func (s *Service) checkNoExamples(ctx context.Context, q *store.Q, ts *domain.TraceSession) error {
	if ts.StoragePath == nil {
		return nil
	}
	refs, err := q.Catalog.CountReferences(ctx, ts.ID, sessionRefs...)
	if err != nil {
		return err
	}
	if n := refs[0].N; n > 0 {
		return &domain.Error{Code: domain.CodeConflict, Field: "sessionId",
			Message: fmt.Sprintf("the session's trace is already uploaded and %d example%s derived from it; create a new session instead", n, plural(n)),
			Details: map[string]any{"references": map[string]any{"examples": n}}}
	}
	return nil
}

// DeleteTraceSession deletes a session and its uploaded trace; CONFLICT while
// examples are derived from it.
func (s *Service) DeleteTraceSession(ctx context.Context, gid string) (string, error) {
	if _, err := catalogWriter(ctx); err != nil {
		return "", err
	}
	ts, err := entity(ctx, s.cat(ctx).sessions, domain.KindTraceSession, gid, "id", "trace session")
	if err != nil {
		return "", err
	}
	if err := s.deleteUnused(ctx, "trace session", "", ts.ID, sessionRefs, func(tx *app.Tx) error {
		return tx.Examples.DeleteTraceSession(ctx, ts.ID)
	}); err != nil {
		return "", err
	}
	s.removeFile(ctx, domain.SessionStoragePath(ts.ID))
	return ts.GlobalID(), nil
}

// removeFile deletes a stored file after its row is gone; a failure leaves an
// orphan file, which is logged, not an error of the request.
func (s *Service) removeFile(ctx context.Context, rel string) {
	if err := s.files.Remove(rel); err != nil {
		s.logger(ctx).ErrorContext(ctx, "removing a stored file failed", "path", rel, "err", err)
	}
}

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
func lockExampleFor(ctx context.Context, tx *app.Tx, id string, to domain.ExampleStatus) (*domain.Example, error) {
	e, err := tx.Examples.ExampleForUpdate(ctx, id)
	if err != nil {
		return nil, app.NotFound(err, "example")
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
	if _, err := catalogWriter(ctx); err != nil {
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
		return nil, s.tooLarge(field)
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
		return nil, s.uploadError(field, err)
	}
	defer staged.Discard()
	var out *domain.Example
	err = s.tx(ctx, func(tx *app.Tx) error {
		cur, err := lockExampleFor(ctx, tx, e.ID, domain.ExampleCompleted)
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
		if err := staged.Commit(); err != nil {
			return err
		}
		out = cur
		return nil
	})
	return out, err
}

// FailExample marks a PENDING or PROCESSING example FAILED with a reason.
func (s *Service) FailExample(ctx context.Context, in domain.FailExampleInput) (*domain.Example, error) {
	if _, err := catalogWriter(ctx); err != nil {
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
		cur, err := lockExampleFor(ctx, tx, e.ID, domain.ExampleFailed)
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

// ExamplesExport is a validated export of completed examples, ready to stream.
type ExamplesExport struct {
	s                *Service
	suiteID, modelID string
}

// ExportExamples prepares the export of every COMPLETED example's
// conversations, of one suite and one model when given ("" for any). Ids are
// global ids: malformed is BAD_USER_INPUT; unknown is NOT_FOUND.
func (s *Service) ExportExamples(ctx context.Context, suiteGID, modelGID string) (*ExamplesExport, error) {
	if _, err := app.Caller(ctx); err != nil {
		return nil, err
	}
	x := &ExamplesExport{s: s}
	c := s.cat(ctx)
	if suiteGID != "" {
		v, err := entity(ctx, c.suites, domain.KindSuite, suiteGID, "suite", "suite")
		if err != nil {
			return nil, err
		}
		x.suiteID = v.ID
	}
	if modelGID != "" {
		v, err := entity(ctx, c.models, domain.KindModel, modelGID, "model", "model")
		if err != nil {
			return nil, err
		}
		x.modelID = v.ID
	}
	return x, nil
}

// exportBatch is how many examples the export reads from the database at a time.
const exportBatch = 200

// WriteTo streams the conversations, one JSON object per line, oldest example
// first. The stored files are already clean JSONL, so they are copied as they are.
func (x *ExamplesExport) WriteTo(ctx context.Context, w io.Writer) (int64, error) {
	var (
		total int64
		last  *domain.Example
	)
	for {
		batch, err := x.s.db.Examples.CompletedExamplesAfter(ctx, x.suiteID, x.modelID, last, exportBatch)
		if err != nil {
			return total, err
		}
		for _, e := range batch {
			n, err := x.copyExample(e, w)
			total += n
			if err != nil {
				return total, err
			}
		}
		if len(batch) < exportBatch {
			return total, nil
		}
		last = batch[len(batch)-1]
	}
}

func (x *ExamplesExport) copyExample(e *domain.Example, w io.Writer) (int64, error) {
	f, err := x.s.files.Open(*e.StoragePath)
	if err != nil {
		return 0, fmt.Errorf("export example %s: %w", e.ID, err)
	}
	defer f.Close()
	return io.Copy(w, f)
}
