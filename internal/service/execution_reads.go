package service

import (
	"context"
	"errors"

	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/store"
)

// The reads behind the execution types' fields. The parent was already
// authorized by the query that reached it.

// RunByID loads a run.
func (s *Service) RunByID(ctx context.Context, id *string) (*domain.ExecutionRun, error) {
	if id == nil {
		return nil, nil
	}
	rs, err := s.db.RunsByIDs(ctx, []string{*id})
	if err != nil || len(rs) == 0 {
		return nil, err
	}
	return rs[0], nil
}

// RunsOfList lists a list's runs, newest first.
func (s *Service) RunsOfList(ctx context.Context, listID string) ([]*domain.ExecutionRun, error) {
	return s.db.RunsOfList(ctx, listID)
}

// WavesOfRun lists a run's waves in order.
func (s *Service) WavesOfRun(ctx context.Context, runID string) ([]*domain.Wave, error) {
	return s.db.WavesOfRun(ctx, runID)
}

// AgentsOfRun lists a run's agents in spawn order.
func (s *Service) AgentsOfRun(ctx context.Context, runID string) ([]*domain.BuildAgent, error) {
	return s.db.AgentsOfRun(ctx, runID)
}

// ExecutionsOfRun lists a run's executions in start order.
func (s *Service) ExecutionsOfRun(ctx context.Context, runID string) ([]*domain.TaskExecution, error) {
	return s.db.ExecutionsOfRun(ctx, runID)
}

// AssignmentsOfWave lists a wave's assignments in position order.
func (s *Service) AssignmentsOfWave(ctx context.Context, waveID string) ([]*domain.WaveTaskAssignment, error) {
	return s.db.AssignmentsOfWave(ctx, waveID)
}

// AgentByID loads an agent.
func (s *Service) AgentByID(ctx context.Context, id *string) (*domain.BuildAgent, error) {
	if id == nil {
		return nil, nil
	}
	as, err := s.db.AgentsByIDs(ctx, []string{*id})
	if err != nil || len(as) == 0 {
		return nil, err
	}
	return as[0], nil
}

// ExecutionOfAgent is the execution of an agent.
func (s *Service) ExecutionOfAgent(ctx context.Context, agentID string) (*domain.TaskExecution, error) {
	e, err := s.db.ExecutionOfAgent(ctx, agentID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	return e, err
}

// ExecutionLog is the last tail lines of an execution's log.
func (s *Service) ExecutionLog(ctx context.Context, executionID string, tail *int) ([]string, error) {
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
	lines, err := s.db.LogTail(ctx, executionID, n)
	if lines == nil {
		lines = []string{}
	}
	return lines, err
}

// TestResultsOfExecution lists an execution's test results.
func (s *Service) TestResultsOfExecution(ctx context.Context, executionID string) ([]*domain.TaskTestResult, error) {
	return s.db.TestResultsOfExecution(ctx, executionID)
}
