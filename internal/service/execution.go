package service

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/auth"
	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/planning"
	"github.com/taskgraph/taskgraph/internal/store"
)

// Execution defaults (API.md "Running").
const (
	DefaultHeartbeatInterval = 10 * time.Second
	DefaultMissedHeartbeats  = 3
	DefaultMaxAttempts       = 3
)

// visibleRun loads a run the caller can see (NOT_FOUND otherwise).
func (s *Runs) visibleRun(ctx context.Context, p *auth.Principal, gid, field string) (*domain.ExecutionRun, error) {
	id, err := domain.DecodeID(domain.KindExecutionRun, gid, field)
	if err != nil {
		return nil, err
	}
	runs, err := s.db.Runs.RunsByIDs(ctx, []string{id})
	if err != nil {
		return nil, err
	}
	if len(runs) == 0 {
		return nil, &domain.Error{Code: domain.CodeNotFound, Field: field, Message: "execution run not found"}
	}
	if _, err := s.Projects.visibleProjectByID(ctx, p, runs[0].ProjectID); err != nil {
		return nil, &domain.Error{Code: domain.CodeNotFound, Field: field, Message: "execution run not found"}
	}
	return runs[0], nil
}

// ExecutionRun finds a run by global id; nil when absent or invisible.
func (s *Runs) ExecutionRun(ctx context.Context, gid string) (*domain.ExecutionRun, error) {
	p, err := app.Caller(ctx)
	if err != nil {
		return nil, err
	}
	r, err := s.visibleRun(ctx, p, gid, "id")
	var de *domain.Error
	if errors.As(err, &de) && de.Code == domain.CodeNotFound {
		return nil, nil
	}
	return r, err
}

// StartExecutionRun materialises a list's plan as a new run and starts its
// first wave.
func (s *Runs) StartExecutionRun(ctx context.Context, in domain.StartExecutionRunInput) (*domain.ExecutionRun, error) {
	p, err := app.Caller(ctx)
	if err != nil {
		return nil, err
	}
	l, err := s.Lists.visibleList(ctx, p, in.TaskListID, "taskListId")
	if err != nil {
		return nil, err
	}
	if err := checkWriter(p); err != nil {
		return nil, err
	}
	var run *domain.ExecutionRun
	err = s.tx(ctx, func(tx *app.Tx) error {
		run, err = s.startRun(ctx, tx, p, l.ID, domain.TriggerUser, in.Reason, nil, nil)
		return err
	})
	return run, err
}

// startRun creates and starts a run of list; only, when not nil, limits it to
// those tasks (a retry).
func (s *Runs) startRun(ctx context.Context, tx *app.Tx, p *auth.Principal, listID string, trigger domain.RunTrigger,
	reason *string, retryOf *string, only map[string]bool,
) (*domain.ExecutionRun, error) {
	l, err := tx.Lists.TaskListForUpdate(ctx, listID)
	if err != nil {
		return nil, app.NotFound(err, "task list")
	}
	if err := tx.Tasks.LockProjectGraph(ctx, l.ProjectID); err != nil {
		return nil, err
	}
	if _, err := tx.Runs.ActiveRunOfList(ctx, l.ID); err == nil {
		return nil, &domain.Error{Code: domain.CodeConflict, Field: "taskListId", Message: "the task list already has an active run"}
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	number, err := tx.Runs.NextRunNumber(ctx, l.ID)
	if err != nil {
		return nil, err
	}
	pd, err := loadPlanData(ctx, tx.Q, l.ID)
	if err != nil {
		return nil, err
	}
	if err := s.gateRun(ctx, tx, pd.tasks, only); err != nil {
		return nil, err
	}
	plan := planning.Compute(pd.input)
	now := s.now()
	run := &domain.ExecutionRun{ID: app.NewID(), TaskListID: l.ID, ProjectID: l.ProjectID, RunNumber: number,
		Status: domain.RunRunning, TriggeredBy: trigger, TriggeredReason: reason, RetryOfRunID: retryOf,
		MaxParallelAgents: l.MaxParallelAgents, StartedAt: &now, CreatedBy: ptr(app.Actor(p)), CreatedAt: now, UpdatedAt: now}
	if err := tx.Runs.InsertRun(ctx, run); err != nil {
		return nil, err
	}
	tx.ActFor(run.ID)
	var waves []*domain.Wave
	var assigns []*domain.WaveTaskAssignment
	for _, pw := range plan.Waves {
		var ids []string
		for _, id := range pw.TaskIDs {
			if only == nil || only[id] {
				ids = append(ids, id)
			}
		}
		if len(ids) == 0 {
			continue
		}
		w := &domain.Wave{ID: app.NewID(), RunID: run.ID, TaskListID: l.ID, WaveNumber: len(waves) + 1,
			Status: domain.WavePending, TaskCount: len(ids), CreatedAt: now}
		waves = append(waves, w)
		for i, id := range ids {
			assigns = append(assigns, &domain.WaveTaskAssignment{ID: app.NewID(), WaveID: w.ID, RunID: run.ID, TaskID: id,
				Position: i + 1, TaskStatus: domain.WavePending, AssignedAt: now})
		}
	}
	if err := tx.Runs.InsertWaves(ctx, waves); err != nil {
		return nil, err
	}
	if err := tx.Runs.InsertAssignments(ctx, assigns); err != nil {
		return nil, err
	}
	var keep func(string) bool
	if only != nil {
		keep = func(id string) bool { return only[id] }
	}
	if err := recordAnalysis(ctx, tx, l.ID, pd.input, plan, keep, now); err != nil {
		return nil, err
	}
	tx.Record(domain.NewRunStarted(run, reason, now))
	if err := s.advance(ctx, tx, p, run, now); err != nil {
		return nil, err
	}
	return run, nil
}

// advance moves a run past finished waves: it completes the current wave
// when none of its tasks is pending or running, starts the next (skipping
// waves with nothing left to do), and ends the run after the last. It writes
// the run and recounts it.
func (s *Runs) advance(ctx context.Context, tx *app.Tx, p *auth.Principal, run *domain.ExecutionRun, now time.Time) error {
	waves, err := tx.Runs.WavesOfRun(ctx, run.ID)
	if err != nil {
		return err
	}
	for _, w := range waves {
		if w.Status.Finished() {
			continue
		}
		as, err := tx.Runs.AssignmentsOfWave(ctx, w.ID)
		if err != nil {
			return err
		}
		tally := domain.TallyWave(as)
		w.CompletedCount, w.FailedCount, w.SkippedCount = tally.Completed, tally.Failed, tally.Skipped
		started := w.Status == domain.WavePending
		if started {
			w.StartedAt = &now
			run.CurrentWave = &w.WaveNumber
		}
		next, holds := domain.AdvanceWave(w.Status, tally)
		w.Status = next
		if next.Finished() {
			w.CompletedAt = &now
			if !started && w.StartedAt != nil {
				w.DurationMs = ptr(int(now.Sub(*w.StartedAt).Milliseconds()))
			}
		}
		if err := tx.Runs.UpdateWave(ctx, w); err != nil {
			return err
		}
		switch {
		case next == domain.WaveInProgress && started:
			tx.Record(domain.NewWaveStarted(run, w, now))
		case next.Finished() && !started:
			tx.Record(domain.NewWaveCompleted(run, w, now))
		}
		if holds {
			break
		}
	}
	last := !slices.ContainsFunc(waves, func(w *domain.Wave) bool { return !w.Status.Finished() })
	if last && run.Status == domain.RunRunning {
		as, err := tx.Runs.AssignmentsOfRun(ctx, run.ID)
		if err != nil {
			return err
		}
		run.Status, run.FailureReason = domain.RunOutcome(as)
		run.CompletedAt = &now
		if run.StartedAt != nil {
			run.DurationMs = ptr(int(now.Sub(*run.StartedAt).Milliseconds()))
		}
		if run.Status == domain.RunFailed {
			tx.Record(domain.NewRunFailed(run, now))
		} else {
			tx.Record(domain.NewRunCompleted(run, now))
		}
	}
	run.UpdatedAt = now
	if err := tx.Runs.UpdateRun(ctx, run); err != nil {
		return err
	}
	return tx.Runs.RecountRun(ctx, run, now)
}

// releaseTask takes a task from its ended execution: back to PENDING when
// retry is allowed and attempts remain, else FAILED.
func (s *Runs) releaseTask(ctx context.Context, tx *app.Tx, p *auth.Principal, run *domain.ExecutionRun, t *domain.Task,
	e *domain.TaskExecution, retry bool, reason string, now time.Time,
) error {
	t.AssignedAgentID = nil
	if domain.ShouldRetry(retry, e.AttemptNumber, s.maxAttempts, run.Status) {
		if err := s.moveTask(ctx, tx, p, t, domain.StatusPending,
			fmt.Sprintf("%s; retrying (attempt %d of %d failed)", reason, e.AttemptNumber, s.maxAttempts), now); err != nil {
			return err
		}
		if err := tx.Runs.SetAssignmentStatus(ctx, run.ID, t.ID, domain.WavePending, now); err != nil {
			return err
		}
		return tx.Runs.RecountRun(ctx, run, now)
	}
	if retry {
		reason = fmt.Sprintf("%s; %d attempts exhausted", reason, e.AttemptNumber)
	}
	if err := s.moveTask(ctx, tx, p, t, domain.StatusFailed, reason, now); err != nil {
		return err
	}
	return s.settle(ctx, tx, p, run, t, domain.StatusFailed, now)
}

// settle records a task's terminal outcome in its run: its assignment,
// the skipping of its dependents when it failed, and the wave barrier.
func (s *Runs) settle(ctx context.Context, tx *app.Tx, p *auth.Principal, run *domain.ExecutionRun, t *domain.Task, outcome domain.TaskStatus, now time.Time) error {
	st := domain.WaveCompleted
	if outcome == domain.StatusFailed {
		st = domain.WaveFailed
	}
	if err := tx.Runs.SetAssignmentStatus(ctx, run.ID, t.ID, st, now); err != nil {
		return err
	}
	if outcome == domain.StatusFailed {
		if err := s.skipDependents(ctx, tx, p, run, t, now); err != nil {
			return err
		}
	}
	return s.advance(ctx, tx, p, run, now)
}

// skipDependents marks every task of the run that waits, directly or not, on
// failed as SKIPPED and moves it to BLOCKED with a dependency block.
func (s *Runs) skipDependents(ctx context.Context, tx *app.Tx, p *auth.Principal, run *domain.ExecutionRun, failed *domain.Task, now time.Time) error {
	links, err := tx.Planning.PlanningLinksOfList(ctx, run.TaskListID)
	if err != nil {
		return err
	}
	as, err := tx.Runs.AssignmentsOfRun(ctx, run.ID)
	if err != nil {
		return err
	}
	pending := map[string]bool{}
	for _, a := range as {
		if a.TaskStatus == domain.WavePending {
			pending[a.TaskID] = true
		}
	}
	skip := domain.DependentsToSkip(domain.WaitingOn(links), failed.ID, pending)
	for _, id := range skip {
		t, err := tx.Tasks.TaskForUpdate(ctx, id)
		if err != nil {
			return err
		}
		reason := fmt.Sprintf("skipped: depends on %s, which failed", failed.DisplayID)
		if err := tx.Runs.SetAssignmentStatus(ctx, run.ID, id, domain.WaveSkipped, now); err != nil {
			return err
		}
		if err := tx.Tasks.InsertBlock(ctx, &domain.TaskBlock{ID: app.NewID(), TaskID: id, BlockType: domain.BlockDependency,
			Reason: reason, BlockingEntityID: &failed.ID, CreatedAt: now}); err != nil {
			return err
		}
		if domain.CheckTransition(t.Status, domain.StatusBlocked, false) == nil {
			if err := s.moveTask(ctx, tx, p, t, domain.StatusBlocked, reason, now); err != nil {
				return err
			}
		}
	}
	return nil
}
