package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/lib/pq"
)

// The floor's reads: each shape with one batched, prepared statement per
// level of the read, answered in Taskgraph's shape with encoding/json.
// Children come in Taskgraph's orders (relationships by creation, file
// impacts by path).

// Prepared once per connection by database/sql.
const (
	floorTasksSQL = `SELECT t.id, t.display_id, t.title, t.status
		FROM task_list_items i JOIN tasks t ON t.id = i.task_id
		WHERE i.task_list_id = $1 ORDER BY i.position LIMIT $2`
	floorRelsSQL = `SELECT id, source_task_id, target_task_id, relationship_type
		FROM task_relationships WHERE source_task_id = ANY($1) ORDER BY created_at, id`
	floorTargetsSQL = `SELECT id, display_id, title, status FROM tasks WHERE id = ANY($1)`
	floorImpactsSQL = `SELECT id, task_id, file_path, operation
		FROM task_file_impacts WHERE task_id = ANY($1) ORDER BY file_path, operation, id`
	floorWideSQL = `SELECT t.id, t.display_id, t.title, t.description, t.category, t.status, t.priority,
		t.priority_score, t.blocks_count, t.is_quick_win, t.risk_level, t.effort, t.owner, t.phase, t.deadline,
		t.actual_effort_minutes, t.execution_log, t.version, t.embedding_model,
		t.created_at, t.updated_at, t.started_at, t.completed_at
		FROM task_list_items i JOIN tasks t ON t.id = i.task_id
		WHERE i.task_list_id = $1 ORDER BY i.position LIMIT $2`
)

// The answers' objects. Ids are left out (omitempty) where a shape does
// not ask for them; a nil list pointer is a field the shape does not ask
// for, an empty one an empty list.
type (
	floorTask struct {
		ID            string         `json:"id,omitempty"`
		DisplayID     string         `json:"displayId"`
		Title         string         `json:"title"`
		Status        string         `json:"status"`
		Relationships *[]floorRel    `json:"relationships,omitempty"`
		FileImpacts   *[]floorImpact `json:"fileImpacts,omitempty"`
		rowID         string
	}
	floorRel struct {
		ID     string     `json:"id,omitempty"`
		Type   string     `json:"type"`
		Target *floorTask `json:"target"`
	}
	floorImpact struct {
		ID        string `json:"id,omitempty"`
		FilePath  string `json:"filePath"`
		Operation string `json:"operation"`
	}
	floorWideTask struct {
		ID                  string          `json:"id"`
		DisplayID           string          `json:"displayId"`
		Title               string          `json:"title"`
		Description         string          `json:"description"`
		Category            string          `json:"category"`
		Status              string          `json:"status"`
		Priority            string          `json:"priority"`
		PriorityScore       int             `json:"priorityScore"`
		BlocksCount         int             `json:"blocksCount"`
		IsQuickWin          bool            `json:"isQuickWin"`
		RiskLevel           string          `json:"riskLevel"`
		Effort              *string         `json:"effort"`
		Owner               *string         `json:"owner"`
		Phase               *string         `json:"phase"`
		Deadline            *time.Time      `json:"deadline"`
		ActualEffortMinutes *int            `json:"actualEffortMinutes"`
		ExecutionLog        json.RawMessage `json:"executionLog"`
		Version             int             `json:"version"`
		EmbeddingModel      *string         `json:"embeddingModel"`
		CreatedAt           time.Time       `json:"createdAt"`
		UpdatedAt           time.Time       `json:"updatedAt"`
		StartedAt           *time.Time      `json:"startedAt"`
		CompletedAt         *time.Time      `json:"completedAt"`
	}
)

// floorAnswer is {"data":{"taskList":{"tasks":{"nodes":[...]}}}}.
func floorAnswer[T any](nodes []T) any {
	type tasks struct {
		Nodes []T `json:"nodes"`
	}
	type list struct {
		Tasks tasks `json:"tasks"`
	}
	type data struct {
		TaskList list `json:"taskList"`
	}
	return struct {
		Data data `json:"data"`
	}{data{list{tasks{nodes}}}}
}

// readShape answers a read shape by its operation name.
func (f *floorServer) readShape(ctx context.Context, op, listID string, first int) (any, error) {
	if first < 0 || first > 1000 {
		return nil, fmt.Errorf("first must be 0..1000")
	}
	switch op {
	case "ReadFull", "ReadLight":
		ids := op == "ReadFull"
		tasks, err := f.taskRows(ctx, listID, first)
		if err != nil {
			return nil, err
		}
		targets, err := f.relationships(ctx, tasks, ids)
		if err != nil {
			return nil, err
		}
		return floorAnswer(tasks), f.fileImpacts(ctx, append(tasks, targets...), ids)
	case "ReadDeep":
		tasks, err := f.taskRows(ctx, listID, first)
		if err != nil {
			return nil, err
		}
		targets, err := f.relationships(ctx, tasks, true)
		if err != nil {
			return nil, err
		}
		_, err = f.relationships(ctx, targets, true)
		return floorAnswer(tasks), err
	case "ReadWide":
		tasks, err := f.wide(ctx, listID, first)
		return floorAnswer(tasks), err
	}
	return nil, fmt.Errorf("unknown operation %q", op)
}

// taskRows is the first statement: the list's tasks in order.
func (f *floorServer) taskRows(ctx context.Context, listID string, first int) ([]*floorTask, error) {
	rows, err := f.tasks.QueryContext(ctx, listID, first)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	tasks := make([]*floorTask, 0, first)
	for rows.Next() {
		t := &floorTask{}
		if err := rows.Scan(&t.rowID, &t.DisplayID, &t.Title, &t.Status); err != nil {
			return nil, err
		}
		t.ID = t.rowID
		tasks = append(tasks, t)
	}
	return tasks, rows.Err()
}

// relationships gives every source its outgoing relationships and their
// targets (two statements: the relationships, then the targets), and
// returns the targets, one object per relationship row. A task that is
// several sources (the target of several relationships) gets them in each.
func (f *floorServer) relationships(ctx context.Context, sources []*floorTask, ids bool) ([]*floorTask, error) {
	byID := make(map[string][]*floorTask, len(sources))
	keys := make([]string, 0, len(sources))
	for _, s := range sources {
		empty := []floorRel{}
		s.Relationships = &empty
		if byID[s.rowID] == nil {
			keys = append(keys, s.rowID)
		}
		byID[s.rowID] = append(byID[s.rowID], s)
	}
	if len(keys) == 0 {
		return nil, nil
	}
	rows, err := f.rels.QueryContext(ctx, pq.Array(keys))
	if err != nil {
		return nil, err
	}
	type relRow struct{ id, source, target, typ string }
	var rels []relRow
	var targetIDs []string
	seen := map[string]bool{}
	for rows.Next() {
		var r relRow
		if err := rows.Scan(&r.id, &r.source, &r.target, &r.typ); err != nil {
			rows.Close()
			return nil, err
		}
		rels = append(rels, r)
		if !seen[r.target] {
			seen[r.target] = true
			targetIDs = append(targetIDs, r.target)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(rels) == 0 {
		return nil, nil
	}
	found := make(map[string]floorTask, len(targetIDs))
	if rows, err = f.targets.QueryContext(ctx, pq.Array(targetIDs)); err != nil {
		return nil, err
	}
	for rows.Next() {
		var t floorTask
		if err := rows.Scan(&t.rowID, &t.DisplayID, &t.Title, &t.Status); err != nil {
			rows.Close()
			return nil, err
		}
		found[t.rowID] = t
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	targets := make([]*floorTask, 0, len(rels))
	for _, r := range rels {
		srcs, row := byID[r.source], found[r.target]
		if len(srcs) == 0 || row.rowID == "" {
			return nil, fmt.Errorf("relationship %s: its task is missing", r.id)
		}
		tgt := &row
		rel := floorRel{Type: r.typ, Target: tgt}
		if ids {
			rel.ID, tgt.ID = r.id, tgt.rowID
		}
		for _, src := range srcs {
			*src.Relationships = append(*src.Relationships, rel)
		}
		targets = append(targets, tgt)
	}
	return targets, nil
}

// fileImpacts gives every task its file impacts, in one statement.
func (f *floorServer) fileImpacts(ctx context.Context, tasks []*floorTask, ids bool) error {
	byID := make(map[string][]*floorTask, len(tasks))
	keys := make([]string, 0, len(tasks))
	for _, t := range tasks {
		empty := []floorImpact{}
		t.FileImpacts = &empty
		if byID[t.rowID] == nil {
			keys = append(keys, t.rowID)
		}
		byID[t.rowID] = append(byID[t.rowID], t)
	}
	if len(keys) == 0 {
		return nil
	}
	rows, err := f.impacts.QueryContext(ctx, pq.Array(keys))
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var im floorImpact
		var id, taskID string
		if err := rows.Scan(&id, &taskID, &im.FilePath, &im.Operation); err != nil {
			return err
		}
		if ids {
			im.ID = id
		}
		for _, t := range byID[taskID] {
			*t.FileImpacts = append(*t.FileImpacts, im)
		}
	}
	return rows.Err()
}

// wide is the wide shape: one statement.
func (f *floorServer) wide(ctx context.Context, listID string, first int) ([]*floorWideTask, error) {
	rows, err := f.wideRows.QueryContext(ctx, listID, first)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make([]*floorWideTask, 0, first)
	for rows.Next() {
		t := &floorWideTask{}
		var log []byte
		var effort, owner, phase, model sql.NullString
		var deadline, started, completed sql.NullTime
		var minutes sql.NullInt64
		if err := rows.Scan(&t.ID, &t.DisplayID, &t.Title, &t.Description, &t.Category, &t.Status, &t.Priority,
			&t.PriorityScore, &t.BlocksCount, &t.IsQuickWin, &t.RiskLevel, &effort, &owner, &phase, &deadline,
			&minutes, &log, &t.Version, &model, &t.CreatedAt, &t.UpdatedAt, &started, &completed); err != nil {
			return nil, err
		}
		t.Effort, t.Owner, t.Phase, t.EmbeddingModel = nullString(effort), nullString(owner), nullString(phase), nullString(model)
		t.Deadline, t.StartedAt, t.CompletedAt = nullTime(deadline), nullTime(started), nullTime(completed)
		if minutes.Valid {
			m := int(minutes.Int64)
			t.ActualEffortMinutes = &m
		}
		t.ExecutionLog = json.RawMessage("null")
		if log != nil {
			t.ExecutionLog = log
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

func nullString(s sql.NullString) *string {
	if !s.Valid {
		return nil
	}
	return &s.String
}

func nullTime(t sql.NullTime) *time.Time {
	if !t.Valid {
		return nil
	}
	return &t.Time
}
