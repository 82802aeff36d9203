package store

import (
	"context"
	"strconv"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/taskgraph/taskgraph/internal/domain"
)

// GroupingQueries are the grouping domain's statements: weights, suggestions,
// task agents and the background grouping's cursors.
type GroupingQueries struct{ *Q }

// WeightsOfProjects loads the stored weights of projects (absent: defaults).
func (q GroupingQueries) WeightsOfProjects(ctx context.Context, projectIDs []string) ([]*domain.GroupingWeightsRow, error) {
	return byColumn[domain.GroupingWeightsRow](ctx, q.Q, "grouping_criteria_weights", "project_id", projectIDs, "project_id")
}

// UpsertWeights stores a project's weights.
func (q GroupingQueries) UpsertWeights(ctx context.Context, r *domain.GroupingWeightsRow) error {
	_, err := q.exec(ctx, `INSERT INTO grouping_criteria_weights (id, project_id, file_overlap_weight, dependency_weight,
		category_weight, description_similarity_weight, component_weight, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (project_id) DO UPDATE SET file_overlap_weight = excluded.file_overlap_weight,
		dependency_weight = excluded.dependency_weight, category_weight = excluded.category_weight,
		description_similarity_weight = excluded.description_similarity_weight,
		component_weight = excluded.component_weight, updated_at = excluded.updated_at`,
		r.ID, r.ProjectID, r.FileOverlap, r.Dependency, r.Category, r.DescriptionSimilarity, r.Component, r.CreatedAt, r.UpdatedAt)
	return err
}

// CandidateTasks lists the project's tasks in no list whose status is not
// one of excluded, at most limit of them, by display order: only what
// grouping reads — the text signature and embedding, not the description (a task written
// before signatures existed brings its description's first
// domain.UnsignedTextPrefix characters instead).
func (q GroupingQueries) CandidateTasks(ctx context.Context, projectID string, excluded []domain.TaskStatus, limit int) ([]*domain.Task, error) {
	query, args := in(`SELECT id, display_id, display_sort, project_id, task_list_id, title, category, status,
		affected_files, text_signature, version, embedding, embedding_model,
		CASE WHEN text_signature IS NULL THEN substr(description, 1, `+strconv.Itoa(domain.UnsignedTextPrefix)+`) ELSE '' END AS description
		FROM tasks WHERE project_id = ? AND task_list_id IS NULL AND status NOT IN (?)
		ORDER BY display_sort, id LIMIT `+strconv.Itoa(limit), projectID, excluded)
	var out []*domain.Task
	return out, q.selectx(ctx, &out, query, args...)
}

// LinksAmong lists the relationships of the given types whose both ends are
// in tasks.
func (q GroupingQueries) LinksAmong(ctx context.Context, taskIDs []string, types []domain.RelationshipType) ([]*domain.TaskRelationship, error) {
	if len(taskIDs) == 0 {
		return nil, nil
	}
	var out []*domain.TaskRelationship
	err := inChunks(taskIDs, func(chunk []string) error {
		query, args := in(`SELECT * FROM task_relationships WHERE source_task_id IN (?) AND relationship_type IN (?) ORDER BY id`, chunk, types)
		var rows []*domain.TaskRelationship
		if err := q.selectx(ctx, &rows, query, args...); err != nil {
			return err
		}
		out = append(out, rows...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	keep := make(map[string]bool, len(taskIDs))
	for _, id := range taskIDs {
		keep[id] = true
	}
	filtered := out[:0]
	for _, r := range out {
		if keep[r.TargetTaskID] {
			filtered = append(filtered, r)
		}
	}
	return filtered, nil
}

// ImpactPathsOf lists (task_id, file_path) of the tasks' file impacts.
func (q GroupingQueries) ImpactPathsOf(ctx context.Context, taskIDs []string) (map[string][]string, error) {
	out := map[string][]string{}
	err := inChunks(taskIDs, func(chunk []string) error {
		query, args := in(`SELECT task_id, file_path FROM task_file_impacts WHERE task_id IN (?) ORDER BY task_id, file_path`, chunk)
		var rows []struct {
			TaskID string `db:"task_id"`
			Path   string `db:"file_path"`
		}
		if err := q.selectx(ctx, &rows, query, args...); err != nil {
			return err
		}
		for _, r := range rows {
			out[r.TaskID] = append(out[r.TaskID], r.Path)
		}
		return nil
	})
	return out, err
}

// PendingSetExists reports whether a PENDING suggestion of the task set exists.
func (q GroupingQueries) PendingSetExists(ctx context.Context, projectID, key string) (bool, error) {
	var n int
	err := q.get(ctx, &n, `SELECT COUNT(*) FROM grouping_suggestions WHERE project_id = ? AND task_set_key = ? AND status = ?`,
		projectID, key, domain.SuggestionPending)
	return n > 0, err
}

// InsertSuggestion writes a suggestion.
func (q GroupingQueries) InsertSuggestion(ctx context.Context, s *domain.GroupingSuggestion) error {
	_, err := q.namedExec(ctx, `INSERT INTO grouping_suggestions (id, project_id, status, suggested_name, suggested_tasks,
		task_set_key, grouping_reason, similarity_score, file_overlap, dependency, category, description_similarity, component,
		triggered_by, trigger_task_id, created_task_list_id, task_agent_id, resolved_by, resolved_at, expires_at, created_at)
		VALUES (:id, :project_id, :status, :suggested_name, :suggested_tasks, :task_set_key, :grouping_reason, :similarity_score,
		:file_overlap, :dependency, :category, :description_similarity, :component, :triggered_by, :trigger_task_id,
		:created_task_list_id, :task_agent_id, :resolved_by, :resolved_at, :expires_at, :created_at)`, s)
	return err
}

// SuggestionForUpdate loads a suggestion under a row lock.
func (q GroupingQueries) SuggestionForUpdate(ctx context.Context, id string) (*domain.GroupingSuggestion, error) {
	var s domain.GroupingSuggestion
	if err := q.get(ctx, &s, `SELECT * FROM grouping_suggestions WHERE id = ?`+q.forUpdate(), id); err != nil {
		return nil, err
	}
	return &s, nil
}

// ResolveSuggestion writes a suggestion's resolution.
func (q GroupingQueries) ResolveSuggestion(ctx context.Context, s *domain.GroupingSuggestion) error {
	_, err := q.exec(ctx, `UPDATE grouping_suggestions SET status = ?, created_task_list_id = ?, resolved_by = ?, resolved_at = ?
		WHERE id = ?`, s.Status, s.CreatedTaskListID, s.ResolvedBy, s.ResolvedAt, s.ID)
	return err
}

// SuggestionsByIDs loads suggestions by id.
func (q GroupingQueries) SuggestionsByIDs(ctx context.Context, ids []string) ([]*domain.GroupingSuggestion, error) {
	return byIDs[domain.GroupingSuggestion](ctx, q.Q, "grouping_suggestions", ids)
}

func suggestionPage(statuses []domain.GroupingSuggestionStatus, page domain.PageArgs) *pageQuery[*domain.GroupingSuggestion] {
	pq := createdPage("g", "grouping_suggestions", func(s *domain.GroupingSuggestion) time.Time { return s.CreatedAt },
		func(s *domain.GroupingSuggestion) string { return s.ID }, page)
	if len(statuses) > 0 {
		cond, args := in("g.status IN (?)", statuses)
		pq.filter(cond, args...)
	}
	return pq
}

// SuggestionsByProjects pages suggestions per project, oldest first.
func (q GroupingQueries) SuggestionsByProjects(ctx context.Context, projects []string, statuses []domain.GroupingSuggestionStatus, page domain.PageArgs) (map[string]domain.Page[*domain.GroupingSuggestion], error) {
	return childPages(ctx, q.Q, suggestionPage(statuses, page), "g.project_id", projects,
		func(s *domain.GroupingSuggestion) string { return s.ProjectID })
}

// CountSuggestionsByProjects counts suggestions per project.
func (q GroupingQueries) CountSuggestionsByProjects(ctx context.Context, projects []string, statuses []domain.GroupingSuggestionStatus) (map[string]int, error) {
	return childCounts(ctx, q.Q, suggestionPage(statuses, domain.PageArgs{}), "g.project_id", projects)
}

// ExpiredSuggestionsForUpdate takes up to limit PENDING suggestions past
// their expiry by the database clock, skipping rows another replica holds.
func (q GroupingQueries) ExpiredSuggestionsForUpdate(ctx context.Context, now time.Time, limit int) ([]*domain.GroupingSuggestion, error) {
	lock := ""
	if q.db.dialect == Postgres {
		lock = " FOR UPDATE SKIP LOCKED"
	}
	var out []*domain.GroupingSuggestion
	err := q.selectx(ctx, &out, `SELECT * FROM grouping_suggestions WHERE status = ? AND expires_at <= ?
		ORDER BY expires_at, id LIMIT `+strconv.Itoa(limit)+lock, domain.SuggestionPending, now)
	return out, err
}

// CursorForUpdate takes the project's grouping cursor (created at 0 when
// missing), or returns ErrNotFound when another replica holds it.
func (q GroupingQueries) CursorForUpdate(ctx context.Context, projectID string) (lastSeq int64, lastLinkAt *time.Time, err error) {
	if _, err := q.exec(ctx, `INSERT INTO grouping_cursors (project_id, last_seq, updated_at) VALUES (?, 0, ?)
		ON CONFLICT (project_id) DO NOTHING`, projectID, q.db.Clock()); err != nil {
		return 0, nil, err
	}
	lock := ""
	if q.db.dialect == Postgres {
		lock = " FOR UPDATE SKIP LOCKED"
	}
	var row struct {
		LastSeq    int64      `db:"last_seq"`
		LastLinkAt *time.Time `db:"last_link_at"`
	}
	if err := q.get(ctx, &row, `SELECT last_seq, last_link_at FROM grouping_cursors WHERE project_id = ?`+lock, projectID); err != nil {
		return 0, nil, err
	}
	return row.LastSeq, row.LastLinkAt, nil
}

// AdvanceCursor records how far the project's triggers were handled.
func (q GroupingQueries) AdvanceCursor(ctx context.Context, projectID string, lastSeq int64, lastLinkAt *time.Time) error {
	_, err := q.exec(ctx, `UPDATE grouping_cursors SET last_seq = ?, last_link_at = ?, updated_at = ? WHERE project_id = ?`,
		lastSeq, lastLinkAt, q.db.Clock(), projectID)
	return err
}

// EventsAfter lists the project's events of the given types after seq, and
// the project's last event number.
func (q GroupingQueries) EventsAfter(ctx context.Context, projectID string, seq int64, types []domain.ExecutionEventType) ([]*domain.Event, int64, error) {
	var last int64
	if err := q.get(ctx, &last, `SELECT COALESCE(MAX(seq), 0) FROM events WHERE project_id = ?`, projectID); err != nil {
		return nil, 0, err
	}
	query, args := in(`SELECT * FROM events WHERE project_id = ? AND seq > ? AND seq <= ? AND type IN (?) ORDER BY seq`,
		projectID, seq, last, types)
	var out []*domain.Event
	return out, last, q.selectx(ctx, &out, query, args...)
}

// LinksCreatedAfter lists the project's links of the given types created
// after at (all of them when at is nil), oldest first.
func (q GroupingQueries) LinksCreatedAfter(ctx context.Context, projectID string, at *time.Time, types []domain.RelationshipType) ([]*domain.TaskRelationship, error) {
	cond, arg := "", []any{projectID, types}
	if at != nil {
		cond = " AND r.created_at > ?"
		arg = append(arg, *at)
	}
	query, args := in(`SELECT r.* FROM task_relationships r JOIN tasks t ON t.id = r.source_task_id
		WHERE t.project_id = ? AND r.relationship_type IN (?)`+cond+` ORDER BY r.created_at, r.id`, arg...)
	var out []*domain.TaskRelationship
	return out, q.selectx(ctx, &out, query, args...)
}

// SeeLinks records links as seen by the background grouping.
func (q GroupingQueries) SeeLinks(ctx context.Context, projectID string, links []*domain.TaskRelationship) error {
	for _, r := range links {
		if _, err := q.exec(ctx, `INSERT INTO grouping_seen_links (relationship_id, project_id, source_task_id, target_task_id)
			VALUES (?, ?, ?, ?) ON CONFLICT (relationship_id) DO NOTHING`, r.ID, projectID, r.SourceTaskID, r.TargetTaskID); err != nil {
			return err
		}
	}
	return nil
}

// TakeRemovedLinks returns the seen links of the project that no longer
// exist, and forgets them.
func (q GroupingQueries) TakeRemovedLinks(ctx context.Context, projectID string) ([]*domain.TaskRelationship, error) {
	var rows []struct {
		ID     string `db:"relationship_id"`
		Source string `db:"source_task_id"`
		Target string `db:"target_task_id"`
	}
	if err := q.selectx(ctx, &rows, `SELECT s.relationship_id, s.source_task_id, s.target_task_id FROM grouping_seen_links s
		WHERE s.project_id = ? AND NOT EXISTS (SELECT 1 FROM task_relationships r WHERE r.id = s.relationship_id)
		ORDER BY s.relationship_id`, projectID); err != nil {
		return nil, err
	}
	out := make([]*domain.TaskRelationship, len(rows))
	for i, r := range rows {
		if _, err := q.exec(ctx, `DELETE FROM grouping_seen_links WHERE relationship_id = ?`, r.ID); err != nil {
			return nil, err
		}
		out[i] = &domain.TaskRelationship{ID: r.ID, SourceTaskID: r.Source, TargetTaskID: r.Target}
	}
	return out, nil
}

// ProjectsWithGroupingWork lists projects with events or links their
// grouping cursor has not reached. It is background polling, so its
// statements are not counted in Statements().
func (d *DB) ProjectsWithGroupingWork(ctx context.Context, limit int) ([]string, error) {
	var out []string
	err := sqlx.SelectContext(ctx, d.sqlx, &out, d.sqlx.Rebind(`SELECT p.id FROM projects p
		LEFT JOIN grouping_cursors c ON c.project_id = p.id
		WHERE EXISTS (SELECT 1 FROM events e WHERE e.project_id = p.id AND e.seq > COALESCE(c.last_seq, 0))
		   OR EXISTS (SELECT 1 FROM task_relationships r JOIN tasks t ON t.id = r.source_task_id
		              WHERE t.project_id = p.id AND (c.last_link_at IS NULL OR r.created_at > c.last_link_at))
		   OR EXISTS (SELECT 1 FROM grouping_seen_links s WHERE s.project_id = p.id
		              AND NOT EXISTS (SELECT 1 FROM task_relationships r WHERE r.id = s.relationship_id))
		ORDER BY p.id LIMIT `+strconv.Itoa(limit)))
	return out, mapErr(err)
}

// Task agents.

// InsertTaskAgent writes a task agent instance.
func (q GroupingQueries) InsertTaskAgent(ctx context.Context, a *domain.TaskAgentInstance) error {
	_, err := q.namedExec(ctx, `INSERT INTO task_agent_instances (id, project_id, task_list_id, is_evaluation_queue,
		telegram_channel_id, telegram_bot_token, status, last_heartbeat_at, error_count, last_error, tasks_processed,
		suggestions_made, questions_asked, created_at, updated_at, terminated_at)
		VALUES (:id, :project_id, :task_list_id, :is_evaluation_queue, :telegram_channel_id, :telegram_bot_token, :status,
		:last_heartbeat_at, :error_count, :last_error, :tasks_processed, :suggestions_made, :questions_asked, :created_at,
		:updated_at, :terminated_at)`, a)
	return err
}

// TaskAgentForUpdate loads a task agent under a row lock.
func (q GroupingQueries) TaskAgentForUpdate(ctx context.Context, id string) (*domain.TaskAgentInstance, error) {
	var a domain.TaskAgentInstance
	if err := q.get(ctx, &a, `SELECT * FROM task_agent_instances WHERE id = ?`+q.forUpdate(), id); err != nil {
		return nil, err
	}
	return &a, nil
}

// UpdateTaskAgent writes a task agent's state and counters.
func (q GroupingQueries) UpdateTaskAgent(ctx context.Context, a *domain.TaskAgentInstance) error {
	_, err := q.namedExec(ctx, `UPDATE task_agent_instances SET status = :status, last_heartbeat_at = :last_heartbeat_at,
		error_count = :error_count, last_error = :last_error, tasks_processed = :tasks_processed,
		updated_at = :updated_at, terminated_at = :terminated_at WHERE id = :id`, a)
	return err
}

// CountSuggestionMade adds one to a task agent's suggestionsMade.
func (q GroupingQueries) CountSuggestionMade(ctx context.Context, agentID string, n int) error {
	_, err := q.exec(ctx, `UPDATE task_agent_instances SET suggestions_made = suggestions_made + ? WHERE id = ?`, n, agentID)
	return err
}

// CountQuestionAsked adds one to a task agent's questionsAsked.
func (q GroupingQueries) CountQuestionAsked(ctx context.Context, agentID string) error {
	_, err := q.exec(ctx, `UPDATE task_agent_instances SET questions_asked = questions_asked + 1 WHERE id = ?`, agentID)
	return err
}

// TaskAgentsByIDs loads task agents by id.
func (q GroupingQueries) TaskAgentsByIDs(ctx context.Context, ids []string) ([]*domain.TaskAgentInstance, error) {
	return byIDs[domain.TaskAgentInstance](ctx, q.Q, "task_agent_instances", ids)
}

// TaskAgentsOfProjects lists projects' task agents, oldest first.
func (q GroupingQueries) TaskAgentsOfProjects(ctx context.Context, projectIDs []string) ([]*domain.TaskAgentInstance, error) {
	return byColumn[domain.TaskAgentInstance](ctx, q.Q, "task_agent_instances", "project_id", projectIDs, "created_at, id")
}

// SilentTaskAgentsForUpdate takes up to limit live task agents silent since
// before cutoff (their last heartbeat, or their creation), skipping rows
// another replica holds.
func (q GroupingQueries) SilentTaskAgentsForUpdate(ctx context.Context, cutoff time.Time, limit int) ([]*domain.TaskAgentInstance, error) {
	lock := ""
	if q.db.dialect == Postgres {
		lock = " FOR UPDATE SKIP LOCKED"
	}
	var out []*domain.TaskAgentInstance
	err := q.selectx(ctx, &out, `SELECT * FROM task_agent_instances WHERE status <> ?
		AND COALESCE(last_heartbeat_at, created_at) < ? ORDER BY id LIMIT `+strconv.Itoa(limit)+lock,
		domain.TaskAgentTerminated, cutoff)
	return out, err
}
