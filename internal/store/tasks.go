package store

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/taskgraph/taskgraph/internal/domain"
)

// ErrVersionConflict means a task changed since it was read.
var ErrVersionConflict = errors.New("store: task version changed")

const taskColumns = `id, display_id, user_id, project_id, idea_id, parent_task_id, queue, task_list_id, title,
	description, category, status, risk_level, priority, priority_score, blocks_count, is_quick_win, deadline,
	effort, owner, assigned_agent, phase, acceptance_criteria, codebase_tests, api_tests, ui_tests,
	actual_effort_minutes, affected_files, execution_log, version, supersedes_task_id, embedding,
	embedding_model, created_at, updated_at, started_at, completed_at, display_sort, text_signature`

// InsertTask inserts a task (its display id and sort key set by
// Task.SetDisplayID).
func (q TaskQueries) InsertTask(ctx context.Context, t *domain.Task) error {
	signTask(t)
	return q.laterNamed(ctx, `INSERT INTO tasks (`+taskColumns+`) VALUES (`+namedList(taskColumns)+`)`, t)
}

// UpdateTask writes every mutable column of t if the stored version is still
// t.Version, and raises the version by one (in the row and in t).
func (q TaskQueries) UpdateTask(ctx context.Context, t *domain.Task) error {
	signTask(t)
	n, err := q.namedExecP(ctx, updateTaskSQL, t)
	if err != nil {
		return err
	}
	if n == 0 {
		return ErrVersionConflict
	}
	t.Version++
	return nil
}

// signTask sets t's text signature from its title and description (what
// grouping compares: a few hundred bytes, whatever the description's size).
func signTask(t *domain.Task) {
	sig := domain.TextSignature(t.Title, t.Description)
	t.TextSignature = &sig
}

// updateTaskSQL writes a task's editable columns if its version is the one
// read (optimistic locking), bumping it.
const updateTaskSQL = `UPDATE tasks SET idea_id = :idea_id, parent_task_id = :parent_task_id,
		queue = :queue, task_list_id = :task_list_id, title = :title, description = :description,
		category = :category, status = :status, risk_level = :risk_level, priority = :priority,
		priority_score = :priority_score, blocks_count = :blocks_count, is_quick_win = :is_quick_win,
		deadline = :deadline, effort = :effort, owner = :owner, assigned_agent = :assigned_agent, phase = :phase,
		acceptance_criteria = :acceptance_criteria, codebase_tests = :codebase_tests, api_tests = :api_tests,
		ui_tests = :ui_tests, actual_effort_minutes = :actual_effort_minutes, affected_files = :affected_files,
		execution_log = :execution_log, supersedes_task_id = :supersedes_task_id, embedding = :embedding,
		embedding_model = :embedding_model, updated_at = :updated_at, started_at = :started_at,
		completed_at = :completed_at, text_signature = :text_signature, version = version + 1
		WHERE id = :id AND version = :version`

// TasksByIDs loads tasks by id.
func (q TaskQueries) TasksByIDs(ctx context.Context, ids []string) ([]*domain.Task, error) {
	return byIDs[domain.Task](ctx, q.Q, "tasks", ids)
}

// ShownTasksByIDs is TasksByIDs reading only the columns of fields (names
// of domain.Task's fields), the id and the project: the other fields are
// left zero. For showing tasks whose shown fields need only those, never
// for a rule to decide on.
func (q TaskQueries) ShownTasksByIDs(ctx context.Context, fields, ids []string) ([]*domain.Task, error) {
	return colsByColumn[domain.Task](ctx, q.Q, shownColumns[domain.Task]("", alwaysShownTask, fields), "tasks", "id", ids, "id")
}

var alwaysShownTask = []string{"ID", "ProjectID"}

// TaskForUpdate loads a task and, inside a PostgreSQL transaction, locks its row.
func (q TaskQueries) TaskForUpdate(ctx context.Context, id string) (*domain.Task, error) {
	var t domain.Task
	if err := q.getP(ctx, &t, `SELECT * FROM tasks WHERE id = ?`+q.forUpdate(), id); err != nil {
		return nil, err
	}
	return &t, nil
}

// TaskForUpdateNow is TaskForUpdate with the database clock as it reads
// once the lock is held (Q.Now), in the same statement: the clock is read
// above the locking subquery, so after any wait for the row.
func (q TaskQueries) TaskForUpdateNow(ctx context.Context, id string) (*domain.Task, time.Time, error) {
	if q.db.dialect != Postgres || !q.inTx {
		t, err := q.TaskForUpdate(ctx, id)
		if err != nil {
			return nil, time.Time{}, err
		}
		now, err := q.Now(ctx)
		return t, now, err
	}
	var row struct {
		domain.Task
		Now time.Time `db:"locked_now"`
	}
	if err := q.getP(ctx, &row, `SELECT l.*, clock_timestamp() AS locked_now
		FROM (SELECT * FROM tasks WHERE id = ? FOR NO KEY UPDATE) l`, id); err != nil {
		return nil, time.Time{}, err
	}
	return &row.Task, row.Now.UTC().Truncate(time.Microsecond), nil
}

// TaskByDisplayID finds a task by display id.
func (q TaskQueries) TaskByDisplayID(ctx context.Context, displayID string) (*domain.Task, error) {
	var t domain.Task
	if err := q.get(ctx, &t, `SELECT * FROM tasks WHERE display_id = ?`, displayID); err != nil {
		return nil, err
	}
	return &t, nil
}

// displayNumberSQL takes the next number of a (project, category) counter.
// The upsert takes a row lock, so concurrent creators get distinct numbers.
const displayNumberSQL = `INSERT INTO display_id_counters (project_id, category, last_value) VALUES (?, ?, 1)
	ON CONFLICT (project_id, category) DO UPDATE SET last_value = display_id_counters.last_value + 1
	RETURNING last_value`

// NextDisplayNumber allocates the next number of a (project, category)
// counter as part of the transaction: a transaction that rolls back gives
// its number back, and the counter row stays locked until it ends, so a
// project's creates take turns on it. Numbers are never reused.
func (q TaskQueries) NextDisplayNumber(ctx context.Context, projectID string, category domain.TaskCategory) (int, error) {
	var n int
	err := q.get(ctx, &n, displayNumberSQL, projectID, category)
	return n, err
}

// TakeDisplayNumber allocates the next number of a (project, category)
// counter at once, as a sequence hands out values: on PostgreSQL inside a
// transaction it is committed on the counters' own pool, whose statements
// wait for nothing but one another, and the counter row is locked for that
// one statement only. A transaction that then fails leaves its number
// unused. On SQLite, which writes one transaction at a time anyway, and
// outside a transaction it is NextDisplayNumber.
func (q TaskQueries) TakeDisplayNumber(ctx context.Context, projectID string, category domain.TaskCategory) (int, error) {
	if q.db.counters == nil || !q.inTx {
		return q.NextDisplayNumber(ctx, projectID, category)
	}
	var n int
	q.db.statements.Add(1)
	err := q.db.sideGet(ctx, q.db.counters, &n, displayNumberSQL, projectID, category)
	return n, mapErr(err)
}

// RecountBlocks recomputes blocks_count of the given tasks: the distinct tasks that
// wait on each (see domain.SourceWaitsOnTarget, TargetWaitsOnSource).
func (q TaskQueries) RecountBlocks(ctx context.Context, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	query, args := in(`UPDATE tasks SET blocks_count = (
		SELECT COUNT(*) FROM (
			SELECT r.source_task_id AS waiter FROM task_relationships r
			 WHERE r.target_task_id = tasks.id AND r.relationship_type IN (?)
			UNION
			SELECT r.target_task_id FROM task_relationships r
			 WHERE r.source_task_id = tasks.id AND r.relationship_type IN (?)
		) waiters)
		WHERE id IN (?)`, domain.SourceWaitsOnTarget, domain.TargetWaitsOnSource, ids)
	_, err := q.exec(ctx, query, args...)
	return err
}

// SetTaskScore stores a recomputed priority score and quick-win flag without
// touching the version: the score is derived, not edited.
func (q TaskQueries) SetTaskScore(ctx context.Context, id string, score int, quickWin bool) error {
	_, err := q.exec(ctx, `UPDATE tasks SET priority_score = ?, is_quick_win = ? WHERE id = ?`, score, quickWin, id)
	return err
}

// TasksWithDeadlines lists unfinished tasks that have a deadline, whose score
// depends on the clock.
func (q TaskQueries) TasksWithDeadlines(ctx context.Context) ([]*domain.Task, error) {
	var out []*domain.Task
	query, args := in(`SELECT * FROM tasks WHERE deadline IS NOT NULL AND status NOT IN (?)`, domain.EndedTaskStatuses)
	err := q.selectx(ctx, &out, query, args...)
	return out, err
}

// TaskQuery selects tasks for a connection.
type TaskQuery struct {
	Scope      domain.ProjectScope
	ProjectIDs []string // page per project (nested) when set; with one element and no nesting, that project only
	IdeaIDs    []string // page per idea (nested)
	Filter     *domain.TaskFilter
	Order      *domain.TaskOrder
	Page       domain.PageArgs
	// Lean: read only the columns of Fields (names of domain.Task's
	// fields) and those a page needs (the id, the project, the idea, the
	// sort key); the other fields are left zero. For showing tasks whose
	// shown fields need only those, never for a rule to decide on.
	Lean   bool
	Fields []string
}

// taskOrder is how tasks are ordered by one field: the page's sort key,
// the field of domain.Task it is read into, and that field's value.
type taskOrder struct {
	key   sortKey
	field string
	of    func(*domain.Task) any
}

var taskOrders = map[domain.TaskOrderField]taskOrder{
	domain.OrderPriorityScore: {sortKey{col: "t.priority_score", kind: keyInt}, "PriorityScore",
		func(t *domain.Task) any { return t.PriorityScore }},
	domain.OrderCreatedAt: {sortKey{col: "t.created_at", kind: keyTime}, "CreatedAt",
		func(t *domain.Task) any { return t.CreatedAt }},
	domain.OrderUpdatedAt: {sortKey{col: "t.updated_at", kind: keyTime}, "UpdatedAt",
		func(t *domain.Task) any { return t.UpdatedAt }},
	domain.OrderDeadline: {sortKey{col: "t.deadline", kind: keyTime, nullable: true}, "Deadline",
		func(t *domain.Task) any { return t.Deadline }},
	// natural: …-999 before …-1000
	domain.OrderDisplayID: {sortKey{col: "t.display_sort", kind: keyString}, "DisplaySort",
		func(t *domain.Task) any { return t.DisplaySort }},
}

func taskPageQuery(tq TaskQuery) *pageQuery[*domain.Task] {
	order := domain.TaskOrder{Field: domain.OrderCreatedAt, Direction: domain.OrderAsc}
	if tq.Order != nil {
		order = *tq.Order
	}
	by, ok := taskOrders[order.Field]
	if !ok {
		by = taskOrders[domain.OrderCreatedAt]
	}
	key := by.key
	key.desc = order.Direction == domain.OrderDesc
	pq := &pageQuery[*domain.Task]{
		selectCols: "t.*", from: "tasks t", idCol: "t.id", key: key,
		keyOf: by.of, idOf: func(t *domain.Task) string { return t.ID },
		page: tq.Page,
	}
	if tq.Lean {
		pq.selectCols = shownColumns[domain.Task]("t.", []string{"ID", "ProjectID", "IdeaID", by.field}, tq.Fields)
	}
	switch {
	case tq.Scope.All:
	case tq.Scope.ProjectID != "":
		pq.filter("t.project_id = ?", tq.Scope.ProjectID)
	default:
		pq.filter("t.project_id IN (SELECT id FROM projects WHERE owner_id = ?)", tq.Scope.OwnerID)
	}
	switch {
	case len(tq.IdeaIDs) > 0:
		pq.parentCol, pq.parents, pq.parentOf = "t.idea_id", tq.IdeaIDs, func(t *domain.Task) string { return deref(t.IdeaID) }
	case len(tq.ProjectIDs) > 0:
		pq.parentCol, pq.parents, pq.parentOf = "t.project_id", tq.ProjectIDs, func(t *domain.Task) string { return t.ProjectID }
	}
	if f := tq.Filter; f != nil {
		if len(f.Status) > 0 {
			pq.filter("t.status IN (?)", f.Status)
		}
		if len(f.Category) > 0 {
			pq.filter("t.category IN (?)", f.Category)
		}
		if len(f.Priority) > 0 {
			pq.filter("t.priority IN (?)", f.Priority)
		}
		if f.TaskListID != nil {
			pq.filter("t.task_list_id = ?", *f.TaskListID)
		}
		if f.InEvaluationQueue != nil {
			if *f.InEvaluationQueue {
				pq.filter("t.queue = ?", domain.QueueEvaluation)
			} else {
				pq.filter("t.queue IS NULL")
			}
		}
		if f.Search != nil && strings.TrimSpace(*f.Search) != "" {
			like := likePattern(*f.Search)
			pq.filter("("+likeExpr("t.title")+" OR "+likeExpr("t.description")+")", like, like)
		}
		if f.AffectsFile != nil {
			pq.filter("EXISTS (SELECT 1 FROM task_file_impacts fi WHERE fi.task_id = t.id AND fi.file_path = ?)", *f.AffectsFile)
		}
		if f.RelationshipType != nil {
			pq.filter(`EXISTS (SELECT 1 FROM task_relationships r WHERE (r.source_task_id = t.id OR r.target_task_id = t.id)
				AND r.relationship_type = ?)`, *f.RelationshipType)
		}
	}
	return pq
}

// Tasks pages tasks; with ProjectIDs or IdeaIDs it pages per parent (key = parent
// id), otherwise the single page is under key "".
func (q TaskQueries) Tasks(ctx context.Context, tq TaskQuery) (map[string]domain.Page[*domain.Task], error) {
	return taskPageQuery(tq).fetch(ctx, q.Q)
}

// CountTasks counts the tasks of a TaskQuery, per parent like Tasks.
func (q TaskQueries) CountTasks(ctx context.Context, tq TaskQuery) (map[string]int, error) {
	return taskPageQuery(tq).count(ctx, q.Q)
}

// TaskEdge is a link of one of the acyclic graphs, as (from, to) task ids.
type TaskEdge struct {
	From string `db:"from_id"`
	To   string `db:"to_id"`
}

// OrderingEdgesFrom lists the links of the given types that leave the given
// tasks, as edges "from must follow to": DEPENDS_ON source->target, BLOCKS
// target->source (the reverse dependency), SUBTASK_OF and SUPERSEDES
// source->target.
func (q TaskQueries) OrderingEdgesFrom(ctx context.Context, from []string, types []domain.RelationshipType) ([]TaskEdge, error) {
	if len(from) == 0 {
		return nil, nil
	}
	query, args := in(`SELECT r.source_task_id AS from_id, r.target_task_id AS to_id FROM task_relationships r
		WHERE r.source_task_id IN (?) AND r.relationship_type IN (?) AND r.relationship_type NOT IN (?)
		UNION ALL
		SELECT r.target_task_id, r.source_task_id FROM task_relationships r
		WHERE r.target_task_id IN (?) AND r.relationship_type IN (?) AND r.relationship_type IN (?)
		ORDER BY 1, 2`, from, types, domain.TargetWaitsOnSource, from, types, domain.TargetWaitsOnSource)
	var out []TaskEdge
	err := q.selectx(ctx, &out, query, args...)
	return out, err
}

// LockProjectGraph serialises, across PostgreSQL transactions, what reads or
// changes one project's planning graph: cycle checks of new links, changes of
// planning links, file impacts and list membership, and the materialisation
// of a plan (so a change never commits between a plan's reads and its
// parallelism analysis unseen). SQLite's single writer already does.
func (q TaskQueries) LockProjectGraph(ctx context.Context, projectID string) error {
	if q.db.dialect != Postgres {
		return nil
	}
	_, err := q.exec(ctx, `SELECT pg_advisory_xact_lock(hashtext(?))`, "task-graph:"+projectID)
	return err
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// namedList turns "a, b" into ":a, :b".
func namedList(cols string) string {
	parts := strings.Split(cols, ",")
	for i, p := range parts {
		parts[i] = ":" + strings.TrimSpace(p)
	}
	return strings.Join(parts, ", ")
}

// SetTaskList records which list holds a task (the list item is written apart).
func (q TaskQueries) SetTaskList(ctx context.Context, taskID string, listID *string) error {
	_, err := q.exec(ctx, `UPDATE tasks SET task_list_id = ?, queue = NULL WHERE id = ?`, listID, taskID)
	return err
}
