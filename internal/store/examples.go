package store

import (
	"context"
	"time"

	"github.com/taskgraph/taskgraph/internal/domain"
)

// Models, trace sessions and examples: the training data side of the catalog.

// InsertModel inserts a model.
func (q ExampleQueries) InsertModel(ctx context.Context, m *domain.Model) error {
	_, err := q.exec(ctx, `INSERT INTO models (id, provider, name, created_at) VALUES (?, ?, ?, ?)`,
		m.ID, m.Provider, m.Name, m.CreatedAt)
	return err
}

// ModelsByIDs loads models by id.
func (q ExampleQueries) ModelsByIDs(ctx context.Context, ids []string) ([]*domain.Model, error) {
	return byIDs[domain.Model](ctx, q.Q, "models", ids)
}

// Models pages every model by name.
func (q ExampleQueries) Models(ctx context.Context, page domain.PageArgs) (domain.Page[*domain.Model], error) {
	return rootPage(ctx, q.Q, namePage("md", "models", func(m *domain.Model) string { return m.Name },
		func(m *domain.Model) string { return m.ID }, page))
}

// DeleteModel deletes a model.
func (q ExampleQueries) DeleteModel(ctx context.Context, id string) error {
	_, err := q.exec(ctx, `DELETE FROM models WHERE id = ?`, id)
	return err
}

// InsertTraceSession inserts a trace session.
func (q ExampleQueries) InsertTraceSession(ctx context.Context, s *domain.TraceSession) error {
	_, err := q.namedExec(ctx, `INSERT INTO trace_sessions (id, user_id, suite_id, description, storage_path, size_bytes,
		event_count, uploaded_at, created_at) VALUES (:id, :user_id, :suite_id, :description, :storage_path, :size_bytes,
		:event_count, :uploaded_at, :created_at)`, s)
	return err
}

// TraceSessionsByIDs loads sessions by id.
func (q ExampleQueries) TraceSessionsByIDs(ctx context.Context, ids []string) ([]*domain.TraceSession, error) {
	return byIDs[domain.TraceSession](ctx, q.Q, "trace_sessions", ids)
}

// TraceSessionForUpdate loads a session, locking its row in a PostgreSQL transaction.
func (q ExampleQueries) TraceSessionForUpdate(ctx context.Context, id string) (*domain.TraceSession, error) {
	var s domain.TraceSession
	if err := q.get(ctx, &s, `SELECT * FROM trace_sessions WHERE id = ?`+q.forUpdate(), id); err != nil {
		return nil, err
	}
	return &s, nil
}

// SetTraceUpload records a session's uploaded trace.
func (q ExampleQueries) SetTraceUpload(ctx context.Context, s *domain.TraceSession) error {
	_, err := q.exec(ctx, `UPDATE trace_sessions SET storage_path = ?, size_bytes = ?, event_count = ?, uploaded_at = ? WHERE id = ?`,
		s.StoragePath, s.SizeBytes, s.EventCount, s.UploadedAt, s.ID)
	return err
}

func sessionPage(page domain.PageArgs) *pageQuery[*domain.TraceSession] {
	return createdPage("ts", "trace_sessions", func(s *domain.TraceSession) time.Time { return s.CreatedAt },
		func(s *domain.TraceSession) string { return s.ID }, page)
}

// TraceSessionsBySuites pages sessions per suite, oldest first.
func (q ExampleQueries) TraceSessionsBySuites(ctx context.Context, suites []string, page domain.PageArgs) (map[string]domain.Page[*domain.TraceSession], error) {
	return childPages(ctx, q.Q, sessionPage(page), "ts.suite_id", suites, func(s *domain.TraceSession) string { return s.SuiteID })
}

// CountTraceSessionsBySuites counts sessions per suite.
func (q ExampleQueries) CountTraceSessionsBySuites(ctx context.Context, suites []string) (map[string]int, error) {
	return childCounts(ctx, q.Q, sessionPage(domain.PageArgs{}), "ts.suite_id", suites)
}

// DeleteTraceSession deletes a session.
func (q ExampleQueries) DeleteTraceSession(ctx context.Context, id string) error {
	_, err := q.exec(ctx, `DELETE FROM trace_sessions WHERE id = ?`, id)
	return err
}

const exampleColumns = `id, session_id, model_id, action_tool_map_id, action_tool_map_version, model_configuration,
	storage_path, status, failure_reason, conversation_count, size_bytes, created_by, claimed_by, created_at, updated_at,
	claimed_at, finished_at`

// InsertExample inserts an example.
func (q ExampleQueries) InsertExample(ctx context.Context, e *domain.Example) error {
	_, err := q.namedExec(ctx, `INSERT INTO examples (`+exampleColumns+`) VALUES (`+namedList(exampleColumns)+`)`, e)
	return err
}

// ExamplesByIDs loads examples by id.
func (q ExampleQueries) ExamplesByIDs(ctx context.Context, ids []string) ([]*domain.Example, error) {
	return byIDs[domain.Example](ctx, q.Q, "examples", ids)
}

// ExampleForUpdate loads an example, locking its row in a PostgreSQL transaction.
func (q ExampleQueries) ExampleForUpdate(ctx context.Context, id string) (*domain.Example, error) {
	var e domain.Example
	if err := q.get(ctx, &e, `SELECT * FROM examples WHERE id = ?`+q.forUpdate(), id); err != nil {
		return nil, err
	}
	return &e, nil
}

// UpdateExampleState writes an example's status and what comes with it.
func (q ExampleQueries) UpdateExampleState(ctx context.Context, e *domain.Example) error {
	_, err := q.namedExec(ctx, `UPDATE examples SET status = :status, storage_path = :storage_path,
		failure_reason = :failure_reason, conversation_count = :conversation_count, size_bytes = :size_bytes,
		claimed_by = :claimed_by, claimed_at = :claimed_at, finished_at = :finished_at, updated_at = :updated_at
		WHERE id = :id`, e)
	return err
}

// ExampleClaim selects what ClaimExample may take.
type ExampleClaim struct {
	ID              string // this example only (when still PENDING)
	SuiteID         string
	ModelID         string
	ActionToolMapID string
	By              string // the claiming user
	At              time.Time
}

// ClaimExample moves one PENDING example to PROCESSING and returns it, or
// ErrNotFound when none matches. Concurrent claimers never get the same one:
// the UPDATE only matches a row still PENDING, and on PostgreSQL the candidate
// is picked with FOR UPDATE SKIP LOCKED, so claimers take different rows
// instead of queueing on one. SQLite has a single writer.
func (q ExampleQueries) ClaimExample(ctx context.Context, c ExampleClaim) (*domain.Example, error) {
	where, args := []string{"status = ?"}, []any{domain.ExamplePending}
	if c.ID != "" {
		where, args = append(where, "id = ?"), append(args, c.ID)
	}
	if c.SuiteID != "" {
		where, args = append(where, "session_id IN (SELECT id FROM trace_sessions WHERE suite_id = ?)"), append(args, c.SuiteID)
	}
	if c.ModelID != "" {
		where, args = append(where, "model_id = ?"), append(args, c.ModelID)
	}
	if c.ActionToolMapID != "" {
		where, args = append(where, "action_tool_map_id = ?"), append(args, c.ActionToolMapID)
	}
	lock := ""
	if q.db.dialect == Postgres {
		lock = " FOR NO KEY UPDATE SKIP LOCKED"
	}
	cond := ""
	for i, w := range where {
		if i > 0 {
			cond += " AND "
		}
		cond += w
	}
	query := `UPDATE examples SET status = ?, claimed_by = ?, claimed_at = ?, updated_at = ?
		WHERE status = ? AND id = (SELECT id FROM examples WHERE ` + cond + ` ORDER BY created_at, id LIMIT 1` + lock + `)
		RETURNING *`
	var e domain.Example
	if err := q.get(ctx, &e, query, append([]any{domain.ExampleProcessing, c.By, c.At, c.At, domain.ExamplePending}, args...)...); err != nil {
		return nil, err
	}
	return &e, nil
}

// ExampleQuery selects examples for a connection.
type ExampleQuery struct {
	Filter domain.ExampleFilter // ids are database ids here
	Page   domain.PageArgs
}

func examplePage(eq ExampleQuery) *pageQuery[*domain.Example] {
	pq := createdPage("e", "examples", func(e *domain.Example) time.Time { return e.CreatedAt },
		func(e *domain.Example) string { return e.ID }, eq.Page)
	f := eq.Filter
	if len(f.Status) > 0 {
		pq.filter("e.status IN (?)", f.Status)
	}
	if f.SuiteID != nil {
		pq.filter("e.session_id IN (SELECT id FROM trace_sessions WHERE suite_id = ?)", *f.SuiteID)
	}
	if f.ModelID != nil {
		pq.filter("e.model_id = ?", *f.ModelID)
	}
	if f.ActionToolMapID != nil {
		pq.filter("e.action_tool_map_id = ?", *f.ActionToolMapID)
	}
	if f.SessionID != nil {
		pq.filter("e.session_id = ?", *f.SessionID)
	}
	return pq
}

// Examples pages the examples matching a filter, oldest first.
func (q ExampleQueries) Examples(ctx context.Context, eq ExampleQuery) (domain.Page[*domain.Example], error) {
	return rootPage(ctx, q.Q, examplePage(eq))
}

// ExamplesByParents pages examples per session, model or map (col is
// "e.session_id", "e.model_id" or "e.action_tool_map_id").
func (q ExampleQueries) ExamplesByParents(ctx context.Context, col string, parents []string, page domain.PageArgs) (map[string]domain.Page[*domain.Example], error) {
	return childPages(ctx, q.Q, examplePage(ExampleQuery{Page: page}), col, parents, exampleParent(col))
}

// CountExamplesByParents counts examples per session, model or map.
func (q ExampleQueries) CountExamplesByParents(ctx context.Context, col string, parents []string) (map[string]int, error) {
	return childCounts(ctx, q.Q, examplePage(ExampleQuery{}), col, parents)
}

func exampleParent(col string) func(*domain.Example) string {
	switch col {
	case "e.session_id":
		return func(e *domain.Example) string { return e.SessionID }
	case "e.model_id":
		return func(e *domain.Example) string { return e.ModelID }
	case "e.action_tool_map_id":
		return func(e *domain.Example) string { return e.ActionToolMapID }
	}
	panic("store: examples have no parent column " + col)
}

// DeleteExample deletes an example.
func (q ExampleQueries) DeleteExample(ctx context.Context, id string) error {
	_, err := q.exec(ctx, `DELETE FROM examples WHERE id = ?`, id)
	return err
}

// CompletedExamplesAfter lists up to limit COMPLETED examples after the one
// (createdAt, id), oldest first, of a suite and model when given: the export
// reads them in batches instead of all at once.
func (q ExampleQueries) CompletedExamplesAfter(ctx context.Context, suiteID, modelID string, after *domain.Example, limit int) ([]*domain.Example, error) {
	query := `SELECT * FROM examples WHERE status = ?`
	args := []any{domain.ExampleCompleted}
	if suiteID != "" {
		query += ` AND session_id IN (SELECT id FROM trace_sessions WHERE suite_id = ?)`
		args = append(args, suiteID)
	}
	if modelID != "" {
		query += ` AND model_id = ?`
		args = append(args, modelID)
	}
	if after != nil {
		query += ` AND (created_at > ? OR (created_at = ? AND id > ?))`
		args = append(args, after.CreatedAt, after.CreatedAt, after.ID)
	}
	query += ` ORDER BY created_at, id LIMIT ?`
	args = append(args, limit)
	var out []*domain.Example
	err := q.selectx(ctx, &out, query, args...)
	return out, err
}
