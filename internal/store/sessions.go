package store

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/taskgraph/taskgraph/internal/domain"
)

// Agent sessions: sessions and their state snapshots, todo lists, ReAct steps,
// and lessons with their full-text index (SQLite FTS5 table lessons_fts,
// PostgreSQL GIN index over the stored tsvector search_vector).

// InsertSession inserts a session.
func (q SessionQueries) InsertSession(ctx context.Context, s *domain.AgentSession) error {
	_, err := q.namedExec(ctx, `INSERT INTO agent_sessions (id, project_id, user_id, mission, status, profile, task_id,
		agent_id, run_id, state, state_version, last_step_id, created_at, updated_at)
		VALUES (:id, :project_id, :user_id, :mission, :status, :profile, :task_id, :agent_id, :run_id, :state,
		:state_version, :last_step_id, :created_at, :updated_at)`, s)
	return err
}

// SessionsByIDs loads sessions by id.
func (q SessionQueries) SessionsByIDs(ctx context.Context, ids []string) ([]*domain.AgentSession, error) {
	return byIDs[domain.AgentSession](ctx, q.Q, "agent_sessions", ids)
}

// SessionsByAgents loads the sessions of build agents, oldest first.
func (q SessionQueries) SessionsByAgents(ctx context.Context, agentIDs []string) ([]*domain.AgentSession, error) {
	return byColumn[domain.AgentSession](ctx, q.Q, "agent_sessions", "agent_id", agentIDs, "created_at, id")
}

// SessionForUpdate reads a session inside a transaction, locking its row
// until the transaction ends (SQLite's immediate transaction already holds
// the one write lock).
func (q SessionQueries) SessionForUpdate(ctx context.Context, id string) (*domain.AgentSession, error) {
	var s domain.AgentSession
	if err := q.get(ctx, &s, `SELECT * FROM agent_sessions WHERE id = ?`+q.forUpdate(), id); err != nil {
		return nil, err
	}
	return &s, nil
}

// SetSessionStatus writes a session's status.
func (q SessionQueries) SetSessionStatus(ctx context.Context, id string, status domain.AgentSessionStatus, at time.Time) error {
	_, err := q.exec(ctx, `UPDATE agent_sessions SET status = ?, updated_at = ? WHERE id = ?`, status, at, id)
	return err
}

// ErrVersionMoved: a compare-and-swap found another version than expected.
var ErrVersionMoved = errors.New("store: version moved")

// SwapState stores state as version expected+1 of a session whose current
// version is expected (compare-and-swap), and records the snapshot. It
// returns ErrVersionMoved, having written nothing, when the version moved.
func (q SessionQueries) SwapState(ctx context.Context, snap *domain.AgentSessionState, expected int) error {
	res, err := q.exec(ctx, `UPDATE agent_sessions SET state = ?, state_version = ?, updated_at = ?
		WHERE id = ? AND state_version = ?`, snap.State, expected+1, snap.CreatedAt, snap.SessionID, expected)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n != 1 {
		return ErrVersionMoved
	}
	return q.InsertState(ctx, snap)
}

// InsertState records a state snapshot.
func (q SessionQueries) InsertState(ctx context.Context, snap *domain.AgentSessionState) error {
	_, err := q.namedExec(ctx, `INSERT INTO agent_session_states (id, session_id, version, state, created_at)
		VALUES (:id, :session_id, :version, :state, :created_at)`, snap)
	return err
}

// PruneStates deletes a session's snapshots but the newest keepLast and
// returns how many it deleted.
func (q SessionQueries) PruneStates(ctx context.Context, sessionID string, keepLast int) (int, error) {
	res, err := q.exec(ctx, `DELETE FROM agent_session_states WHERE session_id = ? AND version <=
		(SELECT state_version FROM agent_sessions WHERE id = ?) - ?`, sessionID, sessionID, keepLast)
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	return int(n), err
}

func statePage(page domain.PageArgs) *pageQuery[*domain.AgentSessionState] {
	return &pageQuery[*domain.AgentSessionState]{
		selectCols: "st.*", from: "agent_session_states st", idCol: "st.id",
		key:   sortKey{col: "st.version", kind: keyInt, desc: true},
		keyOf: func(s *domain.AgentSessionState) any { return int64(s.Version) },
		idOf:  func(s *domain.AgentSessionState) string { return s.ID },
		page:  page,
	}
}

// StatesBySessions pages each session's snapshots, newest first.
func (q SessionQueries) StatesBySessions(ctx context.Context, sessions []string, page domain.PageArgs) (map[string]domain.Page[*domain.AgentSessionState], error) {
	return childPages(ctx, q.Q, statePage(page), "st.session_id", sessions, func(s *domain.AgentSessionState) string { return s.SessionID })
}

// CountStatesBySessions counts each session's snapshots.
func (q SessionQueries) CountStatesBySessions(ctx context.Context, sessions []string) (map[string]int, error) {
	return childCounts(ctx, q.Q, statePage(domain.PageArgs{}), "st.session_id", sessions)
}

// SessionQuery selects a project's sessions: those in Status (empty: all),
// of TaskID and of RunID when set.
type SessionQuery struct {
	ProjectID     string
	Status        []domain.AgentSessionStatus
	TaskID, RunID *string
	Page          domain.PageArgs
}

// Sessions pages a project's sessions, newest first (the task_id and run_id
// indexes serve the filters).
func (q SessionQueries) Sessions(ctx context.Context, sq SessionQuery) (domain.Page[*domain.AgentSession], error) {
	pq := &pageQuery[*domain.AgentSession]{
		selectCols: "s.*", from: "agent_sessions s", idCol: "s.id",
		key:   sortKey{col: "s.created_at", kind: keyTime, desc: true},
		keyOf: func(s *domain.AgentSession) any { return s.CreatedAt },
		idOf:  func(s *domain.AgentSession) string { return s.ID },
		page:  sq.Page,
	}
	pq.filter("s.project_id = ?", sq.ProjectID)
	if len(sq.Status) > 0 {
		pq.filter("s.status IN (?)", sq.Status)
	}
	if sq.TaskID != nil {
		pq.filter("s.task_id = ?", *sq.TaskID)
	}
	if sq.RunID != nil {
		pq.filter("s.run_id = ?", *sq.RunID)
	}
	return rootPage(ctx, q.Q, pq)
}

// NextStepID takes the next ReAct step number of a session and returns the
// session as updated. The UPDATE holds the session's row until the
// transaction ends, so numbers commit in order; a rollback gives its number
// back: a session's committed steps are always 1..N.
func (q SessionQueries) NextStepID(ctx context.Context, sessionID string, at time.Time) (*domain.AgentSession, error) {
	var s domain.AgentSession
	err := q.get(ctx, &s, `UPDATE agent_sessions SET last_step_id = last_step_id + 1, updated_at = ?
		WHERE id = ? RETURNING *`, at, sessionID)
	if err != nil {
		return nil, err
	}
	return &s, nil
}

// InsertStep records a ReAct step.
func (q SessionQueries) InsertStep(ctx context.Context, st *domain.ReActStep) error {
	_, err := q.namedExec(ctx, `INSERT INTO react_steps (id, session_id, step_id, thought, action, action_type,
		action_data, observation, success, error, recorded_at)
		VALUES (:id, :session_id, :step_id, :thought, :action, :action_type, :action_data, :observation, :success,
		:error, :recorded_at)`, st)
	return err
}

// StepsByIDs loads steps by id.
func (q SessionQueries) StepsByIDs(ctx context.Context, ids []string) ([]*domain.ReActStep, error) {
	return byIDs[domain.ReActStep](ctx, q.Q, "react_steps", ids)
}

func stepPage(page domain.PageArgs) *pageQuery[*domain.ReActStep] {
	return &pageQuery[*domain.ReActStep]{
		selectCols: "rs.*", from: "react_steps rs", idCol: "rs.id",
		key:   sortKey{col: "rs.step_id", kind: keyInt},
		keyOf: func(s *domain.ReActStep) any { return int64(s.StepID) },
		idOf:  func(s *domain.ReActStep) string { return s.ID },
		page:  page,
	}
}

// StepsBySessions pages each session's steps by step number.
func (q SessionQueries) StepsBySessions(ctx context.Context, sessions []string, page domain.PageArgs) (map[string]domain.Page[*domain.ReActStep], error) {
	return childPages(ctx, q.Q, stepPage(page), "rs.session_id", sessions, func(s *domain.ReActStep) string { return s.SessionID })
}

// CountStepsBySessions counts each session's steps.
func (q SessionQueries) CountStepsBySessions(ctx context.Context, sessions []string) (map[string]int, error) {
	return childCounts(ctx, q.Q, stepPage(domain.PageArgs{}), "rs.session_id", sessions)
}

// StatesByIDs loads snapshots by id.
func (q SessionQueries) StatesByIDs(ctx context.Context, ids []string) ([]*domain.AgentSessionState, error) {
	return byIDs[domain.AgentSessionState](ctx, q.Q, "agent_session_states", ids)
}

// InsertTodoList inserts a todo list.
func (q SessionQueries) InsertTodoList(ctx context.Context, l *domain.TodoList) error {
	_, err := q.namedExec(ctx, `INSERT INTO todo_lists (id, session_id, mission, status, version, items, created_at, updated_at)
		VALUES (:id, :session_id, :mission, :status, :version, :items, :created_at, :updated_at)`, l)
	return err
}

// SetTodoListsStatus moves a session's lists in status from to status to
// (raising their versions) and returns how many moved.
func (q SessionQueries) SetTodoListsStatus(ctx context.Context, sessionID string, from, to domain.TodoListStatus, at time.Time) (int, error) {
	res, err := q.exec(ctx, `UPDATE todo_lists SET status = ?, version = version + 1, updated_at = ?
		WHERE session_id = ? AND status = ?`, to, at, sessionID, from)
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// TodoListForUpdate reads a todo list inside a transaction, locking it.
func (q SessionQueries) TodoListForUpdate(ctx context.Context, id string) (*domain.TodoList, error) {
	var l domain.TodoList
	if err := q.get(ctx, &l, `SELECT * FROM todo_lists WHERE id = ?`+q.forUpdate(), id); err != nil {
		return nil, err
	}
	return &l, nil
}

// UpdateTodoList writes a list's items, status and version.
func (q SessionQueries) UpdateTodoList(ctx context.Context, l *domain.TodoList) error {
	_, err := q.exec(ctx, `UPDATE todo_lists SET items = ?, status = ?, version = ?, updated_at = ? WHERE id = ?`,
		l.Items, l.Status, l.Version, l.UpdatedAt, l.ID)
	return err
}

// TodoListsByIDs loads todo lists by id.
func (q SessionQueries) TodoListsByIDs(ctx context.Context, ids []string) ([]*domain.TodoList, error) {
	return byIDs[domain.TodoList](ctx, q.Q, "todo_lists", ids)
}

// TodoListsBySessions loads the todo lists of sessions, oldest first.
func (q SessionQueries) TodoListsBySessions(ctx context.Context, sessions []string) ([]*domain.TodoList, error) {
	return byColumn[domain.TodoList](ctx, q.Q, "todo_lists", "session_id", sessions, "created_at, id")
}

// UpsertLesson records a lesson, or — one with the same dedupe key exists —
// reinforces that one: its confidence raised to the higher of the two, its
// reinforcements counted up, its embedding replaced when l has one. It
// returns the stored lesson and whether it was inserted. One statement, so
// that concurrent records of one lesson count each record once.
func (q SessionQueries) UpsertLesson(ctx context.Context, l *domain.Lesson) (*domain.Lesson, bool, error) {
	greatest := "GREATEST"
	if q.db.dialect == SQLite {
		greatest = "MAX" // SQLite's two-argument MAX is PostgreSQL's GREATEST
	}
	var out domain.Lesson
	err := q.get(ctx, &out, `INSERT INTO lessons (id, project_id, session_id, context, what_failed, what_worked,
		lesson, tool_name, confidence, dedupe_key, created_at, reinforcements, embedding, embedding_model)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?)
		ON CONFLICT (dedupe_key) DO UPDATE SET
			confidence = `+greatest+`(lessons.confidence, excluded.confidence),
			reinforcements = lessons.reinforcements + 1,
			embedding = COALESCE(excluded.embedding, lessons.embedding),
			embedding_model = CASE WHEN excluded.embedding IS NULL THEN lessons.embedding_model ELSE excluded.embedding_model END
		RETURNING `+strings.ReplaceAll(lessonColumns("l"), "l.", ""),
		l.ID, l.ProjectID, l.SessionID, l.Context, l.WhatFailed, l.WhatWorked, l.Lesson, l.ToolName, l.Confidence,
		l.DedupeKey, l.CreatedAt, l.Embedding, l.EmbeddingModel)
	if err != nil {
		return nil, false, err
	}
	return &out, out.ID == l.ID, nil
}

// lessonColumns are the columns of domain.Lesson, with a table alias (on
// PostgreSQL lessons also hold their search document, never read back).
func lessonColumns(alias string) string {
	cols := []string{"id", "project_id", "session_id", "context", "what_failed", "what_worked", "lesson", "tool_name",
		"confidence", "dedupe_key", "created_at", "reinforcements", "embedding", "embedding_model"}
	for i, c := range cols {
		cols[i] = alias + "." + c
	}
	return strings.Join(cols, ", ")
}

// LessonsByIDs loads lessons by id.
func (q SessionQueries) LessonsByIDs(ctx context.Context, ids []string) ([]*domain.Lesson, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	query, args := in(`SELECT `+lessonColumns("l")+` FROM lessons l WHERE l.id IN (?) ORDER BY l.id`, ids)
	var out []*domain.Lesson
	if err := q.selectx(ctx, &out, query, args...); err != nil {
		return nil, err
	}
	return out, nil
}

func sessionLessonPage(page domain.PageArgs) *pageQuery[*domain.Lesson] {
	return &pageQuery[*domain.Lesson]{
		selectCols: lessonColumns("ls"), from: "lessons ls", idCol: "ls.id",
		key:   sortKey{col: "ls.created_at", kind: keyTime},
		keyOf: func(l *domain.Lesson) any { return l.CreatedAt },
		idOf:  func(l *domain.Lesson) string { return l.ID },
		page:  page,
	}
}

// LessonsBySessions pages the lessons recorded in each session, oldest first.
func (q SessionQueries) LessonsBySessions(ctx context.Context, sessions []string, page domain.PageArgs) (map[string]domain.Page[*domain.Lesson], error) {
	return childPages(ctx, q.Q, sessionLessonPage(page), "ls.session_id", sessions, func(l *domain.Lesson) string {
		if l.SessionID == nil {
			return ""
		}
		return *l.SessionID
	})
}

// CountLessonsBySessions counts the lessons recorded in each session.
func (q SessionQueries) CountLessonsBySessions(ctx context.Context, sessions []string) (map[string]int, error) {
	return childCounts(ctx, q.Q, sessionLessonPage(domain.PageArgs{}), "ls.session_id", sessions)
}

// LessonQuery selects lessons.
type LessonQuery struct {
	// Which lessons: those of ProjectIDs, plus the global ones when Global;
	// with OwnerID, also those of every project the user owns; All: every one.
	All        bool
	ProjectIDs []string
	OwnerID    string
	Global     bool

	Terms         []string // full-text terms (any of them); none: no search
	ToolName      *string
	MinConfidence *float64
	Offset, Limit int
}

func (lq LessonQuery) where(alias string) ([]string, []any) {
	var where []string
	var args []any
	if !lq.All {
		var or []string
		if len(lq.ProjectIDs) > 0 {
			or = append(or, alias+".project_id IN (?)")
			args = append(args, lq.ProjectIDs)
		}
		if lq.OwnerID != "" {
			or = append(or, alias+".project_id IN (SELECT id FROM projects WHERE owner_id = ?)")
			args = append(args, lq.OwnerID)
		}
		if lq.Global {
			or = append(or, alias+".project_id IS NULL")
		}
		if len(or) == 0 {
			or = append(or, "1 = 0")
		}
		where = append(where, "("+strings.Join(or, " OR ")+")")
	}
	if lq.ToolName != nil {
		where = append(where, alias+".tool_name = ?")
		args = append(args, *lq.ToolName)
	}
	if lq.MinConfidence != nil {
		where = append(where, alias+".confidence >= ?")
		args = append(args, *lq.MinConfidence)
	}
	return where, args
}

// lessonSource is what a lesson query reads: the table (with the alias its
// columns go by), the full-text condition and the relevance it ranks by
// (higher is better), with the condition's arguments. On SQLite a search reads
// the FTS5 table alone — it carries the lessons' project, confidence and time
// as unindexed columns — so ranking every match joins nothing; on PostgreSQL
// the lessons' stored tsvector.
func (q SessionQueries) lessonSource(lq LessonQuery) (from, alias, cond, rank string, args []any) {
	switch {
	case len(lq.Terms) == 0:
		return "lessons l", "l", "", "", nil
	case q.db.dialect == Postgres:
		return "lessons l, to_tsquery('english', ?) tsq", "l", "l.search_vector @@ tsq",
			"ts_rank(l.search_vector, tsq)", []any{strings.Join(lq.Terms, " | ")}
	}
	quoted := make([]string, len(lq.Terms))
	for i, t := range lq.Terms {
		quoted[i] = `"` + strings.ReplaceAll(t, `"`, `""`) + `"`
	}
	// bm25 is lower for better matches.
	return "lessons_fts", "lessons_fts", "lessons_fts MATCH ?", "(-bm25(lessons_fts))", []any{strings.Join(quoted, " OR ")}
}

// lessonWhere is the WHERE clause of a lesson query over from.
func (q SessionQueries) lessonWhere(lq LessonQuery) (from, alias, where string, args []any) {
	from, alias, cond, _, margs := q.lessonSource(lq)
	conds, fargs := lq.where(alias)
	if cond != "" {
		conds = append([]string{cond}, conds...)
	}
	if len(conds) > 0 {
		where = " WHERE " + strings.Join(conds, " AND ")
	}
	return from, alias, where, append(margs, fargs...)
}

// rankedLessons is the query of one ranked page of lessons: narrow rows (id,
// score, created_at), so that the ranking sorts little; only the page's
// lessons are read whole, by the caller.
func (q SessionQueries) rankedLessons(lq LessonQuery) (string, []any) {
	from, a, where, args := q.lessonWhere(lq)
	score := a + ".confidence"
	if _, _, _, rank, _ := q.lessonSource(lq); rank != "" {
		score = rank + " * " + score
	}
	return fmt.Sprintf("SELECT %[1]s.id AS id, %[2]s AS score, %[1]s.created_at AS created_at FROM %[3]s%[4]s"+
		" ORDER BY score DESC, %[1]s.created_at DESC, %[1]s.id DESC LIMIT %[5]d OFFSET %[6]d",
		a, score, from, where, lq.Limit, lq.Offset), args
}

type rankedLesson struct {
	domain.Lesson
	Key   int     `db:"k"`
	Score float64 `db:"score"`
}

// SearchLessons lists lessons: with terms, those matching any of them by
// relevance × confidence, else by confidence; ties by newest.
func (q SessionQueries) SearchLessons(ctx context.Context, lq LessonQuery) ([]*domain.Lesson, error) {
	out, err := q.SearchLessonsBatch(ctx, []LessonQuery{lq})
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// SearchLessonsBatch runs several lesson searches in one statement; the
// result's i-th list answers lqs[i].
func (q SessionQueries) SearchLessonsBatch(ctx context.Context, lqs []LessonQuery) ([][]*domain.Lesson, error) {
	out := make([][]*domain.Lesson, len(lqs))
	if len(lqs) == 0 {
		return out, nil
	}
	parts := make([]string, len(lqs))
	var args []any
	for i, lq := range lqs {
		inner, iargs := q.rankedLessons(lq)
		parts[i] = fmt.Sprintf("SELECT %d AS k, r.id, r.score, r.created_at FROM (%s) r", i, inner)
		args = append(args, iargs...)
	}
	query := "SELECT u.k AS k, " + lessonColumns("l") + ", u.score AS score FROM (" + strings.Join(parts, " UNION ALL ") +
		") u JOIN lessons l ON l.id = u.id ORDER BY u.k, u.score DESC, u.created_at DESC, u.id DESC"
	query, args = in(query, args...)
	var rows []rankedLesson
	if err := q.selectx(ctx, &rows, query, args...); err != nil {
		return nil, err
	}
	for i := range rows {
		k := rows[i].Key
		out[k] = append(out[k], &rows[i].Lesson)
	}
	return out, nil
}

// CountLessons counts what SearchLessons would list, paging aside.
func (q SessionQueries) CountLessons(ctx context.Context, lq LessonQuery) (int, error) {
	from, _, where, args := q.lessonWhere(lq)
	query, args := in("SELECT COUNT(*) FROM "+from+where, args...)
	var n int
	err := q.get(ctx, &n, query, args...)
	return n, err
}

// OffsetCursor is the cursor of the row at offset n of a ranked list (lessons
// rank by relevance, which no row holds, so their pages are by position).
func OffsetCursor(n int) string {
	return base64.RawURLEncoding.EncodeToString([]byte("off:" + strconv.Itoa(n)))
}

// maxCursorOffset bounds the offset an OffsetCursor may carry: far past any
// list, and small enough that offset + page size stays in every database's
// integer range.
const maxCursorOffset = 1 << 30

// ParseOffsetCursor reads an OffsetCursor given in field.
func ParseOffsetCursor(s, field string) (int, error) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	rest, ok := strings.CutPrefix(string(raw), "off:")
	n, cerr := strconv.Atoi(rest)
	if err != nil || !ok || cerr != nil || n < 0 || n > maxCursorOffset {
		return 0, domain.InputError(field, "%q is not a cursor of this connection", domain.Echo(s))
	}
	return n, nil
}
