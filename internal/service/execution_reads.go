package service

import (
	"context"

	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/store"
)

// The reads behind the execution types' fields. The parent was already
// authorized by the query that reached it.

// RunByID loads a run.
func (s *Runs) RunByID(ctx context.Context, id *string) (*domain.ExecutionRun, error) {
	if id == nil {
		return nil, nil
	}
	return s.exec(ctx).runs.Load(ctx, *id)
}

// RunsOfList lists a list's runs, newest first.
func (s *Runs) RunsOfList(ctx context.Context, listID string) ([]*domain.ExecutionRun, error) {
	return children(ctx, s.exec(ctx).runsOfList, listID)
}

// WavesOfRun lists a run's waves in order.
func (s *Runs) WavesOfRun(ctx context.Context, runID string) ([]*domain.Wave, error) {
	return children(ctx, s.exec(ctx).wavesOfRun, runID)
}

// AgentsOfRun lists a run's agents in spawn order.
func (s *Runs) AgentsOfRun(ctx context.Context, runID string) ([]*domain.BuildAgent, error) {
	return children(ctx, s.exec(ctx).agentsOfRun, runID)
}

// ExecutionsOfRun lists a run's executions in start order.
func (s *Runs) ExecutionsOfRun(ctx context.Context, runID string) ([]*domain.TaskExecution, error) {
	return children(ctx, s.exec(ctx).execsOfRun, runID)
}

// AssignmentsOfWave lists a wave's assignments in position order.
func (s *Runs) AssignmentsOfWave(ctx context.Context, waveID string) ([]*domain.WaveTaskAssignment, error) {
	return children(ctx, s.exec(ctx).assignsOfWave, waveID)
}

// AgentByID loads an agent.
func (s *Runs) AgentByID(ctx context.Context, id *string) (*domain.BuildAgent, error) {
	if id == nil {
		return nil, nil
	}
	return s.exec(ctx).agents.Load(ctx, *id)
}

// ExecutionOfAgent is the execution of an agent.
func (s *Runs) ExecutionOfAgent(ctx context.Context, agentID string) (*domain.TaskExecution, error) {
	return s.exec(ctx).execOfAgent.Load(ctx, agentID)
}

// ExecutionLog is the last tail lines of an execution's log.
func (s *Runs) ExecutionLog(ctx context.Context, executionID string, tail *int) ([]string, error) {
	n := 100
	if tail != nil {
		n = *tail
	}
	if n < 0 || n > 10000 {
		return nil, domain.InputError("tail", "must be between 0 and 10000")
	}
	if n == 0 {
		return []string{}, nil
	}
	lines, err := s.db.Runs.LogTail(ctx, executionID, n)
	if lines == nil {
		lines = []string{}
	}
	return lines, err
}

// TestResultsOfExecution lists an execution's test results.
func (s *Runs) TestResultsOfExecution(ctx context.Context, executionID string) ([]*domain.TaskTestResult, error) {
	return children(ctx, s.exec(ctx).resultsOfExecs, executionID)
}

// HeartbeatsOfAgent pages the heartbeats an agent sent, newest first. The
// agent was authorized by the field's parent.
func (s *Runs) HeartbeatsOfAgent(ctx context.Context, agentID string, page domain.PageArgs) (domain.Page[*domain.AgentHeartbeat], error) {
	return app.NestedPage(ctx, s.db, "BuildAgent.heartbeats", page, agentID,
		func(ctx context.Context, q *store.Q, parents []string) (map[string]domain.Page[*domain.AgentHeartbeat], error) {
			return q.Runs.HeartbeatsOfAgents(ctx, parents, page)
		},
		func(ctx context.Context, q *store.Q, parents []string) (map[string]int, error) {
			return q.Runs.CountHeartbeatsOfAgents(ctx, parents)
		})
}
