package service

import (
	"context"
	"errors"

	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/store"
)

// runAction loads a run the caller may control and applies fn to it, locked,
// in one transaction.
func (s *Runs) runAction(ctx context.Context, in domain.RunActionInput,
	fn func(tx *app.Tx, run *domain.ExecutionRun) (*domain.ExecutionRun, error),
) (*domain.ExecutionRun, error) {
	p, err := app.Caller(ctx)
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
	err = s.tx(ctx, func(tx *app.Tx) error {
		run, err := tx.Runs.RunForUpdate(ctx, r.ID)
		if err != nil {
			return err
		}
		tx.ActFor(run.ID)
		out, err = fn(tx, run)
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
// heartbeats PAUSE until it resumes. It takes the run's slots first, so
// claims in flight commit before the pause.
func (s *Runs) PauseExecutionRun(ctx context.Context, in domain.RunActionInput) (*domain.ExecutionRun, error) {
	return s.runAction(ctx, in, func(tx *app.Tx, run *domain.ExecutionRun) (*domain.ExecutionRun, error) {
		if !run.Status.Allows(domain.ActionPause) {
			return nil, runConflict(run, "pause")
		}
		if err := tx.Runs.LockSlots(ctx, run.ID); err != nil {
			return nil, err
		}
		now := s.now()
		run.Status, run.UpdatedAt = domain.RunPaused, now
		if err := tx.Runs.UpdateRun(ctx, run); err != nil {
			return nil, err
		}
		tx.Record(domain.NewRunPaused(run, in.Reason, now))
		if err := s.moveListForRun(ctx, tx, run, domain.ListMoveRunPause, nil, now); err != nil {
			return nil, err
		}
		return run, tx.Runs.Reload(ctx, run)
	})
}

// ResumeExecutionRun resumes a paused run.
func (s *Runs) ResumeExecutionRun(ctx context.Context, in domain.RunActionInput) (*domain.ExecutionRun, error) {
	return s.runAction(ctx, in, func(tx *app.Tx, run *domain.ExecutionRun) (*domain.ExecutionRun, error) {
		if !run.Status.Allows(domain.ActionResume) {
			return nil, runConflict(run, "resume")
		}
		p, _ := app.Caller(ctx)
		now := s.now()
		run.Status, run.UpdatedAt = domain.RunRunning, now
		if err := tx.Runs.UpdateRun(ctx, run); err != nil {
			return nil, err
		}
		tx.Record(domain.NewRunResumed(run, in.Reason, now))
		if err := s.moveListForRun(ctx, tx, run, domain.ListMoveRunResume, nil, now); err != nil {
			return nil, err
		}
		// Work may have finished while paused: the barrier runs again.
		if err := s.advance(ctx, tx, p, run, now); err != nil {
			return nil, err
		}
		return run, tx.Runs.Reload(ctx, run)
	})
}

// CancelExecutionRun cancels an active run: running executions end
// CANCELLED, their agents are terminated (their heartbeats answer CANCEL) and
// their tasks go back to PENDING. Lock order: run, every slot (claims and
// settlements in flight commit first), each live agent, its task.
func (s *Runs) CancelExecutionRun(ctx context.Context, in domain.RunActionInput) (*domain.ExecutionRun, error) {
	return s.runAction(ctx, in, func(tx *app.Tx, run *domain.ExecutionRun) (*domain.ExecutionRun, error) {
		if !run.Status.Allows(domain.ActionCancel) {
			return nil, runConflict(run, "cancel")
		}
		p, _ := app.Caller(ctx)
		now := s.now()
		run.Status = domain.RunCancelled
		if err := tx.Runs.LockSlots(ctx, run.ID); err != nil {
			return nil, err
		}
		agents, err := tx.Runs.AgentsOfRun(ctx, run.ID)
		if err != nil {
			return nil, err
		}
		for _, seen := range agents {
			if !seen.Status.Live() {
				continue
			}
			a, err := tx.Runs.AgentForUpdate(ctx, seen.ID)
			if err != nil {
				return nil, err
			}
			if !a.Status.Live() {
				continue
			}
			exec, err := tx.Runs.ExecutionOfAgent(ctx, a.ID)
			if err != nil {
				return nil, err
			}
			if err := endAgent(ctx, tx, a, exec, domain.ExecCancelled, domain.EndRunCancelled, "run cancelled", nil, now); err != nil {
				return nil, err
			}
			tx.Record(domain.NewAgentTerminated(run, exec, domain.EndRunCancelled, "run cancelled", now))
			t, err := tx.Tasks.TaskForUpdate(ctx, a.TaskID)
			if err != nil {
				return nil, err
			}
			if t.Status == domain.StatusInProgress {
				t.AssignedAgentID = nil
				if err := logExecution(t, a, exec, nil); err != nil {
					return nil, err
				}
				if err := s.moveTask(ctx, tx, p, t, domain.StatusPending, "run cancelled", now); err != nil {
					return nil, err
				}
				if _, err := tx.Runs.SetAssignmentStatus(ctx, run.ID, t.ID, domain.OpenWaveStatuses, domain.WavePending,
					now); err != nil && !errors.Is(err, store.ErrNotFound) {
					return nil, err
				}
			}
		}
		run.CompletedAt, run.UpdatedAt = &now, now
		if run.StartedAt != nil {
			run.DurationMs = ptr(int(now.Sub(*run.StartedAt).Milliseconds()))
		}
		if err := tx.Runs.UpdateRun(ctx, run); err != nil {
			return nil, err
		}
		if err := tx.Runs.SealRunCounters(ctx, run, now); err != nil {
			return nil, err
		}
		tx.Record(domain.NewRunCancelled(run, in.Reason, now))
		return run, s.runEnded(ctx, tx, run, now)
	})
}

// RetryExecutionRun starts a new run (RETRY) of a failed or cancelled run's
// unfinished tasks: its failed and skipped tasks go back to PENDING first.
func (s *Runs) RetryExecutionRun(ctx context.Context, in domain.RunActionInput) (*domain.ExecutionRun, error) {
	return s.runAction(ctx, in, func(tx *app.Tx, run *domain.ExecutionRun) (*domain.ExecutionRun, error) {
		if !run.Status.Allows(domain.ActionRetry) {
			return nil, runConflict(run, "retry")
		}
		p, _ := app.Caller(ctx)
		now := s.now()
		as, err := tx.Runs.AssignmentsOfRun(ctx, run.ID)
		if err != nil {
			return nil, err
		}
		only := map[string]bool{}
		for _, a := range as {
			if a.TaskStatus == domain.WaveCompleted {
				continue
			}
			only[a.TaskID] = true
			t, err := tx.Tasks.TaskForUpdate(ctx, a.TaskID)
			if err != nil {
				return nil, err
			}
			if t.Status == domain.StatusBlocked {
				blocks, err := tx.Tasks.BlocksOfTasks(ctx, []string{t.ID})
				if err != nil {
					return nil, err
				}
				for _, b := range blocks {
					if b.ResolvedAt == nil && b.BlockType == domain.BlockDependency {
						if err := tx.Tasks.ResolveBlock(ctx, b.ID, now, app.Actor(p), ptr("retried by a new run")); err != nil {
							return nil, err
						}
					}
				}
			}
			if t.Status == domain.StatusFailed || t.Status == domain.StatusBlocked {
				if err := s.moveTask(ctx, tx, p, t, domain.StatusPending, "retried by a new run", now); err != nil {
					return nil, err
				}
			}
		}
		reason := in.Reason
		if reason == nil {
			reason = ptr("retry of run " + run.GlobalID())
		}
		return s.startRun(ctx, tx, p, run.TaskListID, domain.TriggerRetry, reason, &run.ID, only)
	})
}
