package service

import (
	"context"

	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/store"
)

// The execution history, read from each of its ends: a task's executions,
// test results and live agent, the wave of an execution or agent and a
// wave's agents and executions. Batched per level; the parent was
// authorized by the query that reached it.

// ExecutionsOfTask pages a task's executions, newest first.
func (s *Runs) ExecutionsOfTask(ctx context.Context, taskID string, page domain.PageArgs) (domain.Page[*domain.TaskExecution], error) {
	return app.NestedPage(ctx, s.db, "Task.executions", page, taskID,
		func(ctx context.Context, q *store.Q, parents []string) (map[string]domain.Page[*domain.TaskExecution], error) {
			return q.Runs.ExecutionsOfTasks(ctx, parents, page)
		},
		func(ctx context.Context, q *store.Q, parents []string) (map[string]int, error) {
			return q.Runs.CountExecutionsOfTasks(ctx, parents)
		})
}

// TestResultsOfTask pages a task's test results, newest first.
func (s *Runs) TestResultsOfTask(ctx context.Context, taskID string, page domain.PageArgs) (domain.Page[*domain.TaskTestResult], error) {
	return app.NestedPage(ctx, s.db, "Task.testResults", page, taskID,
		func(ctx context.Context, q *store.Q, parents []string) (map[string]domain.Page[*domain.TaskTestResult], error) {
			return q.Runs.TestResultsOfTasks(ctx, parents, page)
		},
		func(ctx context.Context, q *store.Q, parents []string) (map[string]int, error) {
			return q.Runs.CountTestResultsOfTasks(ctx, parents)
		})
}

// LiveAgentOfTask is the live build agent holding a task, or nil.
func (s *Runs) LiveAgentOfTask(ctx context.Context, t *domain.Task) (*domain.BuildAgent, error) {
	a, err := s.AgentByID(ctx, t.AssignedAgentID)
	if err != nil || a == nil || !a.Status.Live() {
		return nil, err
	}
	return a, nil
}

// WaveByID loads a wave.
func (s *Runs) WaveByID(ctx context.Context, id string) (*domain.Wave, error) {
	return s.exec(ctx).waves.Load(ctx, id)
}

// ExecutionByID loads an execution.
func (s *Runs) ExecutionByID(ctx context.Context, id string) (*domain.TaskExecution, error) {
	return s.exec(ctx).execs.Load(ctx, id)
}

// AgentsOfWave lists the agents that claimed a wave's tasks, in spawn order.
func (s *Runs) AgentsOfWave(ctx context.Context, waveID string) ([]*domain.BuildAgent, error) {
	return children(ctx, s.exec(ctx).agentsOfWave, waveID)
}

// ExecutionsOfWave lists the executions of a wave's tasks, in start order.
func (s *Runs) ExecutionsOfWave(ctx context.Context, waveID string) ([]*domain.TaskExecution, error) {
	return children(ctx, s.exec(ctx).execsOfWave, waveID)
}

// AgentOfChange is the build agent a task transition names as its cause
// (changedBy holds its global id), or nil.
func (s *Runs) AgentOfChange(ctx context.Context, c *domain.TaskStateChange) (*domain.BuildAgent, error) {
	if c.ChangedBy == nil {
		return nil, nil
	}
	id, err := domain.DecodeID(domain.KindBuildAgent, *c.ChangedBy, "changedBy")
	if err != nil {
		return nil, nil // a user or the engine
	}
	return s.AgentByID(ctx, &id)
}
