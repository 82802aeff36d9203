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

// engine is the principal the heartbeat sweep acts as.
var engine = &auth.Principal{Role: domain.RoleAdmin}

// sweepBatch bounds the agents one sweep examines.
const sweepBatch = 200

// RunHeartbeatSweep terminates dead agents every half heartbeat interval
// until ctx ends (model: River's job rescuer). Every replica runs it: each
// agent is taken under a row lock, skipped when another sweeper holds it, and
// re-checked inside its transaction, so an agent is terminated once.
//
// While the database cannot be reached no agent can heartbeat either, so
// silence then says nothing about an agent: once the database answers
// again, the sweep terminates nobody for a whole deadline (missed heartbeats
// × interval), in which live agents heartbeat again. (LateAgents counts
// silence from a PostgreSQL restart likewise, whichever replica sweeps.)
func (s *Runs) RunHeartbeatSweep(ctx context.Context) {
	t := time.NewTicker(s.heartbeat / 2)
	defer t.Stop()
	var (
		down     bool      // the last sweep found the database unreachable
		resumeAt time.Time // no sweep before: a deadline after it answered again
	)
	for {
		switch {
		case down:
			if s.db.Ping(ctx) == nil {
				down, resumeAt = false, time.Now().Add(s.deadline())
				s.log.InfoContext(ctx, "heartbeat sweep: the database answers again; sweeping resumes after a heartbeat deadline",
					"resumeAt", resumeAt)
			}
		case time.Now().Before(resumeAt):
		default:
			if _, err := s.SweepAgents(ctx); err != nil && ctx.Err() == nil {
				if errors.Is(err, store.ErrUnavailable) {
					down = true
					s.log.WarnContext(ctx, "heartbeat sweep: the database is unavailable", "err", err)
				} else {
					s.log.ErrorContext(ctx, "heartbeat sweep failed", "err", err)
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// deadline is how long an agent may stay silent.
func (s *Runs) deadline() time.Duration { return time.Duration(s.missed) * s.heartbeat }

// SweepAgents keeps the count of heartbeats each live agent has missed in a
// row (BuildAgent.consecutiveMissedHeartbeats: whole heartbeat intervals of
// silence, by the database clock, less the server's own recent slowness:
// Runs.grace) and terminates the agents that missed missed-heartbeats of them: their execution becomes INTERRUPTED and their
// task goes back to PENDING, or to FAILED once max-attempts is reached. It
// returns how many it terminated.
func (s *Runs) SweepAgents(ctx context.Context) (int, error) {
	late, err := s.db.LateAgents(ctx, s.heartbeat, sweepBatch)
	if err != nil {
		return 0, err
	}
	grace := s.grace()
	n := 0
	for _, a := range late {
		missed := domain.MissedHeartbeats(a.Silence-grace, s.heartbeat)
		if missed < s.missed {
			if missed != a.Missed {
				if err := s.db.MarkMissedHeartbeats(ctx, a.ID, a.Count, missed); err != nil {
					return n, err
				}
			}
			continue
		}
		done, err := s.terminateSilent(ctx, a.ID, grace)
		if err != nil {
			return n, err
		}
		if done {
			n++
		}
	}
	return n, nil
}

// terminateSilent terminates one agent if it is still live and silent for
// longer than its deadline and grace.
func (s *Runs) terminateSilent(ctx context.Context, agentID string, grace time.Duration) (bool, error) {
	done := false
	err := s.tx(ctx, func(tx *app.Tx) error {
		done = false
		// Lock order: run, slot, agent (as every other path). The agent is
		// read first to find its run and slot; another sweeper holding the
		// agent is passed over after the run lock.
		seen, err := one(tx.Runs.AgentsByIDs(ctx, []string{agentID}))
		if errors.Is(err, store.ErrNotFound) || (err == nil && !seen.Status.Live()) {
			return nil
		} else if err != nil {
			return err
		}
		run, err := tx.Runs.RunForUpdate(ctx, seen.RunID)
		if err != nil {
			return err
		}
		if err := lockSlotOf(ctx, tx, seen); err != nil {
			return err
		}
		a, err := tx.Runs.LiveAgentForSweep(ctx, agentID)
		if errors.Is(err, store.ErrNotFound) {
			return nil // terminated meanwhile, or another sweeper has it
		} else if err != nil {
			return err
		}
		now, err := tx.Now(ctx)
		if err != nil {
			return err
		}
		if !a.LastHeartbeatAt.Before(now.Add(-s.deadline() - grace)) {
			return nil // it heartbeated meanwhile
		}
		tx.ActFor(run.ID)
		tx.ActAsAgent(a.GlobalID()) // its task's release is the lost agent's doing
		exec, err := tx.Runs.ExecutionOfAgent(ctx, a.ID)
		if err != nil {
			return err
		}
		t, err := tx.Tasks.TaskForUpdate(ctx, a.TaskID)
		if err != nil {
			return err
		}
		reason := fmt.Sprintf("no heartbeat for %s (%d × %s)", now.Sub(a.LastHeartbeatAt).Round(time.Millisecond),
			s.missed, s.heartbeat)
		a.ConsecutiveMissedHeartbeats = domain.MissedHeartbeats(now.Sub(a.LastHeartbeatAt), s.heartbeat)
		if err := endAgent(ctx, tx, a, exec, domain.ExecInterrupted, domain.EndMissedHeartbeats, reason, &reason, now); err != nil {
			return err
		}
		tx.Record(domain.NewAgentTerminated(run, exec, domain.EndMissedHeartbeats, reason, now))
		done = true
		if t.Status != domain.StatusInProgress {
			return nil
		}
		if err := logExecution(t, a, exec, nil); err != nil {
			return err
		}
		if err := s.releaseTask(ctx, tx, engine, run, t, exec, true, "agent lost: "+reason, now, nil); err != nil {
			return err
		}
		return s.advance(ctx, tx, engine, run, now)
	})
	return done, err
}
