package service

import (
	"context"
	"errors"
	"time"

	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/auth"
	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/store"
)

// What other domains (questions) use of the core's execution: an agent call
// under the same lease fencing as the core's own, failing a task from
// outside its agent, and hearing of runs that end.

// AgentHold is the state of a calling agent that holds its task: the agent
// (its row locked), its execution and run, and the database clock.
type AgentHold struct {
	Agent     *domain.BuildAgent
	Execution *domain.TaskExecution
	Run       *domain.ExecutionRun
	Now       time.Time
}

// HoldAgent fences an agent call made in tx: it locks the agent given by
// global id agentGID (field agentId) and returns its state, or LEASE_LOST
// when it no longer holds its task, NOT_FOUND when p may not see it.
func (s *Runs) HoldAgent(ctx context.Context, tx *app.Tx, p *auth.Principal, agentGID string) (*AgentHold, error) {
	h, err := s.holder(ctx, tx, p, agentGID, holdAlive, false)
	if err != nil {
		return nil, err
	}
	return &AgentHold{Agent: h.agent, Execution: h.exec, Run: h.run, Now: h.now}, nil
}

// RunEndHook is work done in the transaction that ends run (cancelled,
// completed or failed), at now.
type RunEndHook func(ctx context.Context, tx *app.Tx, run *domain.ExecutionRun, now time.Time) error

// OnRunEnd adds work to do in the transaction of every run's end. Register
// hooks before serving.
func (s *Runs) OnRunEnd(h RunEndHook) { s.runEndHooks = append(s.runEndHooks, h) }

// runEnded runs the hooks of a run's end.
func (s *Runs) runEnded(ctx context.Context, tx *app.Tx, run *domain.ExecutionRun, now time.Time) error {
	if err := s.moveListForRun(ctx, tx, run, domain.ListMoveRunEnd, nil, now); err != nil {
		return err
	}
	for _, h := range s.runEndHooks {
		if err := h(ctx, tx, run, now); err != nil {
			return err
		}
	}
	return nil
}

// LockRunOfTask locks, inside tx, the run a task is being worked in: the run
// of its live agent, else its list's active run; nil when there is none.
// Callers that then lock other rows keep the lock order (run, agent, task).
func (s *Runs) LockRunOfTask(ctx context.Context, tx *app.Tx, taskID string) (*domain.ExecutionRun, error) {
	t, err := one(tx.Tasks.TasksByIDs(ctx, []string{taskID}))
	if err != nil {
		return nil, err
	}
	if t.AssignedAgentID != nil {
		a, err := one(tx.Runs.AgentsByIDs(ctx, []string{*t.AssignedAgentID}))
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, err
		}
		if err == nil && a.Status.Live() {
			return tx.Runs.RunForUpdate(ctx, a.RunID)
		}
	}
	if t.TaskListID == nil {
		return nil, nil
	}
	r, err := tx.Runs.ActiveRunOfList(ctx, *t.TaskListID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	return tx.Runs.RunForUpdate(ctx, r.ID)
}

// FailTaskFromOutside fails a task as the engine, for reason, at now: its
// live agent, if any, is terminated (later calls get LEASE_LOST) and its
// execution FAILED; in a run, the task's assignment fails and the run's wave
// barrier moves as when an agent fails for good. A task that is neither held
// by a live agent nor PENDING keeps its status; failed reports whether it
// moved. Lock order: run (LockRunOfTask; the caller may have taken it
// already), slot, agent, task. end is the agent's end reason (a question
// that timed out: QUESTION_TIMEOUT).
func (s *Runs) FailTaskFromOutside(ctx context.Context, tx *app.Tx, taskID string, end domain.AgentEndReason, reason string,
	now time.Time,
) (failed bool, err error) {
	run, err := s.LockRunOfTask(ctx, tx, taskID)
	if err != nil {
		return false, err
	}
	t0, err := one(tx.Tasks.TasksByIDs(ctx, []string{taskID}))
	if err != nil {
		return false, err
	}
	if run != nil {
		tx.ActFor(run.ID)
	}
	if run != nil && t0.AssignedAgentID != nil {
		if seen, err := one(tx.Runs.AgentsByIDs(ctx, []string{*t0.AssignedAgentID})); err == nil {
			if err := lockSlotOf(ctx, tx, seen); err != nil {
				return false, err
			}
		} else if !errors.Is(err, store.ErrNotFound) {
			return false, err
		}
		a, err := tx.Runs.AgentForUpdate(ctx, *t0.AssignedAgentID)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return false, err
		}
		if err == nil && a.Status.Live() && a.RunID == run.ID {
			exec, err := tx.Runs.ExecutionOfAgent(ctx, a.ID)
			if err != nil {
				return false, err
			}
			t, err := tx.Tasks.TaskForUpdate(ctx, taskID)
			if err != nil {
				return false, err
			}
			if exec.Status == domain.ExecRunning && t.Status == domain.StatusInProgress && t.AssignedAgentID != nil && *t.AssignedAgentID == a.ID {
				if err := endAgent(ctx, tx, a, exec, domain.ExecFailed, end, reason, &reason, now); err != nil {
					return false, err
				}
				if err := logExecution(t, a, exec, nil); err != nil {
					return false, err
				}
				tx.Record(domain.NewAgentTerminated(run, exec, end, reason, now))
				if err := s.releaseTask(ctx, tx, engine, run, t, exec, false, reason, now, nil); err != nil {
					return true, err
				}
				return true, s.advance(ctx, tx, engine, run, now)
			}
		}
	}
	t, err := tx.Tasks.TaskForUpdate(ctx, taskID)
	if err != nil {
		return false, err
	}
	if t.Status != domain.StatusPending {
		return false, nil
	}
	inRun := false
	if run != nil {
		as, err := tx.Runs.AssignmentsOfRun(ctx, run.ID)
		if err != nil {
			return false, err
		}
		for _, a := range as {
			inRun = inRun || (a.TaskID == taskID && a.TaskStatus == domain.WavePending)
		}
	}
	t.AssignedAgentID = nil
	if err := s.moveTask(ctx, tx, engine, t, domain.StatusFailed, reason, now); err != nil {
		return false, err
	}
	if !inRun {
		return true, nil
	}
	if err := s.settle(ctx, tx, engine, run, t, domain.StatusFailed, now, nil); err != nil {
		return true, err
	}
	return true, s.advance(ctx, tx, engine, run, now)
}

// AgentQuestionsMoved moves a live build agent between RUNNING and IDLE
// after one of its blocking questions was asked or settled (answered,
// skipped, expired), inside tx: it is IDLE while one of them is unanswered.
// The caller holds the question; the agent is locked here.
func (s *Runs) AgentQuestionsMoved(ctx context.Context, tx *app.Tx, agentID string) error {
	a, err := tx.Runs.AgentForUpdate(ctx, agentID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	} else if err != nil || !a.Status.Live() {
		return err
	}
	n, err := tx.Questions.CountBlockingOfAgent(ctx, agentID, domain.QuestionPending)
	if err != nil {
		return err
	}
	next := a.Status.AfterQuestion(n > 0)
	if next == a.Status {
		return nil
	}
	a.Status = next
	return tx.Runs.UpdateAgent(ctx, a)
}
