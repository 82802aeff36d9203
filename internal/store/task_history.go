package store

import (
	"context"

	"github.com/taskgraph/taskgraph/internal/domain"
)

// A task's execution history, read from the task's end (Task.executions,
// Task.testResults) and from its wave's (Wave.agents, Wave.executions):
// one statement for every parent of a level.

func executionPageQuery(tasks []string, page domain.PageArgs) *pageQuery[*domain.TaskExecution] {
	return &pageQuery[*domain.TaskExecution]{
		selectCols: "e.*", from: "task_executions e", idCol: "e.id",
		key:       sortKey{col: "e.started_at", kind: keyTime, desc: true},
		keyOf:     func(e *domain.TaskExecution) any { return e.StartedAt },
		idOf:      func(e *domain.TaskExecution) string { return e.ID },
		parentCol: "e.task_id", parents: tasks,
		parentOf: func(e *domain.TaskExecution) string { return e.TaskID },
		page:     page,
	}
}

// ExecutionsOfTasks pages the executions of tasks, newest first (ties by
// id), one page per task in one statement.
func (q RunQueries) ExecutionsOfTasks(ctx context.Context, tasks []string, page domain.PageArgs) (map[string]domain.Page[*domain.TaskExecution], error) {
	return executionPageQuery(tasks, page).fetch(ctx, q.Q)
}

// CountExecutionsOfTasks counts the executions of each task.
func (q RunQueries) CountExecutionsOfTasks(ctx context.Context, tasks []string) (map[string]int, error) {
	return executionPageQuery(tasks, domain.PageArgs{}).count(ctx, q.Q)
}

func testResultPageQuery(tasks []string, page domain.PageArgs) *pageQuery[*domain.TaskTestResult] {
	return &pageQuery[*domain.TaskTestResult]{
		selectCols: "r.*", from: "task_test_results r", idCol: "r.id",
		key:       sortKey{col: "r.executed_at", kind: keyTime, desc: true},
		keyOf:     func(r *domain.TaskTestResult) any { return r.ExecutedAt },
		idOf:      func(r *domain.TaskTestResult) string { return r.ID },
		parentCol: "r.task_id", parents: tasks,
		parentOf: func(r *domain.TaskTestResult) string { return r.TaskID },
		page:     page,
	}
}

// TestResultsOfTasks pages the test results of tasks, newest first (ties by
// id), one page per task in one statement.
func (q RunQueries) TestResultsOfTasks(ctx context.Context, tasks []string, page domain.PageArgs) (map[string]domain.Page[*domain.TaskTestResult], error) {
	return testResultPageQuery(tasks, page).fetch(ctx, q.Q)
}

// CountTestResultsOfTasks counts the test results of each task.
func (q RunQueries) CountTestResultsOfTasks(ctx context.Context, tasks []string) (map[string]int, error) {
	return testResultPageQuery(tasks, domain.PageArgs{}).count(ctx, q.Q)
}

// AgentsOfWaves lists the agents of waves in spawn order.
func (q RunQueries) AgentsOfWaves(ctx context.Context, waveIDs []string) ([]*domain.BuildAgent, error) {
	return byColumn[domain.BuildAgent](ctx, q.Q, "build_agents", "wave_id", waveIDs, "spawned_at, id")
}

// ExecutionsOfWaves lists the executions of waves in start order.
func (q RunQueries) ExecutionsOfWaves(ctx context.Context, waveIDs []string) ([]*domain.TaskExecution, error) {
	return byColumn[domain.TaskExecution](ctx, q.Q, "task_executions", "wave_id", waveIDs, "started_at, id")
}

// SetItemNotes keeps an agent's notes on the list item of its task.
func (q ListQueries) SetItemNotes(ctx context.Context, taskID string, notes string) error {
	_, err := q.execP(ctx, `UPDATE task_list_items SET execution_notes = ? WHERE task_id = ?`, notes, taskID)
	return err
}

// SkipItem marks the list item of a task its run skipped.
func (q ListQueries) SkipItem(ctx context.Context, taskID string) error {
	_, err := q.execP(ctx, `UPDATE task_list_items SET item_status = ? WHERE task_id = ?`, domain.ItemSkipped, taskID)
	return err
}
