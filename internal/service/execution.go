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

// Execution defaults.
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
	if err := s.Projects.visibleProjectID(ctx, p, runs[0].ProjectID); err != nil {
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
	if err := s.precheckRun(ctx, l.ID); err != nil {
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
	if err := domain.CheckListTakesRun(l.Status); err != nil {
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
		MaxParallelAgents: l.MaxParallelAgents, Schedule: l.Schedule, StartedAt: &now, CreatedBy: ptr(app.Actor(p)),
		CreatedAt: now, UpdatedAt: now}
	var keep func(string) bool
	if only != nil {
		keep = func(id string) bool { return only[id] }
	}
	inRun := map[string]bool{}
	for _, pw := range plan.Waves {
		for _, id := range pw.TaskIDs {
			if keep == nil || keep(id) {
				inRun[id] = true
			}
		}
	}
	var deps []domain.RunDependency
	ranks := map[string]int{}
	if run.Schedule == domain.ScheduleEager {
		links := make([]*domain.TaskRelationship, len(pd.input.Links))
		for i, l := range pd.input.Links {
			links[i] = &domain.TaskRelationship{SourceTaskID: l.Source, TargetTaskID: l.Target, Type: l.Type}
		}
		deps = domain.RunDependencies(run.ID, links, inRun)
		hours := map[string]float64{}
		for _, t := range pd.input.Tasks {
			if inRun[t.ID] {
				hours[t.ID] = planning.Hours(t.Effort)
			}
		}
		var order []string
		for _, pw := range plan.Waves {
			for _, id := range pw.TaskIDs {
				if inRun[id] {
					order = append(order, id)
				}
			}
		}
		ranks = domain.EagerRanks(order, domain.CriticalHours(hours, domain.WaitingOn(links)))
	}
	var waves []*domain.Wave
	var assigns []*domain.WaveTaskAssignment
	for _, pw := range plan.Waves {
		var ids []string
		for _, id := range pw.TaskIDs {
			if inRun[id] {
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
				Position: i + 1, TaskStatus: domain.WavePending, AssignedAt: now, ClaimRank: ranks[id]})
		}
	}
	run.TasksTotal, run.WavesTotal = len(assigns), len(waves)
	if err := tx.Runs.InsertRun(ctx, run); err != nil {
		return nil, err
	}
	tx.ActFor(run.ID)
	if err := tx.Runs.InsertSlots(ctx, run.ID, run.MaxParallelAgents); err != nil {
		return nil, err
	}
	if err := tx.Runs.InsertWaves(ctx, waves); err != nil {
		return nil, err
	}
	if err := tx.Runs.InsertAssignments(ctx, assigns); err != nil {
		return nil, err
	}
	if run.Schedule == domain.ScheduleEager {
		if err := s.recordEagerConstraints(ctx, tx, run, pd.input, plan, inRun, deps); err != nil {
			return nil, err
		}
	}
	if err := recordAnalysis(ctx, tx, l.ID, pd.input, plan, keep, now); err != nil {
		return nil, err
	}
	tx.Record(domain.NewRunStarted(run, reason, now))
	if err := s.moveListForRun(ctx, tx, run, domain.ListMoveRunStart, nil, now); err != nil {
		return nil, err
	}
	if err := s.advance(ctx, tx, p, run, now); err != nil {
		return nil, err
	}
	return run, tx.Runs.Reload(ctx, run)
}

// recordEagerConstraints writes what an EAGER run's claims read: its
// ordering constraints and the pairs of its tasks that conflict — the
// plan's file and resource conflicts, the pairs the planner keeps out of
// one wave.
func (s *Runs) recordEagerConstraints(ctx context.Context, tx *app.Tx, run *domain.ExecutionRun, in planning.Input,
	plan *planning.Plan, inRun map[string]bool, deps []domain.RunDependency,
) error {
	if err := tx.Runs.InsertRunDependencies(ctx, deps); err != nil {
		return err
	}
	var pairs [][2]string
	for _, pr := range planning.Pairs(in, plan, func(id string) bool { return inRun[id] }) {
		if len(pr.Files) > 0 || len(pr.Resources) > 0 {
			pairs = append(pairs, [2]string{pr.A, pr.B})
		}
	}
	return tx.Runs.InsertRunConflicts(ctx, domain.RunConflicts(run.ID, pairs))
}

// advanceRun advances a run in a transaction of its own, holding its lock:
// what a settlement that closed a wave does once it has committed (the
// run's lock comes first in the lock order, and settlements do not take
// it). It returns the run's row as it then stands.
func (s *Runs) advanceRun(ctx context.Context, runID string) (*domain.ExecutionRun, error) {
	var run *domain.ExecutionRun
	// The wave closed with the settlement's commit: advance even when the
	// caller has gone.
	ctx = context.WithoutCancel(ctx)
	err := s.tx(ctx, func(tx *app.Tx) error {
		var err error
		if run, err = tx.Runs.RunForUpdate(ctx, runID); err != nil {
			return err
		}
		tx.ActFor(run.ID)
		return s.advance(ctx, tx, engine, run, s.now())
	})
	return run, err
}

// advance moves a run past the waves whose tasks are all over, the caller
// holding the run's lock. Under WAVES it completes the current wave when
// none of its tasks is pending or running and starts the next (skipping
// waves with nothing left to do); under EAGER every wave ends by itself
// (domain.AdvanceEagerWave) and the current wave is the first not over. The
// run ends after the last wave. A run that already ended does not move.
// It decides under the project's event sequence (tx.HoldEvents), which
// every writer of the run's waves holds: their counters hold still and the
// outcomes settled earlier in this transaction are counted. Call it last:
// the transaction changes no list counter after it.
func (s *Runs) advance(ctx context.Context, tx *app.Tx, p *auth.Principal, run *domain.ExecutionRun, now time.Time) error {
	if run.Status.Finished() {
		return nil
	}
	if err := tx.HoldEvents(ctx, run.ProjectID); err != nil {
		return err
	}
	waves, err := tx.Runs.WavesOfRun(ctx, run.ID)
	if err != nil {
		return err
	}
	moved := false
	if run.Schedule == domain.ScheduleEager {
		if moved, err = s.advanceEager(ctx, tx, run, waves, now); err != nil {
			return err
		}
	} else if moved, err = s.advanceWaves(ctx, tx, run, waves, now); err != nil {
		return err
	}
	last := !slices.ContainsFunc(waves, func(w *domain.Wave) bool { return !w.Status.Finished() })
	if last && run.Status == domain.RunRunning {
		completed := 0
		for _, w := range waves {
			completed += w.CompletedCount
		}
		run.Status, run.FailureReason = domain.RunOutcome(run.TasksTotal, completed)
		run.CompletedAt = &now
		if run.StartedAt != nil {
			run.DurationMs = ptr(int(now.Sub(*run.StartedAt).Milliseconds()))
		}
		if run.Status == domain.RunFailed {
			tx.Record(domain.NewRunFailed(run, now))
		} else {
			tx.Record(domain.NewRunCompleted(run, now))
		}
		if err := s.runEnded(ctx, tx, run, now); err != nil {
			return err
		}
		s.claimed.Delete(run.ID)
		run.UpdatedAt = now
		if err := tx.Runs.UpdateRun(ctx, run); err != nil {
			return err
		}
		return tx.Runs.SealRunCounters(ctx, run, now)
	}
	if !moved {
		return nil
	}
	run.UpdatedAt = now
	return tx.Runs.UpdateRun(ctx, run)
}

// advanceWaves is the WAVES barrier over a run's waves, in order; it
// reports whether a wave or the current wave moved.
func (s *Runs) advanceWaves(ctx context.Context, tx *app.Tx, run *domain.ExecutionRun, waves []*domain.Wave, now time.Time) (bool, error) {
	moved := false
	for _, w := range waves {
		if w.Status.Finished() {
			continue
		}
		tally := w.Tally()
		started := w.Status == domain.WavePending
		next, holds := domain.AdvanceWave(w.Status, tally)
		if started && next != domain.WavePending {
			w.StartedAt = &now
			run.CurrentWave = &w.WaveNumber
		}
		if next != w.Status {
			moved = true
			w.Status = next
			if next.Finished() {
				w.CompletedAt = &now
				if !started && w.StartedAt != nil {
					w.DurationMs = ptr(int(now.Sub(*w.StartedAt).Milliseconds()))
				}
			}
			if err := tx.Runs.UpdateWaveStatus(ctx, w); err != nil {
				return false, err
			}
			switch {
			case next == domain.WaveInProgress && started:
				tx.Record(domain.NewWaveStarted(run, w, now))
			case next.Finished() && !started:
				tx.Record(domain.NewWaveCompleted(run, w, now))
			}
		}
		if holds {
			break
		}
	}
	return moved, nil
}

// advanceEager ends the waves of an EAGER run that have nothing left to do
// and moves its current wave to the first not over. A run that has started
// no wave yet (it is starting) starts its first: its tasks wait on nothing
// and conflict with none of each other. It reports whether anything moved.
func (s *Runs) advanceEager(ctx context.Context, tx *app.Tx, run *domain.ExecutionRun, waves []*domain.Wave, now time.Time) (bool, error) {
	moved := false
	if run.CurrentWave == nil && len(waves) > 0 && waves[0].Status == domain.WavePending && waves[0].Tally().Open {
		w := waves[0]
		w.Status, w.StartedAt = domain.WaveInProgress, &now
		if err := tx.Runs.UpdateWaveStatus(ctx, w); err != nil {
			return false, err
		}
		tx.Record(domain.NewWaveStarted(run, w, now))
		moved = true
	}
	for _, w := range waves {
		if w.Status.Finished() {
			continue
		}
		next := domain.AdvanceEagerWave(w.Status, w.Tally())
		if next == w.Status {
			continue
		}
		started := w.Status != domain.WavePending
		w.Status, w.CompletedAt = next, &now
		if started && w.StartedAt != nil {
			w.DurationMs = ptr(int(now.Sub(*w.StartedAt).Milliseconds()))
		}
		if err := tx.Runs.UpdateWaveStatus(ctx, w); err != nil {
			return false, err
		}
		if started {
			tx.Record(domain.NewWaveCompleted(run, w, now))
		}
		moved = true
	}
	if cur := domain.EagerCurrentWave(waves); !sameInt(cur, run.CurrentWave) {
		run.CurrentWave = cur
		moved = true
	}
	return moved, nil
}

// releaseTask takes a task from its ended execution: back to PENDING when
// retry is allowed and attempts remain, else FAILED (settle, which calls
// closed when a wave closes).
func (s *Runs) releaseTask(ctx context.Context, tx *app.Tx, p *auth.Principal, run *domain.ExecutionRun, t *domain.Task,
	e *domain.TaskExecution, retry bool, reason string, now time.Time, closed func(),
) error {
	t.AssignedAgentID = nil
	if domain.ShouldRetry(retry, e.AttemptNumber, s.maxAttempts, run.Status) {
		if err := s.moveTask(ctx, tx, p, t, domain.StatusPending,
			fmt.Sprintf("%s; retrying (attempt %d of %d failed)", reason, e.AttemptNumber, s.maxAttempts), now); err != nil {
			return err
		}
		_, err := tx.Runs.SetAssignmentStatus(ctx, run.ID, t.ID, domain.OpenWaveStatuses, domain.WavePending, now)
		if errors.Is(err, store.ErrNotFound) {
			err = nil
		}
		return err
	}
	if retry {
		reason = fmt.Sprintf("%s; %d attempts exhausted", reason, e.AttemptNumber)
	}
	if err := s.moveTask(ctx, tx, p, t, domain.StatusFailed, reason, now); err != nil {
		return err
	}
	return s.settle(ctx, tx, p, run, t, domain.StatusFailed, now, closed)
}

// settle records a task's terminal outcome in its run: its place, the
// skipping of its dependents when it failed, and the counters of the waves
// they are in. The counters are written under the project's event sequence
// (tx.CountWaveMove), which every writer of a run's waves holds, so a
// wave's row is never waited for and the transaction whose outcome closes a
// wave's last open task sees it close: then closed is called (before the
// commit), and the run must advance — advance, which takes the sequence
// itself, when the caller holds the run's lock, else advanceRun once this
// transaction has committed.
func (s *Runs) settle(ctx context.Context, tx *app.Tx, p *auth.Principal, run *domain.ExecutionRun, t *domain.Task,
	outcome domain.TaskStatus, now time.Time, closed func(),
) error {
	m := settling(run, t, outcome, now)
	a, err := tx.Runs.SetAssignmentStatus(ctx, m.RunID, m.TaskID, m.From, m.To, now)
	if errors.Is(err, store.ErrNotFound) {
		return nil // no open place in the run: nothing to count
	} else if err != nil {
		return err
	}
	return s.settled(ctx, tx, p, run, t, outcome, a, now, closed)
}

// settling is the move of t's place in run that its outcome makes.
func settling(run *domain.ExecutionRun, t *domain.Task, outcome domain.TaskStatus, now time.Time) store.PlaceMove {
	st := domain.WaveCompleted
	if outcome == domain.StatusFailed {
		st = domain.WaveFailed
	}
	return store.PlaceMove{RunID: run.ID, TaskID: t.ID, From: domain.OpenWaveStatuses, To: st, At: now}
}

// settled is settle once t's place a has moved (settling).
func (s *Runs) settled(ctx context.Context, tx *app.Tx, p *auth.Principal, run *domain.ExecutionRun, t *domain.Task,
	outcome domain.TaskStatus, a *domain.WaveTaskAssignment, now time.Time, closed func(),
) error {
	tx.CountWaveMove(run.ProjectID, a.WaveID, a.TaskStatus, closed)
	if outcome == domain.StatusFailed {
		skipped, err := s.skipDependents(ctx, tx, p, run, t, now)
		if err != nil {
			return err
		}
		for _, sk := range skipped {
			tx.CountWaveMove(run.ProjectID, sk.WaveID, domain.WaveSkipped, closed)
		}
	}
	return nil
}

// skipDependents marks every task of the run that waits, directly or not, on
// failed as SKIPPED and moves it to BLOCKED with a dependency block; it
// returns their places.
func (s *Runs) skipDependents(ctx context.Context, tx *app.Tx, p *auth.Principal, run *domain.ExecutionRun, failed *domain.Task, now time.Time) ([]*domain.WaveTaskAssignment, error) {
	links, err := tx.Planning.PlanningLinksOfList(ctx, run.TaskListID)
	if err != nil {
		return nil, err
	}
	places, err := tx.Runs.AssignmentsOfRun(ctx, run.ID)
	if err != nil {
		return nil, err
	}
	pending := map[string]bool{}
	for _, a := range places {
		if a.TaskStatus == domain.WavePending {
			pending[a.TaskID] = true
		}
	}
	var out []*domain.WaveTaskAssignment
	for _, id := range domain.DependentsToSkip(domain.WaitingOn(links), failed.ID, pending) {
		t, err := tx.Tasks.TaskForUpdate(ctx, id)
		if err != nil {
			return nil, err
		}
		reason := fmt.Sprintf("skipped: depends on %s, which failed", failed.DisplayID)
		a, err := tx.Runs.SetAssignmentStatus(ctx, run.ID, id, []domain.WaveStatus{domain.WavePending}, domain.WaveSkipped, now)
		if errors.Is(err, store.ErrNotFound) {
			continue // claimed meanwhile
		} else if err != nil {
			return nil, err
		}
		out = append(out, a)
		if err := tx.Tasks.InsertBlock(ctx, &domain.TaskBlock{ID: app.NewID(), TaskID: id, BlockType: domain.BlockDependency,
			Reason: reason, BlockingEntityID: &failed.ID, CreatedAt: now}); err != nil {
			return nil, err
		}
		if domain.CheckTransition(t.Status, domain.StatusBlocked, false) == nil {
			if err := s.moveTask(ctx, tx, p, t, domain.StatusBlocked, reason, now); err != nil {
				return nil, err
			}
		}
		if t.TaskListID != nil {
			if err := tx.Lists.SkipItem(ctx, id); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

func sameInt(a, b *int) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
