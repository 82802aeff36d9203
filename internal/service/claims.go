package service

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/auth"
	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/store"
)

// ClaimTask hands the caller the best PENDING task of the run's current wave,
// as a new agent and execution, or says why it must wait.
func (s *Runs) ClaimTask(ctx context.Context, in domain.ClaimTaskInput) (*domain.ClaimResult, error) {
	p, err := app.Caller(ctx)
	if err != nil {
		return nil, err
	}
	r, err := s.visibleRun(ctx, p, in.RunID, "runId")
	if err != nil {
		return nil, err
	}
	// Most calls of polling agents find nothing to claim: answer those from
	// plain reads, without a write transaction or the run's lock.
	if w, _, _, err := claimable(ctx, &s.db.Q, r); err != nil {
		return nil, err
	} else if w != nil {
		return &domain.ClaimResult{WaitReason: w}, nil
	}
	var res *domain.ClaimResult
	err = s.tx(ctx, func(tx *app.Tx) error {
		res = &domain.ClaimResult{}
		// The run's lock orders claims: the count of live agents holds
		// until this claim commits.
		run, err := tx.Runs.RunForUpdate(ctx, r.ID)
		if err != nil {
			return err
		}
		tx.ActFor(run.ID)
		w, wave, t, err := claimable(ctx, tx.Q, run)
		if err != nil || w != nil {
			res.WaitReason = w
			return err
		}
		attempts, err := tx.Runs.CountAttempts(ctx, run.ID, t.ID)
		if err != nil {
			return err
		}
		now, err := tx.Now(ctx)
		if err != nil {
			return err
		}
		agent := &domain.BuildAgent{ID: app.NewID(), RunID: run.ID, WaveID: wave.ID, TaskID: t.ID, TaskListID: run.TaskListID,
			ProcessID: in.ProcessID, Hostname: in.Hostname, WorkingDirectory: in.WorkingDirectory,
			Status: domain.AgentRunning, LastHeartbeatAt: now, SpawnedAt: now, ClaimedBy: ptr(claimer(p))}
		if err := tx.Runs.InsertAgent(ctx, agent); err != nil {
			return err
		}
		exec := &domain.TaskExecution{ID: app.NewID(), TaskID: t.ID, TaskListID: run.TaskListID, RunID: run.ID,
			AgentID: agent.ID, WaveID: wave.ID, AttemptNumber: attempts + 1, Status: domain.ExecRunning,
			StartedAt: now, FilesModified: domain.Strings{}, GitCommits: domain.Strings{}, CreatedAt: now}
		if err := tx.Runs.InsertExecution(ctx, exec); err != nil {
			return err
		}
		if err := tx.Runs.SetAssignmentStatus(ctx, run.ID, t.ID, domain.WaveInProgress, now); err != nil {
			return err
		}
		t.AssignedAgentID = &agent.ID
		if err := s.moveTask(ctx, tx, p, t, domain.StatusInProgress,
			fmt.Sprintf("claimed by agent %s (attempt %d)", agent.GlobalID(), exec.AttemptNumber), now); err != nil {
			return err
		}
		tx.Record(domain.NewTaskClaimed(run, wave, exec, now))
		if err := tx.Runs.RecountRun(ctx, run, now); err != nil {
			return err
		}
		res.Agent, res.Task, res.Execution, res.Wave = agent, t, exec, wave
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// claimable finds the task a claim of run would get (locked on PostgreSQL
// inside a transaction) and its wave, or says why there is none.
func claimable(ctx context.Context, q *store.Q, run *domain.ExecutionRun) (*domain.WaitReason, *domain.Wave, *domain.Task, error) {
	if w := domain.ClaimWait(run, 0); w != nil && *w != domain.WaitConcurrencyLimit {
		return w, nil, nil, nil
	}
	live, err := q.Runs.CountLiveAgents(ctx, run.ID)
	if err != nil {
		return nil, nil, nil, err
	}
	if w := domain.ClaimWait(run, live); w != nil {
		return w, nil, nil, nil
	}
	waves, err := q.Runs.WavesOfRun(ctx, run.ID)
	if err != nil {
		return nil, nil, nil, err
	}
	wave := waves[*run.CurrentWave-1]
	t, err := q.Runs.ClaimableTask(ctx, wave.ID)
	if errors.Is(err, store.ErrNotFound) {
		w := domain.WaitNoReadyTask
		return &w, nil, nil, nil
	} else if err != nil {
		return nil, nil, nil, err
	}
	return nil, wave, t, nil
}

// moveTask transitions a task as the engine and writes it.
func (s *Runs) moveTask(ctx context.Context, tx *app.Tx, p *auth.Principal, t *domain.Task, to domain.TaskStatus, reason string, now time.Time) error {
	if _, err := s.Tasks.transition(ctx, tx, p, t, to, reason, true, now); err != nil {
		return err
	}
	t.UpdatedAt = now
	return s.Tasks.saveTransitioned(ctx, tx, t)
}
