package catalog

import (
	"context"
	"errors"
	"fmt"

	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/files"
	"github.com/taskgraph/taskgraph/internal/store"
)

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
func uploadError(field string, err error, max int64) error {
	var le *files.LineError
	switch {
	case errors.As(err, &le):
		return &domain.Error{Code: domain.CodeBadUserInput, Field: field,
			Message: fmt.Sprintf("line %d: %s", le.Line, le.Err), Details: map[string]any{"line": le.Line}}
	case errors.Is(err, files.ErrTooLarge):
		return tooLarge(field, max)
	case errors.Is(err, files.ErrEmpty):
		return domain.InputError(field, "the file has no lines")
	}
	return err
}

func tooLarge(field string, max int64) error {
	return &domain.Error{Code: domain.CodeLimitExceeded, Field: field,
		Message: fmt.Sprintf("the file is larger than the upload limit of %d bytes", max),
		Details: map[string]any{"max": max}}
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
		return nil, tooLarge(field, s.maxUpload)
	}
	if err := checkNoExamples(ctx, &s.db.Q, ts); err != nil {
		return nil, err
	}
	rel := domain.SessionStoragePath(ts.ID)
	staged, err := s.files.Stage(rel, f.Content, files.Limits{MaxBytes: s.maxUpload, MaxLine: maxLine},
		func(_ int, line []byte) error { return domain.CheckJSONObject(line) })
	if err != nil {
		return nil, uploadError(field, err, s.maxUpload)
	}
	defer staged.Discard()
	now := s.now()
	var out *domain.TraceSession
	err = s.tx(ctx, func(tx *app.Tx) error {
		cur, err := tx.Examples.TraceSessionForUpdate(ctx, ts.ID)
		if err != nil {
			return app.NotFound(err, "trace session")
		}
		if err := checkNoExamples(ctx, tx.Q, cur); err != nil {
			return err
		}
		size, lines := int(staged.Bytes), staged.Lines
		cur.StoragePath, cur.SizeBytes, cur.EventCount, cur.UploadedAt = &rel, &size, &lines, &now
		if err := tx.Examples.SetTraceUpload(ctx, cur); err != nil {
			return err
		}
		// The file takes its place once the row that describes it has
		// committed: a failed commit leaves the old file (if any) in place.
		tx.AfterCommit(func() { s.commitFile(ctx, staged) })
		out = cur
		return nil
	})
	return out, err
}

// checkNoExamples refuses to replace a trace that examples were derived from.
func checkNoExamples(ctx context.Context, q *store.Q, ts *domain.TraceSession) error {
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
// commitFile moves a staged upload into place after its row committed; a
// failure there is the disk's and can only be logged.
func (s *Service) commitFile(ctx context.Context, staged *files.Staged) {
	if err := staged.Commit(); err != nil {
		s.logger(ctx).ErrorContext(ctx, "moving an upload into place after its commit failed", "err", err)
	}
}

func (s *Service) removeFile(ctx context.Context, rel string) {
	if err := s.files.Remove(rel); err != nil {
		s.logger(ctx).ErrorContext(ctx, "removing a stored file failed", "path", rel, "err", err)
	}
}
