package store

import (
	"context"

	"github.com/taskgraph/taskgraph/internal/domain"
)

// InsertRelationship inserts a link between two tasks.
func (q TaskQueries) InsertRelationship(ctx context.Context, r *domain.TaskRelationship) error {
	_, err := q.exec(ctx, `INSERT INTO task_relationships (id, source_task_id, target_task_id, relationship_type, strength, notes, created_at, created_by)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, r.ID, r.SourceTaskID, r.TargetTaskID, r.Type, r.Strength, r.Notes, r.CreatedAt, r.CreatedByID)
	return err
}

// RelationshipByID loads one link.
func (q TaskQueries) RelationshipByID(ctx context.Context, id string) (*domain.TaskRelationship, error) {
	var r domain.TaskRelationship
	if err := q.get(ctx, &r, `SELECT * FROM task_relationships WHERE id = ?`, id); err != nil {
		return nil, err
	}
	return &r, nil
}

// RelationshipsByIDs loads links by id.
func (q TaskQueries) RelationshipsByIDs(ctx context.Context, ids []string) ([]*domain.TaskRelationship, error) {
	return byIDs[domain.TaskRelationship](ctx, q.Q, "task_relationships", ids)
}

// DeleteRelationship removes a link.
func (q TaskQueries) DeleteRelationship(ctx context.Context, id string) error {
	_, err := q.exec(ctx, `DELETE FROM task_relationships WHERE id = ?`, id)
	return err
}

// RelationshipsOfTasks lists every link that starts or ends at one of the tasks,
// oldest first.
func (q TaskQueries) RelationshipsOfTasks(ctx context.Context, taskIDs []string) ([]*domain.TaskRelationship, error) {
	return q.relationships(ctx, "*", domain.DirectionBoth, taskIDs)
}

// RelationshipsFromTasks lists the links that start at one of the tasks
// (their outgoing links), oldest first.
func (q TaskQueries) RelationshipsFromTasks(ctx context.Context, taskIDs []string) ([]*domain.TaskRelationship, error) {
	return q.relationships(ctx, "*", domain.DirectionOutgoing, taskIDs)
}

// RelationshipsToTasks lists the links that end at one of the tasks (their
// incoming links), oldest first.
func (q TaskQueries) RelationshipsToTasks(ctx context.Context, taskIDs []string) ([]*domain.TaskRelationship, error) {
	return q.relationships(ctx, "*", domain.DirectionIncoming, taskIDs)
}

// ShownRelationshipsOfTasks lists the links of the tasks in direction dir
// (as the three reads above), reading only the columns of fields (names of
// domain.TaskRelationship's fields), the id, the ends and the type: the
// other fields are left zero. For showing links whose shown fields need
// only those.
func (q TaskQueries) ShownRelationshipsOfTasks(ctx context.Context, fields []string, dir domain.RelationshipDirection,
	taskIDs []string,
) ([]*domain.TaskRelationship, error) {
	return q.relationships(ctx, shownColumns[domain.TaskRelationship]("", alwaysShownRelationship, fields), dir, taskIDs)
}

var alwaysShownRelationship = []string{"ID", "SourceTaskID", "TargetTaskID", "Type"}

func (q TaskQueries) relationships(ctx context.Context, cols string, dir domain.RelationshipDirection,
	taskIDs []string,
) ([]*domain.TaskRelationship, error) {
	if len(taskIDs) == 0 {
		return nil, nil
	}
	where, lists := "source_task_id IN (?)", 1
	switch dir {
	case domain.DirectionOutgoing:
	case domain.DirectionIncoming:
		where = "target_task_id IN (?)"
	default:
		where, lists = "source_task_id IN (?) OR target_task_id IN (?)", 2
	}
	var out []*domain.TaskRelationship
	err := q.selectKeys(ctx, &out, `SELECT `+cols+` FROM task_relationships WHERE `+where+` ORDER BY created_at, id`, lists, taskIDs)
	return out, err
}

// DeleteLink removes the link of a type between two tasks, if there is one.
func (q TaskQueries) DeleteLink(ctx context.Context, source, target string, typ domain.RelationshipType) error {
	_, err := q.exec(ctx, `DELETE FROM task_relationships WHERE source_task_id = ? AND target_task_id = ? AND relationship_type = ?`,
		source, target, typ)
	return err
}

// SetMirroredRef sets tasks.parent_task_id or supersedes_task_id to mirror a new
// SUBTASK_OF or SUPERSEDES link; it reports false, changing nothing, when the
// task already has one.
func (q TaskQueries) SetMirroredRef(ctx context.Context, source, target string, typ domain.RelationshipType) (bool, error) {
	col := "parent_task_id"
	if typ == domain.RelSupersedes {
		col = "supersedes_task_id"
	}
	res, err := q.exec(ctx, `UPDATE tasks SET `+col+` = ?, version = version + 1 WHERE id = ? AND `+col+` IS NULL`, target, source)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// ClearMirroredRef clears tasks.parent_task_id or supersedes_task_id when the
// SUBTASK_OF or SUPERSEDES link it mirrors is removed.
func (q TaskQueries) ClearMirroredRef(ctx context.Context, source, target string, typ domain.RelationshipType) error {
	col := "parent_task_id"
	if typ == domain.RelSupersedes {
		col = "supersedes_task_id"
	}
	_, err := q.exec(ctx, `UPDATE tasks SET `+col+` = NULL, version = version + 1 WHERE id = ? AND `+col+` = ?`, source, target)
	return err
}
