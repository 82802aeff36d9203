package store

import (
	"context"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/taskgraph/taskgraph/internal/domain"
)

// InsertStateChange records one lifecycle step of a task.
func (q TaskQueries) InsertStateChange(ctx context.Context, c *domain.TaskStateChange) error {
	const insert = `INSERT INTO task_state_history (id, task_id, execution_run_id, from_status, to_status, reason,
		changed_by, changed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`
	return q.laterP(ctx, insert, c.ID, c.TaskID, c.ExecutionRunID, c.FromStatus, c.ToStatus, c.Reason, c.ChangedBy,
		c.ChangedAt)
}

// StateChangesByIDs loads history rows by id.
func (q TaskQueries) StateChangesByIDs(ctx context.Context, ids []string) ([]*domain.TaskStateChange, error) {
	return byIDs[domain.TaskStateChange](ctx, q.Q, "task_state_history", ids)
}

// StateHistoryOfTasks lists the history of tasks, oldest first.
func (q TaskQueries) StateHistoryOfTasks(ctx context.Context, taskIDs []string) ([]*domain.TaskStateChange, error) {
	return byColumn[domain.TaskStateChange](ctx, q.Q, "task_state_history", "task_id", taskIDs, "changed_at, id")
}

// InsertBlock records a block on a task.
func (q TaskQueries) InsertBlock(ctx context.Context, b *domain.TaskBlock) error {
	_, err := q.exec(ctx, `INSERT INTO task_blocks (id, task_id, block_type, reason, blocking_entity_id, created_at)
		VALUES (?, ?, ?, ?, ?, ?)`, b.ID, b.TaskID, b.BlockType, b.Reason, b.BlockingEntityID, b.CreatedAt)
	return err
}

// BlockForUpdate loads a block, locking its row inside a PostgreSQL transaction.
func (q TaskQueries) BlockForUpdate(ctx context.Context, id string) (*domain.TaskBlock, error) {
	var b domain.TaskBlock
	if err := q.get(ctx, &b, `SELECT * FROM task_blocks WHERE id = ?`+q.forUpdate(), id); err != nil {
		return nil, err
	}
	return &b, nil
}

// BlocksByIDs loads blocks by id.
func (q TaskQueries) BlocksByIDs(ctx context.Context, ids []string) ([]*domain.TaskBlock, error) {
	return byIDs[domain.TaskBlock](ctx, q.Q, "task_blocks", ids)
}

// ResolveBlock marks a block resolved.
func (q TaskQueries) ResolveBlock(ctx context.Context, id string, at time.Time, by string, notes *string) error {
	_, err := q.exec(ctx, `UPDATE task_blocks SET resolved_at = ?, resolved_by = ?, resolution_notes = ? WHERE id = ?`, at, by, notes, id)
	return err
}

// CountOpenBlocks counts a task's unresolved blocks.
func (q TaskQueries) CountOpenBlocks(ctx context.Context, taskID string) (int, error) {
	var n int
	err := q.get(ctx, &n, `SELECT COUNT(*) FROM task_blocks WHERE task_id = ? AND resolved_at IS NULL`, taskID)
	return n, err
}

// BlocksOfTasks lists the blocks of tasks, oldest first.
func (q TaskQueries) BlocksOfTasks(ctx context.Context, taskIDs []string) ([]*domain.TaskBlock, error) {
	return byColumn[domain.TaskBlock](ctx, q.Q, "task_blocks", "task_id", taskIDs, "created_at, id")
}

// ReplaceFileImpacts replaces a task's file impacts with impacts.
func (q TaskQueries) ReplaceFileImpacts(ctx context.Context, taskID string, impacts []*domain.TaskFileImpact) error {
	if _, err := q.exec(ctx, `DELETE FROM task_file_impacts WHERE task_id = ?`, taskID); err != nil {
		return err
	}
	return q.InsertFileImpacts(ctx, impacts)
}

// InsertFileImpacts adds the file impacts of a new task, in one statement.
func (q TaskQueries) InsertFileImpacts(ctx context.Context, impacts []*domain.TaskFileImpact) error {
	if len(impacts) == 0 {
		return nil
	}
	return q.laterNamed(ctx, `INSERT INTO task_file_impacts (id, task_id, file_path, operation, confidence, source,
		was_accurate, validated_at, created_at, updated_at) VALUES (:id, :task_id, :file_path, :operation, :confidence,
		:source, :was_accurate, :validated_at, :created_at, :updated_at)`, impacts)
}

// FileImpactsByIDs loads impacts by id.
func (q TaskQueries) FileImpactsByIDs(ctx context.Context, ids []string) ([]*domain.TaskFileImpact, error) {
	return byIDs[domain.TaskFileImpact](ctx, q.Q, "task_file_impacts", ids)
}

// FileImpactsOfTasks lists the file impacts of tasks by path.
func (q TaskQueries) FileImpactsOfTasks(ctx context.Context, taskIDs []string) ([]*domain.TaskFileImpact, error) {
	return byColumn[domain.TaskFileImpact](ctx, q.Q, "task_file_impacts", "task_id", taskIDs, "file_path, operation, id")
}

// ShownFileImpactsOfTasks is FileImpactsOfTasks reading only the columns
// of fields (names of domain.TaskFileImpact's fields), the id and the task:
// the other fields are left zero. For showing impacts whose shown fields
// need only those.
func (q TaskQueries) ShownFileImpactsOfTasks(ctx context.Context, fields, taskIDs []string) ([]*domain.TaskFileImpact, error) {
	return colsByColumn[domain.TaskFileImpact](ctx, q.Q, shownColumns[domain.TaskFileImpact]("", alwaysShownImpact, fields),
		"task_file_impacts", "task_id", taskIDs, "file_path, operation, id")
}

var alwaysShownImpact = []string{"ID", "TaskID"}

// ItemUpdate is a list item's new status and times (SetItemStatus).
type ItemUpdate struct {
	Status      domain.ItemStatus
	StartedAt   *time.Time
	CompletedAt *time.Time
}

// SaveTransition writes a task after lifecycle moves, with their history
// rows and its list item's new status (item nil: unchanged) — one statement
// on PostgreSQL. ErrVersionConflict: the task changed meanwhile.
func (q TaskQueries) SaveTransition(ctx context.Context, t *domain.Task, changes []*domain.TaskStateChange, item *ItemUpdate) error {
	if q.db.dialect != Postgres || len(changes) > 4 {
		for _, c := range changes {
			if err := q.InsertStateChange(ctx, c); err != nil {
				return err
			}
		}
		if item != nil {
			if err := q.Q.Lists.SetItemStatus(ctx, t.ID, item.Status, item.StartedAt, item.CompletedAt); err != nil {
				return err
			}
		}
		return q.UpdateTask(ctx, t)
	}
	var b strings.Builder
	var args []any
	b.WriteString(`WITH `)
	if len(changes) > 0 {
		b.WriteString(`h AS (INSERT INTO task_state_history (id, task_id, execution_run_id, from_status, to_status, reason,
			changed_by, changed_at) VALUES `)
		for i, c := range changes {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(`(?, ?, ?, ?, ?, ?, ?, ?)`)
			args = append(args, c.ID, c.TaskID, c.ExecutionRunID, c.FromStatus, c.ToStatus, c.Reason, c.ChangedBy, c.ChangedAt)
		}
		b.WriteString(`), `)
	}
	if item != nil {
		b.WriteString(`i AS (UPDATE task_list_items SET item_status = ?, started_at = COALESCE(started_at, CAST(? AS TIMESTAMPTZ)),
			completed_at = ? WHERE task_id = ?), `)
		args = append(args, item.Status, item.StartedAt, item.CompletedAt, t.ID)
	}
	update, updateArgs, err := sqlx.Named(updateTaskSQL, t)
	if err != nil {
		return err
	}
	query := ""
	if len(changes) > 0 || item != nil {
		query = strings.TrimSuffix(b.String(), ", ") + " "
	}
	n, err := q.execP(ctx, query+update, append(args, updateArgs...)...)
	if err != nil {
		return err
	}
	if n == 0 {
		return ErrVersionConflict
	}
	t.Version++
	return nil
}
