package service

import (
	"context"

	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/store"
)

// runAction loads a run the caller may control and applies fn to it, locked,
// in one transaction.
func (s *Service) runAction(ctx context.Context, in domain.RunActionInput,
	fn func(q *store.Q, run *domain.ExecutionRun) (*domain.ExecutionRun, error),
) (*domain.ExecutionRun, error) {
	p, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	r, err := s.visibleRun(ctx, p, in.RunID, "runId")
	if err != nil {
		return nil, err
	}
	if err := checkWriter(p); err != nil {
		return nil, err
	}
	var out *domain.ExecutionRun
	err = s.tx(ctx, func(q *store.Q) error {
		run, err := q.RunForUpdate(ctx, r.ID)
		if err != nil {
			return err
		}
		inRun(q, run.ID)
		out, err = fn(q, run)
		return err
	})
	return out, err
}

func runConflict(run *domain.ExecutionRun, action string) error {
	return &domain.Error{Code: domain.CodeConflict, Field: "runId",
		Message: "cannot " + action + " a run that is " + string(run.Status),
		Details: map[string]any{"status": string(run.Status)}}
}

// PauseExecutionRun pauses a running run: claims answer RUN_NOT_RUNNING and
// heartbeats PAUSE until it resumes.
func (s *Service) PauseExecutionRun(ctx context.Context, in domain.RunActionInput) (*domain.ExecutionRun, error) {
	return s.runAction(ctx, in, func(q *store.Q, run *domain.ExecutionRun) (*domain.ExecutionRun, error) {
		if run.Status != domain.RunRunning {
			return nil, runConflict(run, "pause")
		}
		now := s.now()
		run.Status, run.UpdatedAt = domain.RunPaused, now
		if err := q.UpdateRun(ctx, run); err != nil {
			return nil, err
		}
		s.record(q, domain.NewRunPaused(run, in.Reason, now))
		return run, nil
	})
}

// ResumeExecutionRun resumes a paused run.
func (s *Service) ResumeExecutionRun(ctx context.Context, in domain.RunActionInput) (*domain.ExecutionRun, error) {
	return s.runAction(ctx, in, func(q *store.Q, run *domain.ExecutionRun) (*domain.ExecutionRun, error) {
		if run.Status != domain.RunPaused {
			return nil, runConflict(run, "resume")
		}
		p, _ := caller(ctx)
		now := s.now()
		run.Status = domain.RunRunning
		s.record(q, domain.NewRunResumed(run, in.Reason, now))
		// Work may have finished while paused: the barrier runs again.
		if err := s.advance(ctx, q, p, run, now); err != nil {
			return nil, err
		}
		return run, nil
	})
}

// CancelExecutionRun cancels an active run: running executions end
// CANCELLED, their agents are terminated (their heartbeats answer CANCEL) and
// their tasks go back to PENDING.
func (s *Service) CancelExecutionRun(ctx context.Context, in domain.RunActionInput) (*domain.ExecutionRun, error) {
	return s.runAction(ctx, in, func(q *store.Q, run *domain.ExecutionRun) (*domain.ExecutionRun, error) {
		if run.Status.Finished() {
			return nil, runConflict(run, "cancel")
		}
		p, _ := caller(ctx)
		now := s.now()
		run.Status = domain.RunCancelled
		agents, err := q.AgentsOfRun(ctx, run.ID)
		if err != nil {
			return nil, err
		}
		for _, a := range agents {
			if a.Status == domain.AgentTerminated {
				continue
			}
			exec, err := q.ExecutionOfAgent(ctx, a.ID)
			if err != nil {
				return nil, err
			}
			if err := endAgent(ctx, q, a, exec, domain.ExecCancelled, "run cancelled", nil, now); err != nil {
				return nil, err
			}
			s.record(q, domain.NewAgentTerminated(run, exec, "run cancelled", now))
			t, err := q.TaskForUpdate(ctx, a.TaskID)
			if err != nil {
				return nil, err
			}
			if t.Status == domain.StatusInProgress {
				t.AssignedAgentID = nil
				if err := s.moveTask(ctx, q, p, t, domain.StatusPending, "run cancelled", now); err != nil {
					return nil, err
				}
				if err := q.SetAssignmentStatus(ctx, run.ID, t.ID, domain.WavePending, now); err != nil {
					return nil, err
				}
			}
		}
		run.CompletedAt, run.UpdatedAt = &now, now
		if run.StartedAt != nil {
			run.DurationMs = ptr(int(now.Sub(*run.StartedAt).Milliseconds()))
		}
		if err := q.UpdateRun(ctx, run); err != nil {
			return nil, err
		}
		if err := q.RecountRun(ctx, run.ID, now); err != nil {
			return nil, err
		}
		s.record(q, domain.NewRunCancelled(run, in.Reason, now))
		return run, nil
	})
}

// RetryExecutionRun starts a new run (RETRY) of a failed or cancelled run's
// unfinished tasks: its failed and skipped tasks go back to PENDING first.
func (s *Service) RetryExecutionRun(ctx context.Context, in domain.RunActionInput) (*domain.ExecutionRun, error) {
	return s.runAction(ctx, in, func(q *store.Q, run *domain.ExecutionRun) (*domain.ExecutionRun, error) {
		if run.Status != domain.RunFailed && run.Status != domain.RunCancelled {
			return nil, runConflict(run, "retry")
		}
		p, _ := caller(ctx)
		now := s.now()
		as, err := q.AssignmentsOfRun(ctx, run.ID)
		if err != nil {
			return nil, err
		}
		only := map[string]bool{}
		for _, a := range as {
			if a.TaskStatus == domain.WaveCompleted {
				continue
			}
			only[a.TaskID] = true
			t, err := q.TaskForUpdate(ctx, a.TaskID)
			if err != nil {
				return nil, err
			}
			if t.Status == domain.StatusBlocked {
				blocks, err := q.BlocksOfTasks(ctx, []string{t.ID})
				if err != nil {
					return nil, err
				}
				for _, b := range blocks {
					if b.ResolvedAt == nil && b.BlockType == domain.BlockDependency {
						if err := q.ResolveBlock(ctx, b.ID, now, actor(p), ptr("retried by a new run")); err != nil {
							return nil, err
						}
					}
				}
			}
			if t.Status == domain.StatusFailed || t.Status == domain.StatusBlocked {
				if err := s.moveTask(ctx, q, p, t, domain.StatusPending, "retried by a new run", now); err != nil {
					return nil, err
				}
			}
		}
		reason := in.Reason
		if reason == nil {
			reason = ptr("retry of run " + run.GlobalID())
		}
		return s.startRun(ctx, q, p, run.TaskListID, domain.TriggerRetry, reason, &run.ID, only)
	})
}
