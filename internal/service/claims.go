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

// A claim never locks its run's row, so claims and completions of one run
// proceed side by side. What a claim locks, in order:
//
//  1. its task, the best claimable one that no other claim holds (SKIP
//     LOCKED on PostgreSQL) — under EAGER also the rows of the tasks it
//     conflicts with, passed over when held, so two claims never take a
//     conflicting pair;
//  2. a free slot of the run (SKIP LOCKED): none left is CONCURRENCY_LIMIT,
//     so at most maxParallelAgents agents live;
//  3. nothing else: it reads the run's status after taking the slot, and
//     pausing or cancelling a run locks every slot first, so a claim either
//     commits before the pause or cancel or sees it.
//
// SQLite's immediate transactions take the single write lock instead.

// claimWait is the answer of a claim that hands out nothing.
type claimWait struct{ reason domain.WaitReason }

func (w *claimWait) Error() string { return "claim: " + string(w.reason) }

// claimLookAhead is how long after a claim of a run handed out a task the
// next claims skip the look-ahead read (claimable): while tasks are being
// handed out, the claim's own transaction finds the next one.
const claimLookAhead = 250 * time.Millisecond

// eagerTries bounds the candidates an EAGER claim examines in one
// transaction: each one it passes over had a conflicting task taken by a
// claim in flight; the agent's next poll looks again.
const eagerTries = 8

// ClaimTask hands the caller the best claimable task of the run — under
// WAVES a PENDING task of its current wave, under EAGER any PENDING task
// whose dependencies completed and that conflicts with no running task — as
// a new agent and execution, or says why it must wait.
func (s *Runs) ClaimTask(ctx context.Context, in domain.ClaimTaskInput) (*domain.ClaimResult, error) {
	p, err := app.Caller(ctx)
	if err != nil {
		return nil, err
	}
	if err := domain.CheckClaim(&in); err != nil {
		return nil, err
	}
	r, state, err := s.visibleClaimState(ctx, p, in.RunID, "runId")
	if err != nil {
		return nil, err
	}
	// Most calls of polling agents find nothing to claim: answer those from
	// plain reads, without a write transaction.
	lookAhead := true
	if at, ok := s.claimed.Load(r.ID); ok && time.Since(time.Unix(0, at.(int64))) < claimLookAhead {
		lookAhead = false
	}
	r, wave, wait, err := s.claimable(ctx, r, state, lookAhead)
	if err != nil {
		return nil, err
	} else if wait != nil {
		return &domain.ClaimResult{WaitReason: wait}, nil
	}
	var res *domain.ClaimResult
	err = s.tx(ctx, func(tx *app.Tx) error {
		res = &domain.ClaimResult{}
		tx.ActFor(r.ID)
		t, wave, err := s.lockClaimable(ctx, tx, r, wave)
		if err != nil {
			return err
		}
		agentID := app.NewID()
		slot, err := tx.Runs.TakeSlot(ctx, r.ID, agentID)
		if errors.Is(err, store.ErrNotFound) {
			return &claimWait{domain.WaitConcurrencyLimit}
		} else if err != nil {
			return err
		}
		// Read after the slot: a pause or cancel that committed first shows.
		cr, err := tx.Runs.RunForClaim(ctx, r.ID, t.ID)
		if err != nil {
			return err
		}
		run, now := &cr.ExecutionRun, cr.Now
		if w := domain.ClaimWait(run, 0); w != nil {
			return &claimWait{*w}
		}
		// Under EAGER the first claim of a wave starts it. A run's waves
		// are written under its project's event sequence, taken before the
		// lease is stamped.
		if run.Schedule == domain.ScheduleEager && domain.StartsWave(wave.Status) {
			if err := tx.HoldEvents(ctx, run.ProjectID); err != nil {
				return err
			}
			if now, err = tx.Now(ctx); err != nil {
				return err
			}
			if started, err := tx.Runs.StartWave(ctx, wave.ID, now); err != nil {
				return err
			} else if started {
				wave.Status, wave.StartedAt = domain.WaveInProgress, &now
				tx.Record(domain.NewWaveStarted(run, wave, now))
			}
		}
		agent := &domain.BuildAgent{ID: agentID, RunID: run.ID, WaveID: wave.ID, TaskID: t.ID, TaskListID: run.TaskListID,
			ProcessID: in.ProcessID, Hostname: in.Hostname, WorkingDirectory: in.WorkingDirectory,
			Status: domain.AgentSpawning, LastHeartbeatAt: now, SpawnedAt: now, ClaimedBy: ptr(claimer(p)), Slot: &slot}
		exec := &domain.TaskExecution{ID: app.NewID(), TaskID: t.ID, TaskListID: run.TaskListID, RunID: run.ID,
			AgentID: agent.ID, WaveID: wave.ID, AttemptNumber: cr.Attempts + 1, Status: domain.ExecRunning,
			StartedAt: now, FilesModified: domain.Strings{}, GitCommits: domain.Strings{}, CreatedAt: now}
		// The agent, its execution and the task's place, IN_PROGRESS.
		if err := tx.Runs.StartAgent(ctx, agent, exec, now); err != nil {
			return err
		}
		t.AssignedAgentID = &agent.ID
		tx.ActAsAgent(agent.GlobalID())
		if err := s.moveTask(ctx, tx, p, t, domain.StatusInProgress,
			claimReason(in.Hostname, exec.AttemptNumber), now); err != nil {
			return err
		}
		tx.Record(domain.NewTaskClaimed(run, wave, exec, now))
		res.Agent, res.Task, res.Execution, res.Wave = agent, t, exec, wave
		return nil
	})
	var w *claimWait
	if errors.As(err, &w) {
		return &domain.ClaimResult{WaitReason: &w.reason}, nil
	}
	if err != nil {
		return nil, err
	}
	s.claimed.Store(r.ID, time.Now().UnixNano())
	// The lease runs from the commit: the transaction stamped the agent
	// when it took the task, before it waited for its commit.
	// The claim has committed: a stamp that fails leaves the transaction's.
	if at, err := s.db.StampClaim(ctx, res.Agent.ID); err != nil {
		s.log.WarnContext(ctx, "claim: the lease's stamp failed", "err", err)
	} else if at != nil {
		res.Agent.LastHeartbeatAt = *at
	}
	return res, nil
}

// claimState is what a claim reads of its run before it locks anything:
// its live agents and its waves in order (store.RunQueries.ClaimState).
type claimState struct {
	live  int
	waves []*domain.Wave
}

// visibleClaimState loads the row of a run the caller can see (NOT_FOUND
// otherwise), without its live counters, and its claimState: what claims
// need, in one statement.
func (s *Runs) visibleClaimState(ctx context.Context, p *auth.Principal, gid, field string) (*domain.ExecutionRun, *claimState, error) {
	id, err := domain.DecodeID(domain.KindExecutionRun, gid, field)
	if err != nil {
		return nil, nil, err
	}
	r, live, waves, err := s.db.Runs.RunClaimState(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, &domain.Error{Code: domain.CodeNotFound, Field: field, Message: "execution run not found"}
	} else if err != nil {
		return nil, nil, err
	}
	if ok, err := app.CanSeeProjectID(ctx, &s.db.Q, p, r.ProjectID); err != nil {
		return nil, nil, err
	} else if !ok {
		return nil, nil, &domain.Error{Code: domain.CodeNotFound, Field: field, Message: "execution run not found"}
	}
	return r, &claimState{live: live, waves: waves}, nil
}

// claimable says, from plain reads, why a claim of run would get nothing;
// nil: a task looks claimable (under WAVES in wave, the current one) — or,
// without lookAhead, the run is running with room for an agent. A wave
// whose tasks are all over but that is still open (the completion that
// closed it ended before advancing the run) is advanced first. It returns
// the run as it then stands. state is the run's claimState as read with
// it, or nil.
func (s *Runs) claimable(ctx context.Context, run *domain.ExecutionRun, state *claimState, lookAhead bool) (*domain.ExecutionRun, *domain.Wave, *domain.WaitReason, error) {
	q := &s.db.Q
	for range 2 {
		if w := domain.ClaimWait(run, 0); w != nil && *w != domain.WaitConcurrencyLimit {
			return run, nil, w, nil
		}
		if state == nil {
			live, waves, err := q.Runs.ClaimState(ctx, run.ID)
			if err != nil {
				return nil, nil, nil, err
			}
			state = &claimState{live: live, waves: waves}
		}
		live, waves := state.live, state.waves
		state = nil // after an advance, read again
		var err error
		if w := domain.ClaimWait(run, live); w != nil {
			return run, nil, w, nil
		}
		if domain.RunNeedsAdvance(run, waves) {
			if run, err = s.advanceRun(ctx, run.ID); err != nil {
				return nil, nil, nil, err
			}
			continue
		}
		var wave *domain.Wave
		if run.Schedule != domain.ScheduleEager {
			wave = waves[*run.CurrentWave-1]
		}
		if !lookAhead {
			return run, wave, nil, nil
		}
		if run.Schedule == domain.ScheduleEager {
			_, err = q.Runs.EagerCandidate(ctx, run.ID, nil)
		} else {
			_, err = q.Runs.ClaimableTask(ctx, run.TaskListID, run.ID, wave.ID)
		}
		if err == nil {
			return run, wave, nil, nil
		} else if !errors.Is(err, store.ErrNotFound) {
			return nil, nil, nil, err
		}
		held, err := s.heldByQuestions(ctx, q, run, wave)
		if err != nil {
			return nil, nil, nil, err
		}
		w := domain.NoTaskWait(run, live, 0, held)
		return run, nil, &w, nil
	}
	w := domain.WaitNoReadyTask
	return run, nil, &w, nil
}

// heldByQuestions reports whether tasks that blocking questions hold back
// are among the run's claimable ones (wave's, under WAVES).
func (s *Runs) heldByQuestions(ctx context.Context, q *store.Q, run *domain.ExecutionRun, wave *domain.Wave) (bool, error) {
	if run.Schedule == domain.ScheduleEager {
		return q.Runs.EagerHeldByQuestions(ctx, run.ID)
	}
	return q.Questions.WaveHeldByQuestions(ctx, wave.ID, domain.WavePending, domain.StatusPending, domain.QuestionPending)
}

// lockClaimable locks the task a claim of run gets (under WAVES in wave)
// and returns it with its wave; a claimWait when there is none.
func (s *Runs) lockClaimable(ctx context.Context, tx *app.Tx, run *domain.ExecutionRun, wave *domain.Wave) (*domain.Task, *domain.Wave, error) {
	if run.Schedule == domain.ScheduleEager {
		var skip []string
		for range eagerTries {
			c, err := tx.Runs.EagerCandidate(ctx, run.ID, skip)
			if errors.Is(err, store.ErrNotFound) {
				break
			} else if err != nil {
				return nil, nil, err
			}
			var partners []domain.TaskStatus
			if c.Conflicts > 0 {
				if partners, err = tx.Runs.ConflictingStatuses(ctx, run.ID, c.ID); err != nil {
					return nil, nil, err
				}
			}
			// A conflicting task another transaction holds may be starting.
			if len(partners) == c.Conflicts && domain.EagerReady(nil, partners) {
				return &c.Task, &c.Wave, nil
			}
			skip = append(skip, c.ID)
		}
		return nil, nil, s.noTaskWait(ctx, tx, run, nil)
	}
	t, err := tx.Runs.ClaimableTask(ctx, run.TaskListID, run.ID, wave.ID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, s.noTaskWait(ctx, tx, run, wave)
	} else if err != nil {
		return nil, nil, err
	}
	return t, wave, nil
}

// noTaskWait is the wait of a claim that found no task it could lock,
// though its plain reads saw one: claims in flight hold the claimable tasks
// (InFlight counts them), and whether those fill the run's slots decides
// between CONCURRENCY_LIMIT and NO_READY_TASK (domain.NoTaskWait).
func (s *Runs) noTaskWait(ctx context.Context, tx *app.Tx, run *domain.ExecutionRun, wave *domain.Wave) error {
	live, err := tx.Runs.CountLiveAgents(ctx, run.ID)
	if err != nil {
		return err
	}
	var inFlight int
	var held bool
	if wave == nil {
		if inFlight, err = tx.Runs.CountEagerCandidates(ctx, run.ID); err != nil {
			return err
		}
		if held, err = tx.Runs.EagerHeldByQuestions(ctx, run.ID); err != nil {
			return err
		}
	} else {
		if inFlight, err = tx.Runs.CountClaimable(ctx, wave.ID); err != nil {
			return err
		}
		if held, err = tx.Questions.WaveHeldByQuestions(ctx, wave.ID, domain.WavePending, domain.StatusPending,
			domain.QuestionPending); err != nil {
			return err
		}
	}
	return &claimWait{domain.NoTaskWait(run, live, inFlight, held)}
}

// moveTask transitions a task as the engine and writes it.
func (s *Runs) moveTask(ctx context.Context, tx *app.Tx, p *auth.Principal, t *domain.Task, to domain.TaskStatus, reason string, now time.Time) error {
	return s.moveTaskWith(ctx, tx, p, t, t.Status, to, reason, now, &transitionWrites{})
}

// moveTaskWith is moveTask after earlier moves of t since status from,
// whose history rows w holds: all are written with the task.
func (s *Runs) moveTaskWith(ctx context.Context, tx *app.Tx, p *auth.Principal, t *domain.Task, from, to domain.TaskStatus,
	reason string, now time.Time, w *transitionWrites,
) error {
	if _, err := s.Tasks.prepareTransition(ctx, tx, p, t, to, reason, true, now, w); err != nil {
		return err
	}
	t.UpdatedAt = now
	return s.Tasks.saveEngineMoves(ctx, tx, t, from, w)
}

// claimReason is the history line of a claim, for people: the agent's host,
// not its opaque id (the state change links the agent itself).
func claimReason(hostname *string, attempt int) string {
	if hostname == nil || *hostname == "" {
		return fmt.Sprintf("claimed by an agent (attempt %d)", attempt)
	}
	return fmt.Sprintf("claimed by the agent on %s (attempt %d)", *hostname, attempt)
}
