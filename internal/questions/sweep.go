package questions

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/store"
)

// sweepBatch bounds the questions one sweep examines.
const sweepBatch = 200

// RunExpirySweep applies the timeout action of expired questions every
// sweep interval until ctx ends. Every replica runs it: each question is
// taken under a row lock, skipped when another sweeper holds it, and
// re-checked inside its transaction, so it is handled once.
func (s *Service) RunExpirySweep(ctx context.Context) {
	for {
		if _, err := s.SweepExpired(ctx); err != nil && ctx.Err() == nil {
			s.log.ErrorContext(ctx, "question expiry sweep failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-s.tick():
		}
	}
}

// SweepExpired handles every PENDING question past its expiresAt by the
// database clock, each in one transaction with its events: EXPIRE makes it
// EXPIRED; USE_DEFAULT answers it with its default, by timeout; FAIL_TASK
// makes it EXPIRED and fails its task (its live agent terminated). It
// returns how many it handled.
func (s *Service) SweepExpired(ctx context.Context) (int, error) {
	at, err := now(ctx, &s.db.Q)
	if err != nil {
		return 0, err
	}
	ids, err := s.db.Questions.ExpiringQuestions(ctx, domain.QuestionPending, at, sweepBatch)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, id := range ids {
		done, err := s.expire(ctx, id)
		if err != nil {
			return n, err
		}
		if done {
			n++
		}
	}
	return n, nil
}

// expire handles one question if it is still PENDING and expired.
func (s *Service) expire(ctx context.Context, id string) (bool, error) {
	done := false
	err := s.run.InTx(ctx, func(tx *app.Tx) error {
		done = false
		// Lock order: a FAIL_TASK question's run first (as every path that
		// locks a run and then its questions: cancel, completion), then
		// the question.
		seen, err := tx.Questions.QuestionsByIDs(ctx, []string{id})
		if err != nil || len(seen) == 0 || seen[0].Status != domain.QuestionPending {
			return err
		}
		if seen[0].TimeoutAction == domain.TimeoutFailTask && seen[0].TaskID != nil {
			if _, err := s.core.Runs.LockRunOfTask(ctx, tx, *seen[0].TaskID); err != nil {
				return err
			}
		}
		q, err := tx.Questions.PendingQuestionForSweep(ctx, id, domain.QuestionPending)
		if errors.Is(err, store.ErrNotFound) {
			return nil // settled meanwhile, or another sweeper has it
		} else if err != nil {
			return err
		}
		at, err := now(ctx, tx.Q)
		if err != nil {
			return err
		}
		if !q.Expired(at) {
			return nil
		}
		failTask := q.Expire(at)
		if err := tx.Questions.UpdateQuestion(ctx, q); err != nil {
			return err
		}
		if q.Status == domain.QuestionAnswered {
			tx.Record(domain.NewQuestionAnswered(q, at))
		} else {
			tx.Record(domain.NewQuestionExpired(q, at))
		}
		s.notified(tx, q)
		done = true
		if !failTask {
			return s.agentMoved(ctx, tx, q)
		}
		reason := fmt.Sprintf("question %s expired unanswered (timeout action FAIL_TASK): %s", q.GlobalID(), clip(q.QuestionText, 200))
		_, err = s.core.Runs.FailTaskFromOutside(ctx, tx, *q.TaskID, domain.EndQuestionTimeout, reason, at)
		return err
	})
	return done, err
}

// clip shortens s to at most n runes.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// tick fires after one sweep interval.
func (s *Service) tick() <-chan time.Time { return time.After(s.every) }
