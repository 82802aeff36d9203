package queue

import (
	"context"
	"errors"
	"time"

	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/store"
)

// sweepBatch bounds the items one sweep examines.
const sweepBatch = 200

// RunSweep rescues items whose lease expired, every sweep interval, until ctx
// ends (model: River's job rescuer). Every replica runs it: each item is taken
// under a row lock, skipped when another sweeper or its claimer holds it, and
// re-checked inside its transaction, so an attempt is rescued once, and a
// final item is never touched.
func (s *Service) RunSweep(ctx context.Context) {
	t := time.NewTicker(s.sweep)
	defer t.Stop()
	for {
		if _, err := s.Sweep(ctx); err != nil && ctx.Err() == nil {
			s.log.ErrorContext(ctx, "queue lease sweep failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Sweep fails the current attempt of every IN_PROGRESS item whose lease
// ended ("lease expired"), by the queue's clock: the item retries after its
// backoff, or is FAILED once its attempts are spent. It returns how many
// items it rescued.
func (s *Service) Sweep(ctx context.Context) (int, error) {
	now, err := s.now(ctx, &s.db.Q)
	if err != nil {
		return 0, err
	}
	ids, err := s.db.Queue.ExpiredItems(ctx, now, sweepBatch)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, id := range ids {
		done := false
		err := s.tx(ctx, func(tx *app.Tx) error {
			done = false
			now, err := s.now(ctx, tx.Q)
			if err != nil {
				return err
			}
			it, err := tx.Queue.ExpiredItemForRescue(ctx, id, now)
			if errors.Is(err, store.ErrNotFound) {
				return nil // finished, extended or rescued meanwhile
			} else if err != nil {
				return err
			}
			will := it.Fail(domain.LeaseExpiredMessage, true, now)
			if err := tx.Queue.UpdateItem(ctx, it); err != nil {
				return err
			}
			tx.Record(domain.NewQueueItemFailed(it, will, now))
			done = true
			return nil
		})
		if err != nil {
			return n, err
		}
		if done {
			n++
		}
	}
	return n, nil
}
