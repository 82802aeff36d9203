package store

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/taskgraph/taskgraph/internal/domain"
)

// InReadTx runs fn in one read-only transaction, so that its reads see one
// snapshot: REPEATABLE READ on PostgreSQL; on SQLite a deferred transaction,
// whose first read fixes the snapshot (WAL) without taking the write lock.
func (d *DB) InReadTx(ctx context.Context, fn func(q *Q) error) (err error) {
	opts := &sql.TxOptions{ReadOnly: true}
	if d.dialect == Postgres {
		opts.Isolation = sql.LevelRepeatableRead
	}
	tx, err := d.sqlx.BeginTxx(ctx, opts)
	if err != nil {
		return fmt.Errorf("store: begin: %w", mapErr(err))
	}
	d.statements.Add(1)
	defer func() {
		if p := recover(); p != nil {
			_ = tx.Rollback()
			panic(p)
		}
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	// inTx stays false: a read-only transaction takes no row locks.
	if err = fn(newQ(tx, d, false)); err != nil {
		return err
	}
	d.statements.Add(1)
	if err = tx.Commit(); err != nil {
		return fmt.Errorf("store: commit: %w", mapErr(err))
	}
	return nil
}

// TasksOfList lists every task of a list, whatever its status, by display id.
func (q PlanningQueries) TasksOfList(ctx context.Context, listID string) ([]*domain.Task, error) {
	var out []*domain.Task
	err := q.selectx(ctx, &out, `SELECT * FROM tasks WHERE task_list_id = ? ORDER BY display_id`, listID)
	return out, err
}

// FileImpactsOfList lists the file impacts of every task of a list.
func (q PlanningQueries) FileImpactsOfList(ctx context.Context, listID string) ([]*domain.TaskFileImpact, error) {
	var out []*domain.TaskFileImpact
	err := q.selectx(ctx, &out, `SELECT fi.* FROM task_file_impacts fi JOIN tasks t ON t.id = fi.task_id
		WHERE t.task_list_id = ? ORDER BY fi.task_id, fi.file_path, fi.operation`, listID)
	return out, err
}

// PlanningLinksOfList lists the DEPENDS_ON, BLOCKS and CONFLICTS_WITH links that
// start or end at a task of the list.
func (q PlanningQueries) PlanningLinksOfList(ctx context.Context, listID string) ([]*domain.TaskRelationship, error) {
	query, args := in(`SELECT r.* FROM task_relationships r JOIN tasks t ON t.id = r.source_task_id
		WHERE t.task_list_id = ? AND r.relationship_type IN (?)
		UNION
		SELECT r.* FROM task_relationships r JOIN tasks t ON t.id = r.target_task_id
		WHERE t.task_list_id = ? AND r.relationship_type IN (?)
		ORDER BY id`, listID, domain.PlanningLinkTypes, listID, domain.PlanningLinkTypes)
	var out []*domain.TaskRelationship
	err := q.selectx(ctx, &out, query, args...)
	return out, err
}

// OutsideDependenciesOfList lists the tasks outside a list that a task of the
// list waits on: targets of its DEPENDS_ON links, sources of BLOCKS links to it.
func (q PlanningQueries) OutsideDependenciesOfList(ctx context.Context, listID string) ([]*domain.Task, error) {
	var out []*domain.Task
	query, args := in(`SELECT o.* FROM tasks o
		WHERE (o.task_list_id IS NULL OR o.task_list_id <> ?) AND o.id IN (
			SELECT r.target_task_id FROM task_relationships r JOIN tasks t ON t.id = r.source_task_id
			 WHERE t.task_list_id = ? AND r.relationship_type IN (?)
			UNION
			SELECT r.source_task_id FROM task_relationships r JOIN tasks t ON t.id = r.target_task_id
			 WHERE t.task_list_id = ? AND r.relationship_type IN (?))
		ORDER BY o.display_id`, listID, listID, domain.SourceWaitsOnTarget, listID, domain.TargetWaitsOnSource)
	err := q.selectx(ctx, &out, query, args...)
	return out, err
}
