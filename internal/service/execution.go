package service

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
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

// leaseLost is the answer to a call from an agent that no longer holds its task.
func leaseLost(reason string) error {
	return &domain.Error{Code: domain.CodeLeaseLost, Field: "agentId", Message: "the agent no longer holds its task: " + reason}
}

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
		if err := s.runEnded(ctx, tx, run, now); err != nil {
			return err
		}
	}
	run.UpdatedAt = now
	if err := tx.Runs.UpdateRun(ctx, run); err != nil {
		return err
	}
	return tx.Runs.RecountRun(ctx, run.ID, now)
}

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
		now, err := tx.Tasks.Now(ctx)
		if err != nil {
			return err
		}
		now = now.UTC().Truncate(time.Microsecond)
		agent := &domain.BuildAgent{ID: app.NewID(), RunID: run.ID, WaveID: wave.ID, TaskID: t.ID, TaskListID: run.TaskListID,
			ProcessID: in.ProcessID, Hostname: in.Hostname, WorkingDirectory: in.WorkingDirectory,
			Status: domain.AgentRunning, LastHeartbeatAt: now, SpawnedAt: now, ClaimedBy: ptr(app.Actor(p))}
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
		if err := tx.Runs.RecountRun(ctx, run.ID, now); err != nil {
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
		// Tasks that blocking questions hold back are the only ones left?
		if held, err := q.Questions.WaveHeldByQuestions(ctx, wave.ID, domain.WavePending, domain.StatusPending,
			domain.QuestionPending); err != nil {
			return nil, nil, nil, err
		} else if held {
			w = domain.WaitOnQuestion
		}
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

// held is an agent call's context: the agent (locked), its execution, run
// and (holdReport, holdSettle) task.
type held struct {
	agent     *domain.BuildAgent
	exec      *domain.TaskExecution
	run       *domain.ExecutionRun
	task      *domain.Task
	cancelled bool // the agent was ended by the run's cancellation (allowCancelled)
	now       time.Time
}

// holdMode says what an agent call locks besides the agent's own row.
type holdMode int

const (
	// holdAlive (heartbeat, log lines) reads the run without locking it and
	// leaves the task unread: the agent's row lock orders these calls against
	// the sweep and the agent's own settlement, and they never wait behind
	// claims or other agents' settlements of the same run.
	holdAlive holdMode = iota
	// holdReport (test results) is holdAlive with the task read: its
	// declared tests.
	holdReport
	// holdSettle (completeTask, failTask) locks the run and the task too: the
	// task's outcome moves the run's wave barrier.
	holdSettle
)

// holder loads the calling agent's state and locks its row (lock order:
// agent, run, task — the sweep's too); an agent that no longer holds its task
// gets LEASE_LOST (allowCancelled: the heartbeat of an agent whose run was
// cancelled is answered CANCEL instead, with held.task nil).
func (s *Runs) holder(ctx context.Context, tx *app.Tx, p *auth.Principal, agentGID string, mode holdMode, allowCancelled bool) (*held, error) {
	id, err := domain.DecodeID(domain.KindBuildAgent, agentGID, "agentId")
	if err != nil {
		return nil, err
	}
	a, err := tx.Runs.AgentForUpdate(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, &domain.Error{Code: domain.CodeNotFound, Field: "agentId", Message: "agent not found"}
	} else if err != nil {
		return nil, err
	}
	var run *domain.ExecutionRun
	if mode == holdSettle {
		run, err = tx.Runs.RunForUpdate(ctx, a.RunID)
	} else {
		run, err = one(tx.Runs.RunsByIDs(ctx, []string{a.RunID}))
	}
	if err != nil {
		return nil, err
	}
	tx.ActFor(run.ID)
	if ok, err := app.CanSeeProjectID(ctx, tx.Q, p, run.ProjectID); err != nil {
		return nil, err
	} else if !ok {
		return nil, &domain.Error{Code: domain.CodeNotFound, Field: "agentId", Message: "agent not found"}
	}
	exec, err := tx.Runs.ExecutionOfAgent(ctx, a.ID)
	if err != nil {
		return nil, err
	}
	if !a.Status.Live() || exec.Status != domain.ExecRunning {
		if allowCancelled && run.Status == domain.RunCancelled {
			return &held{agent: a, exec: exec, run: run, cancelled: true}, nil
		}
		return nil, leaseLost(deref(a.TerminationReason))
	}
	var t *domain.Task
	switch mode {
	case holdSettle:
		t, err = tx.Tasks.TaskForUpdate(ctx, a.TaskID)
	case holdReport:
		t, err = one(tx.Tasks.TasksByIDs(ctx, []string{a.TaskID}))
	}
	if err != nil {
		return nil, err
	}
	now, err := tx.Tasks.Now(ctx)
	if err != nil {
		return nil, err
	}
	return &held{agent: a, exec: exec, run: run, task: t, now: now.UTC().Truncate(time.Microsecond)}, nil
}

// one is the single row of a by-id load; store.ErrNotFound when there is none.
func one[T any](rows []*T, err error) (*T, error) {
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, store.ErrNotFound
	}
	return rows[0], nil
}

// Heartbeat records that an agent is alive and tells it what to do next.
func (s *Runs) Heartbeat(ctx context.Context, in domain.HeartbeatInput) (*domain.BuildAgent, domain.AgentDirective, error) {
	p, err := app.Caller(ctx)
	if err != nil {
		return nil, "", err
	}
	if in.ProgressPercent != nil && (*in.ProgressPercent < 0 || *in.ProgressPercent > 100) {
		return nil, "", domain.InputError("progressPercent", "must be between 0 and 100")
	}
	var (
		agent *domain.BuildAgent
		dir   domain.AgentDirective
	)
	err = s.tx(ctx, func(tx *app.Tx) error {
		h, err := s.holder(ctx, tx, p, in.AgentID, holdAlive, true)
		if err != nil {
			return err
		}
		agent = h.agent
		if h.cancelled {
			dir = domain.DirectiveCancel
			return nil
		}
		a := h.agent
		news := domain.HeartbeatIsNews(a, in.ProgressPercent, in.CurrentStep)
		a.LastHeartbeatAt = h.now
		a.HeartbeatCount++
		if in.ProgressPercent != nil {
			a.ProgressPercent = *in.ProgressPercent
		}
		if in.CurrentStep != nil {
			a.CurrentStep = in.CurrentStep
		}
		if in.MemoryMb != nil {
			a.MemoryMb = in.MemoryMb
		}
		if in.CPUPercent != nil {
			a.CPUPercent = in.CPUPercent
		}
		if err := tx.Runs.UpdateAgent(ctx, a); err != nil {
			return err
		}
		hb := &domain.AgentHeartbeat{ID: app.NewID(), AgentID: a.ID, RunID: a.RunID, TaskID: a.TaskID,
			Status: a.Status, ProgressPercent: in.ProgressPercent, CurrentStep: in.CurrentStep,
			MemoryMb: in.MemoryMb, CPUPercent: in.CPUPercent, RecordedAt: h.now}
		if err := tx.Runs.InsertHeartbeat(ctx, hb); err != nil {
			return err
		}
		if news {
			tx.Record(domain.NewAgentHeartbeat(h.run, hb))
		}
		dir = domain.DirectiveFor(h.run.Status)
		return nil
	})
	if err != nil {
		return nil, "", err
	}
	return agent, dir, nil
}

// AppendExecutionLog appends lines to the calling agent's execution log.
func (s *Runs) AppendExecutionLog(ctx context.Context, in domain.AppendExecutionLogInput) (*domain.TaskExecution, error) {
	p, err := app.Caller(ctx)
	if err != nil {
		return nil, err
	}
	if len(in.Lines) > 10000 {
		return nil, domain.InputError("lines", "at most 10000 lines per call")
	}
	var exec *domain.TaskExecution
	err = s.tx(ctx, func(tx *app.Tx) error {
		h, err := s.holder(ctx, tx, p, in.AgentID, holdAlive, false)
		if err != nil {
			return err
		}
		exec = h.exec
		if err := tx.Runs.AppendLogLines(ctx, exec.ID, exec.LogLines, in.Lines); err != nil {
			return err
		}
		tx.Record(domain.NewLogAppended(h.run, exec, exec.LogLines+1, in.Lines, h.now))
		exec.LogLines += len(in.Lines)
		return nil
	})
	return exec, err
}

// RecordTestResult records the outcome of one of the task's declared tests.
func (s *Runs) RecordTestResult(ctx context.Context, in domain.RecordTestResultInput) (*domain.TaskTestResult, error) {
	p, err := app.Caller(ctx)
	if err != nil {
		return nil, err
	}
	var res *domain.TaskTestResult
	err = s.tx(ctx, func(tx *app.Tx) error {
		h, err := s.holder(ctx, tx, p, in.AgentID, holdReport, false)
		if err != nil {
			return err
		}
		if in.TestIndex < 0 || in.TestIndex >= len(h.task.DeclaredTests(in.Level)) {
			return domain.InputError("testIndex", "the task declares no %s test %d", in.Level, in.TestIndex)
		}
		dur := in.DurationMs
		res = &domain.TaskTestResult{ID: app.NewID(), TaskID: h.task.ID, TaskListID: h.exec.TaskListID, RunID: h.run.ID,
			ExecutionID: h.exec.ID, AgentID: h.agent.ID, TestLevel: in.Level, TestIndex: in.TestIndex,
			TestName: in.TestName, Status: in.Status, Output: in.Output, Error: in.Error, DurationMs: dur,
			ExecutedBy: ptr(h.agent.GlobalID()), ExecutedAt: h.now}
		if err := tx.Runs.InsertTestResult(ctx, res); err != nil {
			return err
		}
		tx.Record(domain.NewTestResultRecorded(h.run, res))
		return nil
	})
	return res, err
}

// endAgent terminates an agent and ends its execution.
func endAgent(ctx context.Context, tx *app.Tx, a *domain.BuildAgent, e *domain.TaskExecution, st domain.ExecutionStatus, reason string, lastErr *string, now time.Time) error {
	a.Status, a.TerminatedAt, a.TerminationReason = domain.AgentTerminated, &now, &reason
	if err := tx.Runs.UpdateAgent(ctx, a); err != nil {
		return err
	}
	e.Status, e.EndedAt, e.LastError = st, &now, lastErr
	e.DurationMs = ptr(int(now.Sub(e.StartedAt).Milliseconds()))
	return tx.Runs.UpdateExecution(ctx, e)
}

// CompleteTask reports the calling agent's task done: it is validated
// against its declared tests and ends COMPLETED or FAILED.
func (s *Runs) CompleteTask(ctx context.Context, in domain.CompleteTaskInput) (*domain.Task, *domain.TaskExecution, error) {
	p, err := app.Caller(ctx)
	if err != nil {
		return nil, nil, err
	}
	var h *held
	err = s.tx(ctx, func(tx *app.Tx) error {
		if h, err = s.holder(ctx, tx, p, in.AgentID, holdSettle, false); err != nil {
			return err
		}
		t, e, now := h.task, h.exec, h.now
		e.FilesModified = domain.Strings(orEmpty(in.FilesModified))
		e.GitCommits = domain.Strings(orEmpty(in.GitCommits))
		if in.ActualEffortMinutes != nil {
			t.ActualEffortMinutes = in.ActualEffortMinutes
		}
		t.AssignedAgentID = nil
		if _, err := s.Tasks.transition(ctx, tx, p, t, domain.StatusValidating, "the agent reported the task done", true, now); err != nil {
			return err
		}
		results, err := tx.Runs.TestResultsOfExecution(ctx, e.ID)
		if err != nil {
			return err
		}
		if err := tx.Runs.MarkImpactAccuracy(ctx, t.ID, in.FilesModified, now); err != nil {
			return err
		}
		bad := domain.UnpassedTests(t, results)
		outcome, st, reason := domain.StatusCompleted, domain.ExecCompleted, "every declared test passed"
		var lastErr *string
		if len(bad) > 0 {
			outcome, st = domain.StatusFailed, domain.ExecFailed
			reason = "tests not passed: " + strings.Join(bad, "; ")
			lastErr = &reason
		}
		if err := s.moveTask(ctx, tx, p, t, outcome, reason, now); err != nil {
			return err
		}
		if err := endAgent(ctx, tx, h.agent, e, st, "task reported done", lastErr, now); err != nil {
			return err
		}
		return s.settle(ctx, tx, p, h.run, t, outcome, now)
	})
	if err != nil {
		return nil, nil, err
	}
	return h.task, h.exec, nil
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// FailTask reports the calling agent's task failed: retried (back to
// PENDING) when retryable and attempts remain, else FAILED.
func (s *Runs) FailTask(ctx context.Context, in domain.FailTaskInput) (*domain.Task, *domain.TaskExecution, error) {
	p, err := app.Caller(ctx)
	if err != nil {
		return nil, nil, err
	}
	var h *held
	err = s.tx(ctx, func(tx *app.Tx) error {
		if h, err = s.holder(ctx, tx, p, in.AgentID, holdSettle, false); err != nil {
			return err
		}
		if err := endAgent(ctx, tx, h.agent, h.exec, domain.ExecFailed, "task failed", &in.Error, h.now); err != nil {
			return err
		}
		return s.releaseTask(ctx, tx, p, h.run, h.task, h.exec, deref(in.Retryable), "agent failure: "+in.Error, h.now)
	})
	if err != nil {
		return nil, nil, err
	}
	return h.task, h.exec, nil
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
		return tx.Runs.RecountRun(ctx, run.ID, now)
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
