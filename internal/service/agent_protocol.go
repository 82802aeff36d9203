package service

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/auth"
	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/store"
)

// leaseLost is the answer to a call from an agent that no longer holds its task.
func leaseLost(reason string) error {
	return &domain.Error{Code: domain.CodeLeaseLost, Field: "agentId", Message: "the agent no longer holds its task: " + reason}
}

// claimer is what an agent records of the caller that claimed it: the API
// token (the principal without one, the bootstrap admin, by its user).
func claimer(p *auth.Principal) string {
	if p.TokenID != "" {
		return domain.GlobalID(domain.KindAPIToken, p.TokenID)
	}
	return app.Actor(p)
}

// heldBy reports whether p may speak for agent a: only the token that
// claimed it, or an admin.
func heldBy(a *domain.BuildAgent, p *auth.Principal) bool {
	return p.IsAdmin() || (a.ClaimedBy != nil && *a.ClaimedBy == claimer(p))
}

// errClaimedByOther is the fence's answer to a caller that is not the
// agent's claimer.
func errClaimedByOther() error { return leaseLost("the agent was claimed with another token") }

// FenceAgent is the token fence of the agent calls, for writes made on a
// build agent's behalf outside them (its sessions): only the token that
// claimed agent a, or an admin, may make them; anyone else gets LEASE_LOST
// (field agentId).
func FenceAgent(a *domain.BuildAgent, p *auth.Principal) error {
	if !heldBy(a, p) {
		return errClaimedByOther()
	}
	return nil
}

// FenceAgentID is FenceAgent for the agent with id agentID, read through q
// (inside the caller's transaction). An agent that no longer exists fences
// nothing.
func FenceAgentID(ctx context.Context, q *store.Q, p *auth.Principal, agentID string) error {
	if p.IsAdmin() {
		return nil
	}
	a, err := one(q.Runs.AgentsByIDs(ctx, []string{agentID}))
	if errors.Is(err, store.ErrNotFound) {
		return nil
	} else if err != nil {
		return err
	}
	return FenceAgent(a, p)
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
	// holdSettle (completeTask, failTask) locks the agent's slot first and
	// the task too. It does not lock the run: the waves' counters carry the
	// outcome, and a settlement that closes a wave advances the run after it
	// commits (advanceRun).
	holdSettle
)

// holder loads the calling agent's state and locks its row (lock order: run,
// slot, agent, task — the sweep's and cancel's too); an agent that no longer
// holds its task gets LEASE_LOST (allowCancelled: the heartbeat of an agent
// whose run was cancelled is answered CANCEL instead, with held.task nil).
func (s *Runs) holder(ctx context.Context, tx *app.Tx, p *auth.Principal, agentGID string, mode holdMode, allowCancelled bool) (*held, error) {
	id, err := domain.DecodeID(domain.KindBuildAgent, agentGID, "agentId")
	if err != nil {
		return nil, err
	}
	// Lock order, everywhere: run, slot, agent, task. A settling call locks
	// the agent's slot, then the agent (one statement); the other calls lock
	// only the agent.
	hold, err := tx.Runs.HoldAgent(ctx, id, mode == holdSettle)
	if errors.Is(err, store.ErrNotFound) {
		return nil, &domain.Error{Code: domain.CodeNotFound, Field: "agentId", Message: "agent not found"}
	} else if err != nil {
		return nil, err
	}
	a, exec, run := &hold.BuildAgent, &hold.Execution, &hold.Run
	tx.ActFor(run.ID)
	if ok, err := app.CanSeeProjectID(ctx, tx.Q, p, run.ProjectID); err != nil {
		return nil, err
	} else if !ok {
		return nil, &domain.Error{Code: domain.CodeNotFound, Field: "agentId", Message: "agent not found"}
	}
	if !heldBy(a, p) {
		return nil, errClaimedByOther()
	}
	tx.ActAsAgent(a.GlobalID())
	if !a.Status.Live() || exec.Status != domain.ExecRunning {
		if allowCancelled && run.Status == domain.RunCancelled {
			return &held{agent: a, exec: exec, run: run, cancelled: true}, nil
		}
		return nil, leaseLost(deref(a.TerminationReason))
	}
	// The clock is read once every lock is held: with the task's, when
	// that is the last.
	var (
		t   *domain.Task
		now time.Time
	)
	if mode == holdSettle {
		t, now, err = tx.Tasks.TaskForUpdateNow(ctx, a.TaskID)
	} else {
		if mode == holdReport {
			if t, err = one(tx.Tasks.TasksByIDs(ctx, []string{a.TaskID})); err != nil {
				return nil, err
			}
		}
		now, err = tx.Now(ctx)
	}
	if err != nil {
		return nil, err
	}
	return &held{agent: a, exec: exec, run: run, task: t, now: now}, nil
}

// lockSlotOf locks the slot agent a holds (or held) in its run, before the
// agent's own row: the lock order is run, slot, agent. An agent without a
// slot (it ended before slots existed) locks none.
func lockSlotOf(ctx context.Context, tx *app.Tx, a *domain.BuildAgent) error {
	if a.Slot == nil {
		return nil
	}
	_, err := tx.Runs.LockSlot(ctx, a.RunID, *a.Slot)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	return err
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

// renewLease renews the lease of the caller's live agent agentGID before an
// agent call's transaction (store.DB.StampLease): every call of an agent is
// a sign of life, and its transaction may wait for a connection of the main
// pool and for locks behind claims, during which the sweep must not take
// the task away. An agent the caller may not speak for is left as it is
// (the call then answers LEASE_LOST or NOT_FOUND from its transaction).
//
// settling: the call settles the agent's task (completeTask, failTask),
// and the agent becomes COMPLETING with the stamp.
func (s *Runs) renewLease(ctx context.Context, p *auth.Principal, agentGID string, settling bool) error {
	id, err := domain.DecodeID(domain.KindBuildAgent, agentGID, "agentId")
	if err != nil {
		return nil // the transaction answers it
	}
	_, err = s.db.StampLease(ctx, store.Pulse{AgentID: id, AnyClaimer: p.IsAdmin(), ClaimedBy: claimer(p), Scope: app.ScopeOf(p),
		Completing: settling})
	return err
}

// Heartbeat records that an agent is alive and tells it what to do next.
func (s *Runs) Heartbeat(ctx context.Context, in domain.HeartbeatInput) (*domain.BuildAgent, domain.AgentDirective, error) {
	ctx = store.Urgent(ctx) // a lease renewal: on SQLite it takes the writer first
	p, err := app.Caller(ctx)
	if err != nil {
		return nil, "", err
	}
	if in.ProgressPercent != nil && (*in.ProgressPercent < 0 || *in.ProgressPercent > 100) {
		return nil, "", domain.InputError("progressPercent", "must be between 0 and 100")
	}
	if err := domain.CheckAgentTexts(in.CurrentStep, nil); err != nil {
		return nil, "", err
	}
	// Most heartbeats only keep their agent alive: one statement.
	id, err := domain.DecodeID(domain.KindBuildAgent, in.AgentID, "agentId")
	if err != nil {
		return nil, "", err
	}
	pulse := store.Pulse{AgentID: id, HeartbeatID: app.NewID(),
		AnyClaimer: p.IsAdmin(), ClaimedBy: claimer(p), Scope: app.ScopeOf(p),
		ProgressPercent: in.ProgressPercent, CurrentStep: in.CurrentStep, MemoryMb: in.MemoryMb, CPUPercent: in.CPUPercent,
	}
	if pulsed, err := s.db.PulseAgent(ctx, pulse); err == nil {
		return &pulsed.BuildAgent, domain.DirectiveFor(pulsed.RunStatus), nil
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, "", err
	}
	// The full path waits for the main pool and, when the heartbeat is news,
	// for the project's event sequence behind claims: the lease is renewed
	// first, apart, so that it never waits behind them.
	if _, err := s.db.StampLease(ctx, pulse); err != nil {
		return nil, "", err
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
		a.Status = a.Status.AfterHeartbeat()
		a.ConsecutiveMissedHeartbeats = 0
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
	lines, err := domain.CheckLogBatch(in.Lines)
	if err != nil {
		return nil, err
	}
	var exec *domain.TaskExecution
	if err := s.renewLease(ctx, p, in.AgentID, false); err != nil {
		return nil, err
	}
	err = s.tx(ctx, func(tx *app.Tx) error {
		h, err := s.holder(ctx, tx, p, in.AgentID, holdAlive, false)
		if err != nil {
			return err
		}
		exec = h.exec
		kept, dropped := domain.LogRoom(exec.LogLines, lines)
		if err := tx.Runs.AppendLogLines(ctx, exec.ID, exec.LogLines, kept); err != nil {
			return err
		}
		tx.Record(domain.NewLogAppended(h.run, exec, exec.LogLines+1, kept, dropped, h.now))
		exec.LogLines += len(kept)
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
	if err := domain.CheckAgentTexts(nil, in.TestName); err != nil {
		return nil, err
	}
	var res *domain.TaskTestResult
	if err := s.renewLease(ctx, p, in.AgentID, false); err != nil {
		return nil, err
	}
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
			TestName: in.TestName, Status: in.Status, Output: domain.ClipOpt(in.Output, domain.MaxTestOutputBytes),
			Error: domain.ClipOpt(in.Error, domain.MaxErrorTextBytes), DurationMs: dur,
			ExecutedBy: ptr(h.agent.GlobalID()), ExecutedAt: h.now}
		if err := tx.Runs.InsertTestResult(ctx, res); err != nil {
			return err
		}
		tx.Record(domain.NewTestResultRecorded(h.run, res))
		return nil
	})
	return res, err
}

// endAgent terminates an agent for end (reason: its terminationReason),
// frees its slot (the caller holds it) and ends its execution.
func endAgent(ctx context.Context, tx *app.Tx, a *domain.BuildAgent, e *domain.TaskExecution, st domain.ExecutionStatus,
	end domain.AgentEndReason, reason string, lastErr *string, now time.Time,
) error {
	ending(a, e, st, end, reason, lastErr, now)
	return tx.Runs.EndAgent(ctx, a, e)
}

// ending sets what ending agent a and its execution e changes in them.
func ending(a *domain.BuildAgent, e *domain.TaskExecution, st domain.ExecutionStatus, end domain.AgentEndReason, reason string,
	lastErr *string, now time.Time,
) {
	domain.EndAgent(a, end, reason, now)
	e.Status, e.EndedAt, e.LastError = st, &now, lastErr
	e.DurationMs = ptr(int(now.Sub(e.StartedAt).Milliseconds()))
}

// logExecution adds ended execution e of agent a to its task's
// executionLog, before the task's row is written.
func logExecution(t *domain.Task, a *domain.BuildAgent, e *domain.TaskExecution, notes *string) error {
	log, err := domain.AppendExecutionLog(t.ExecutionLog, e, a.GlobalID(), notes)
	if err != nil {
		return err
	}
	t.ExecutionLog = log
	return nil
}

// keepNotes keeps an agent's notes on its task's list item.
func keepNotes(ctx context.Context, tx *app.Tx, t *domain.Task, notes *string) error {
	if notes == nil || t.TaskListID == nil {
		return nil
	}
	return tx.Lists.SetItemNotes(ctx, t.ID, *notes)
}

// CompleteTask reports the calling agent's task done: it is validated
// against its declared tests and ends COMPLETED or FAILED.
func (s *Runs) CompleteTask(ctx context.Context, in domain.CompleteTaskInput) (*domain.Task, *domain.TaskExecution, error) {
	ctx = store.Urgent(ctx) // holds a lease: on SQLite it takes the writer before claims
	p, err := app.Caller(ctx)
	if err != nil {
		return nil, nil, err
	}
	if err := domain.CheckEffortMinutes("actualEffortMinutes", in.ActualEffortMinutes); err != nil {
		return nil, nil, err
	}
	files, err := domain.CheckList("filesModified", in.FilesModified, domain.MaxReportedFiles, domain.MaxPathLength)
	if err != nil {
		return nil, nil, err
	}
	if _, err := domain.CheckList("gitCommits", in.GitCommits, domain.MaxReportedFiles, domain.MaxPathLength); err != nil {
		return nil, nil, err
	}
	in.FilesModified = files
	if in.Notes, err = domain.CheckOptText("notes", in.Notes, domain.MaxExecutionNotesBytes); err != nil {
		return nil, nil, err
	}
	var (
		h      *held
		closed bool
	)
	if err := s.renewLease(ctx, p, in.AgentID, true); err != nil {
		return nil, nil, err
	}
	err = s.tx(ctx, func(tx *app.Tx) error {
		closed = false
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
		from, moves := t.Status, &transitionWrites{}
		if _, err := s.Tasks.prepareTransition(ctx, tx, p, t, domain.StatusValidating, "the agent reported the task done", true,
			now, moves); err != nil {
			return err
		}
		results, err := tx.Runs.TestResultsOfExecution(ctx, e.ID)
		if err != nil {
			return err
		}
		impacts, err := tx.Tasks.FileImpactsOfTasks(ctx, []string{t.ID})
		if err != nil {
			return err
		}
		accurate, inaccurate := domain.ImpactAccuracy(impacts, in.FilesModified)
		if err := tx.Runs.MarkImpactAccuracy(ctx, accurate, inaccurate, now); err != nil {
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
		ending(h.agent, e, st, domain.EndAgentFor(outcome), "task reported done", lastErr, now)
		if err := logExecution(t, h.agent, e, in.Notes); err != nil {
			return err
		}
		if err := s.moveTaskWith(ctx, tx, p, t, from, outcome, reason, now, moves); err != nil {
			return err
		}
		if err := keepNotes(ctx, tx, t, in.Notes); err != nil {
			return err
		}
		// The agent ends and the task's place in the run moves: one statement.
		place, err := tx.Runs.EndAgentMovingPlace(ctx, h.agent, e, settling(h.run, t, outcome, now))
		if errors.Is(err, store.ErrNotFound) {
			return nil // no open place in the run: nothing to count
		} else if err != nil {
			return err
		}
		return s.settled(ctx, tx, p, h.run, t, outcome, place, now, func() { closed = true })
	})
	if err != nil {
		return nil, nil, err
	}
	if closed {
		if _, err := s.advanceRun(ctx, h.run.ID); err != nil {
			return nil, nil, err
		}
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
	ctx = store.Urgent(ctx) // holds a lease: on SQLite it takes the writer before claims
	p, err := app.Caller(ctx)
	if err != nil {
		return nil, nil, err
	}
	in.Error = domain.Clip(in.Error, domain.MaxErrorTextBytes)
	if in.Notes, err = domain.CheckOptText("notes", in.Notes, domain.MaxExecutionNotesBytes); err != nil {
		return nil, nil, err
	}
	var (
		h      *held
		closed bool
	)
	if err := s.renewLease(ctx, p, in.AgentID, true); err != nil {
		return nil, nil, err
	}
	err = s.tx(ctx, func(tx *app.Tx) error {
		closed = false
		if h, err = s.holder(ctx, tx, p, in.AgentID, holdSettle, false); err != nil {
			return err
		}
		h.agent.ErrorMessage = &in.Error
		if err := endAgent(ctx, tx, h.agent, h.exec, domain.ExecFailed, domain.EndTaskFailed, "task failed", &in.Error, h.now); err != nil {
			return err
		}
		if err := logExecution(h.task, h.agent, h.exec, in.Notes); err != nil {
			return err
		}
		if err := keepNotes(ctx, tx, h.task, in.Notes); err != nil {
			return err
		}
		return s.releaseTask(ctx, tx, p, h.run, h.task, h.exec, deref(in.Retryable), "agent failure: "+in.Error, h.now,
			func() { closed = true })
	})
	if err != nil {
		return nil, nil, err
	}
	if closed {
		if _, err := s.advanceRun(ctx, h.run.ID); err != nil {
			return nil, nil, err
		}
	}
	return h.task, h.exec, nil
}
