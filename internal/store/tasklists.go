package store

import (
	"context"
	"strconv"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/taskgraph/taskgraph/internal/domain"
)

// InsertTaskList inserts a task list.
func (q ListQueries) InsertTaskList(ctx context.Context, l *domain.TaskList) error {
	_, err := q.namedExec(ctx, `INSERT INTO task_lists (id, name, description, project_id, user_id, status,
		max_parallel_agents, schedule, auto_execute, total_tasks, completed_tasks, failed_tasks, telegram_chat_id,
		created_at, updated_at, started_at, completed_at, run_schedule, next_scheduled_run_at) VALUES (:id, :name,
		:description, :project_id, :user_id, :status, :max_parallel_agents, :schedule, :auto_execute, :total_tasks,
		:completed_tasks, :failed_tasks, :telegram_chat_id, :created_at, :updated_at, :started_at, :completed_at,
		:run_schedule, :next_scheduled_run_at)`, l)
	return err
}

// UpdateTaskListSettings writes a list's name, description and execution
// settings.
func (q ListQueries) UpdateTaskListSettings(ctx context.Context, l *domain.TaskList) error {
	_, err := q.namedExec(ctx, `UPDATE task_lists SET name = :name, description = :description,
		max_parallel_agents = :max_parallel_agents, schedule = :schedule, auto_execute = :auto_execute,
		run_schedule = :run_schedule, next_scheduled_run_at = :next_scheduled_run_at,
		telegram_chat_id = :telegram_chat_id, updated_at = :updated_at WHERE id = :id`, l)
	return err
}

// SetTaskListStatus writes a list's lifecycle: its status, startedAt and
// completedAt.
func (q ListQueries) SetTaskListStatus(ctx context.Context, l *domain.TaskList) error {
	_, err := q.exec(ctx, `UPDATE task_lists SET status = ?, started_at = ?, completed_at = ?, updated_at = ?
		WHERE id = ?`, l.Status, l.StartedAt, l.CompletedAt, l.UpdatedAt, l.ID)
	return err
}

// ClaimScheduledTick moves a list's next scheduled run from due to next when
// it is still due: whether this transaction claimed the tick. Of several
// replicas claiming one tick, one moves it; the others match no row.
func (q ListQueries) ClaimScheduledTick(ctx context.Context, listID string, due, next time.Time) (bool, error) {
	res, err := q.exec(ctx, `UPDATE task_lists SET next_scheduled_run_at = ? WHERE id = ? AND next_scheduled_run_at = ?`,
		next, listID, due)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// UnfinishedTasksOfList counts a list's tasks that are not COMPLETED.
func (q ListQueries) UnfinishedTasksOfList(ctx context.Context, listID string) (int, error) {
	var n int
	err := q.get(ctx, &n, `SELECT COUNT(*) FROM tasks WHERE task_list_id = ? AND status <> ?`, listID, domain.StatusCompleted)
	return n, err
}

// ScheduledList is a list's next scheduled run.
type ScheduledList struct {
	ID   string    `db:"id"`
	Next time.Time `db:"next_scheduled_run_at"`
}

// DueScheduledLists lists up to limit lists, not archived, whose next
// scheduled run is at or before now, earliest first. Background maintenance
// (the schedule sweep): its statements are not counted in Statements().
func (d *DB) DueScheduledLists(ctx context.Context, now time.Time, limit int) ([]ScheduledList, error) {
	var rows []ScheduledList
	if err := sqlx.SelectContext(ctx, d.sqlx, &rows, d.sqlx.Rebind(`SELECT id, next_scheduled_run_at FROM task_lists
		WHERE next_scheduled_run_at IS NOT NULL AND status <> ? ORDER BY next_scheduled_run_at LIMIT `+
		strconv.Itoa(limit)), domain.ListArchived); err != nil {
		return nil, mapErr(err)
	}
	// Compared here, not in SQL: SQLite keeps times as text.
	out := rows[:0]
	for _, r := range rows {
		if r.Next.After(now) {
			break
		}
		out = append(out, r)
	}
	return out, nil
}

// TaskListsByIDs loads lists by id.
func (q ListQueries) TaskListsByIDs(ctx context.Context, ids []string) ([]*domain.TaskList, error) {
	return byIDs[domain.TaskList](ctx, q.Q, "task_lists", ids)
}

// TaskListForUpdate loads a list, locking its row inside a PostgreSQL transaction.
func (q ListQueries) TaskListForUpdate(ctx context.Context, id string) (*domain.TaskList, error) {
	var l domain.TaskList
	if err := q.get(ctx, &l, `SELECT * FROM task_lists WHERE id = ?`+q.forUpdate(), id); err != nil {
		return nil, err
	}
	return &l, nil
}

// RecountTaskLists makes the lists' counters true to their items and tasks.
func (q ListQueries) RecountTaskLists(ctx context.Context, ids []string, now time.Time) error {
	if len(ids) == 0 {
		return nil
	}
	// On PostgreSQL the counting UPDATE reads with the snapshot its statement
	// started with: waiting inside it for a concurrent recount's row lock would
	// count without that transaction's rows. Lock the lists first, in a
	// statement of their own, so the UPDATE's snapshot sees every committed change.
	if err := q.lockTaskLists(ctx, ids); err != nil {
		return err
	}
	query, args := in(`UPDATE task_lists SET
		total_tasks = (SELECT COUNT(*) FROM task_list_items i WHERE i.task_list_id = task_lists.id),
		completed_tasks = (SELECT COUNT(*) FROM tasks t WHERE t.task_list_id = task_lists.id AND t.status = ?),
		failed_tasks = (SELECT COUNT(*) FROM tasks t WHERE t.task_list_id = task_lists.id AND t.status = ?),
		updated_at = ?
		WHERE id IN (?)`, domain.StatusCompleted, domain.StatusFailed, now, ids)
	_, err := q.exec(ctx, query, args...)
	return err
}

// AddListCounts adds to a list's counters of completed and failed tasks (a
// transition's change; RecountTaskLists recounts them whole). With nowait,
// on PostgreSQL, a list row another transaction holds is not waited for:
// ErrBusy, and the transaction is over.
func (q ListQueries) AddListCounts(ctx context.Context, listID string, completed, failed int, now time.Time, nowait bool) error {
	where := `id = ?`
	if nowait && q.db.dialect == Postgres && q.inTx {
		where = `id = (SELECT id FROM task_lists WHERE id = ? FOR NO KEY UPDATE NOWAIT)`
	}
	_, err := q.exec(ctx, `UPDATE task_lists SET completed_tasks = completed_tasks + ?, failed_tasks = failed_tasks + ?,
		updated_at = ? WHERE `+where, completed, failed, now, listID)
	return err
}

func taskListPageQuery(projects []string, page domain.PageArgs) *pageQuery[*domain.TaskList] {
	return &pageQuery[*domain.TaskList]{
		selectCols: "l.*", from: "task_lists l", idCol: "l.id",
		key:   sortKey{col: "l.created_at", kind: keyTime},
		keyOf: func(l *domain.TaskList) any { return l.CreatedAt }, idOf: func(l *domain.TaskList) string { return l.ID },
		parentCol: "l.project_id", parents: projects, parentOf: func(l *domain.TaskList) string { return l.ProjectID },
		page: page,
	}
}

// TaskListsByProjects pages lists per project.
func (q ListQueries) TaskListsByProjects(ctx context.Context, projects []string, page domain.PageArgs) (map[string]domain.Page[*domain.TaskList], error) {
	return taskListPageQuery(projects, page).fetch(ctx, q.Q)
}

// CountTaskListsByProjects counts lists per project.
func (q ListQueries) CountTaskListsByProjects(ctx context.Context, projects []string) (map[string]int, error) {
	return taskListPageQuery(projects, domain.PageArgs{}).count(ctx, q.Q)
}

// lockTaskLists locks list rows (in id order, against deadlocks) inside a
// PostgreSQL transaction; SQLite's single writer needs no lock. NO KEY UPDATE is
// the lock the counters' UPDATE takes anyway; unlike FOR UPDATE it does not
// wait for the KEY SHARE locks that writing a task's or item's task_list_id
// takes on the list, which would deadlock two transactions adding to one list.
func (q ListQueries) lockTaskLists(ctx context.Context, ids []string) error {
	if q.forUpdate() == "" {
		return nil
	}
	query, args := in(`SELECT id FROM task_lists WHERE id IN (?) ORDER BY id FOR NO KEY UPDATE`, ids)
	var locked []string
	return q.selectx(ctx, &locked, query, args...)
}

// MaxItemPosition is the last position used in a list (0 when empty). Inside a
// transaction it first locks the list, so that concurrent appenders take
// distinct positions.
func (q ListQueries) MaxItemPosition(ctx context.Context, listID string) (int, error) {
	if err := q.lockTaskLists(ctx, []string{listID}); err != nil {
		return 0, err
	}
	var n int
	err := q.get(ctx, &n, `SELECT COALESCE(MAX(position), 0) FROM task_list_items WHERE task_list_id = ?`, listID)
	return n, err
}

// ListForAppend is MaxItemPosition with the list's status, in as many
// statements: on PostgreSQL the lock returns the status (then the maximum is
// read with a snapshot that sees the appenders that held the lock before);
// SQLite's single writer reads both at once.
func (q ListQueries) ListForAppend(ctx context.Context, listID string) (domain.TaskListStatus, int, error) {
	var row struct {
		Status domain.TaskListStatus `db:"status"`
		Max    int                   `db:"max_position"`
	}
	if q.forUpdate() == "" {
		err := q.get(ctx, &row, `SELECT l.status AS status, COALESCE((SELECT MAX(i.position) FROM task_list_items i
			WHERE i.task_list_id = l.id), 0) AS max_position FROM task_lists l WHERE l.id = ?`, listID)
		return row.Status, row.Max, err
	}
	if err := q.get(ctx, &row.Status, `SELECT status FROM task_lists WHERE id = ? FOR NO KEY UPDATE`, listID); err != nil {
		return "", 0, err
	}
	err := q.get(ctx, &row.Max, `SELECT COALESCE(MAX(position), 0) FROM task_list_items WHERE task_list_id = ?`, listID)
	return row.Status, row.Max, err
}

// DeleteItemOfTask takes a task out of whatever list holds it.
func (q ListQueries) DeleteItemOfTask(ctx context.Context, taskID string) error {
	_, err := q.exec(ctx, `DELETE FROM task_list_items WHERE task_id = ?`, taskID)
	return err
}

// InsertItems inserts list items.
func (q ListQueries) InsertItems(ctx context.Context, items []*domain.TaskListItem) error {
	if len(items) == 0 {
		return nil
	}
	_, err := q.namedExec(ctx, `INSERT INTO task_list_items (id, task_list_id, task_id, position, item_status,
		started_at, completed_at, execution_notes, added_at) VALUES (:id, :task_list_id, :task_id, :position,
		:item_status, :started_at, :completed_at, :execution_notes, :added_at)`, items)
	return err
}

// SetItemStatus mirrors a task's status on its list item.
func (q ListQueries) SetItemStatus(ctx context.Context, taskID string, status domain.ItemStatus, startedAt, completedAt *time.Time) error {
	_, err := q.execP(ctx, `UPDATE task_list_items SET item_status = ?,
		started_at = COALESCE(started_at, ?), completed_at = ? WHERE task_id = ?`, status, startedAt, completedAt, taskID)
	return err
}

// ItemsByIDs loads items by id.
func (q ListQueries) ItemsByIDs(ctx context.Context, ids []string) ([]*domain.TaskListItem, error) {
	return byIDs[domain.TaskListItem](ctx, q.Q, "task_list_items", ids)
}

// ItemsOfTasks loads the list items of tasks.
func (q ListQueries) ItemsOfTasks(ctx context.Context, taskIDs []string) ([]*domain.TaskListItem, error) {
	return byColumn[domain.TaskListItem](ctx, q.Q, "task_list_items", "task_id", taskIDs, "id")
}

func itemPageQuery(lists []string, page domain.PageArgs) *pageQuery[*domain.TaskListItem] {
	return &pageQuery[*domain.TaskListItem]{
		selectCols: "i.*", from: "task_list_items i", idCol: "i.id",
		key:   sortKey{col: "i.position", kind: keyInt},
		keyOf: func(i *domain.TaskListItem) any { return i.Position }, idOf: func(i *domain.TaskListItem) string { return i.ID },
		parentCol: "i.task_list_id", parents: lists, parentOf: func(i *domain.TaskListItem) string { return i.TaskListID },
		page: page,
	}
}

// ItemsByLists pages items per list, in list order.
func (q ListQueries) ItemsByLists(ctx context.Context, lists []string, page domain.PageArgs) (map[string]domain.Page[*domain.TaskListItem], error) {
	return itemPageQuery(lists, page).fetch(ctx, q.Q)
}

// listTask is a task read with its list item's place in the list: the rows of
// a list's task page, read in one statement.
type listTask struct {
	domain.Task
	ItemID       string `db:"item_id"`
	ItemListID   string `db:"item_list_id"`
	ItemPosition int    `db:"item_position"`
}

// TasksByLists pages the tasks of lists in list order, the item page and its
// tasks in one statement; each task's cursor is its item's, as ItemsByLists
// gives it. With shown.Lean only shown.Fields (names of domain.Task's fields),
// the id and the project are read, as ShownTasksByIDs reads them.
func (q ListQueries) TasksByLists(ctx context.Context, lean bool, fields, lists []string, page domain.PageArgs) (map[string]domain.Page[*domain.Task], error) {
	cols := "t.*"
	if lean {
		cols = shownColumns[domain.Task]("t.", alwaysShownTask, fields)
	}
	pages, err := (&pageQuery[*listTask]{
		selectCols: cols + ", i.id AS item_id, i.task_list_id AS item_list_id, i.position AS item_position",
		from:       "task_list_items i JOIN tasks t ON t.id = i.task_id", idCol: "i.id",
		key:   sortKey{col: "i.position", kind: keyInt},
		keyOf: func(r *listTask) any { return r.ItemPosition }, idOf: func(r *listTask) string { return r.ItemID },
		parentCol: "i.task_list_id", parents: lists, parentOf: func(r *listTask) string { return r.ItemListID },
		page: page,
	}).fetch(ctx, q.Q)
	if err != nil {
		return nil, err
	}
	out := make(map[string]domain.Page[*domain.Task], len(pages))
	for list, pg := range pages {
		tasks := make([]*domain.Task, len(pg.Items))
		for i, r := range pg.Items {
			tasks[i] = &r.Task
		}
		out[list] = domain.Page[*domain.Task]{Items: tasks, Cursors: pg.Cursors,
			HasNextPage: pg.HasNextPage, HasPreviousPage: pg.HasPreviousPage}
	}
	return out, nil
}

// CountItemsByLists counts items per list.
func (q ListQueries) CountItemsByLists(ctx context.Context, lists []string) (map[string]int, error) {
	return itemPageQuery(lists, domain.PageArgs{}).count(ctx, q.Q)
}

// InsertTemplate inserts a task template.
func (q ListQueries) InsertTemplate(ctx context.Context, t *domain.TaskTemplate) error {
	_, err := q.namedExec(ctx, `INSERT INTO task_templates (id, name, description, category, default_acceptance_criteria,
		default_codebase_tests, default_api_tests, default_ui_tests, default_affected_files, scope, scope_id,
		usage_count, created_by, created_at, updated_at) VALUES (:id, :name, :description, :category,
		:default_acceptance_criteria, :default_codebase_tests, :default_api_tests, :default_ui_tests,
		:default_affected_files, :scope, :scope_id, :usage_count, :created_by, :created_at, :updated_at)`, t)
	return err
}

// TemplatesByIDs loads templates by id.
func (q ListQueries) TemplatesByIDs(ctx context.Context, ids []string) ([]*domain.TaskTemplate, error) {
	return byIDs[domain.TaskTemplate](ctx, q.Q, "task_templates", ids)
}

// CountTemplateUse raises a template's usage count by one.
func (q ListQueries) CountTemplateUse(ctx context.Context, id string, now time.Time) error {
	_, err := q.exec(ctx, `UPDATE task_templates SET usage_count = usage_count + 1, updated_at = ? WHERE id = ?`, now, id)
	return err
}

// TemplateQuery selects the templates usable in a project by a user: GLOBAL ones,
// the project's, and the user's own. Without a project: GLOBAL, the user's, and
// those of the projects the scope can see.
type TemplateQuery struct {
	Scope     domain.ProjectScope
	ProjectID string
	UserID    string
	Page      domain.PageArgs
}

func templatePageQuery(tq TemplateQuery) *pageQuery[*domain.TaskTemplate] {
	pq := &pageQuery[*domain.TaskTemplate]{
		selectCols: "tt.*", from: "task_templates tt", idCol: "tt.id",
		key:   sortKey{col: "tt.created_at", kind: keyTime},
		keyOf: func(t *domain.TaskTemplate) any { return t.CreatedAt }, idOf: func(t *domain.TaskTemplate) string { return t.ID },
		page: tq.Page,
	}
	g, pr, u := domain.ScopeGlobal, domain.ScopeProject, domain.ScopeUser
	switch {
	case tq.ProjectID != "":
		pq.filter(`(tt.scope = ? OR (tt.scope = ? AND tt.scope_id = ?) OR (tt.scope = ? AND tt.scope_id = ?))`,
			g, pr, tq.ProjectID, u, tq.UserID)
	case tq.Scope.All:
	case tq.Scope.ProjectID != "":
		pq.filter(`(tt.scope = ? OR (tt.scope = ? AND tt.scope_id = ?) OR (tt.scope = ? AND tt.scope_id = ?))`,
			g, pr, tq.Scope.ProjectID, u, tq.UserID)
	default:
		pq.filter(`(tt.scope = ? OR (tt.scope = ? AND tt.scope_id = ?) OR
			(tt.scope = ? AND tt.scope_id IN (SELECT id FROM projects WHERE owner_id = ?)))`, g, u, tq.UserID, pr, tq.Scope.OwnerID)
	}
	return pq
}

// Templates pages templates.
func (q ListQueries) Templates(ctx context.Context, tq TemplateQuery) (domain.Page[*domain.TaskTemplate], error) {
	pq := templatePageQuery(tq)
	pages, err := pq.fetch(ctx, q.Q)
	if err != nil {
		return domain.Page[*domain.TaskTemplate]{}, err
	}
	pg := pages[""]
	pg.Total = func(ctx context.Context) (int, error) {
		n, err := pq.count(ctx, q.db.pool())
		return n[""], err
	}
	return pg, nil
}

// TaskListForStatus loads a list to move its lifecycle, locking its row FOR
// NO KEY UPDATE inside a PostgreSQL transaction (the lock of the counters'
// UPDATE: it does not wait for writers of tasks' and items' task_list_id).
func (q ListQueries) TaskListForStatus(ctx context.Context, id string) (*domain.TaskList, error) {
	if err := q.lockTaskLists(ctx, []string{id}); err != nil {
		return nil, err
	}
	var l domain.TaskList
	if err := q.get(ctx, &l, `SELECT * FROM task_lists WHERE id = ?`, id); err != nil {
		return nil, err
	}
	return &l, nil
}
