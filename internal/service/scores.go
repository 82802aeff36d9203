package service

import (
	"context"
	"time"

	"github.com/taskgraph/taskgraph/internal/app"
)

// RefreshDeadlineScores recomputes the priority score of unfinished tasks with a
// deadline, whose urgency bonus moves with the clock; it returns how many changed.
func (s *Service) RefreshDeadlineScores(ctx context.Context) (int, error) {
	changed := 0
	err := s.tx(ctx, func(tx *app.Tx) error {
		tasks, err := tx.Tasks.TasksWithDeadlines(ctx)
		if err != nil {
			return err
		}
		now := s.now()
		for _, t := range tasks {
			before := t.PriorityScore
			t.Rescore(now)
			if t.PriorityScore == before {
				continue
			}
			changed++
			if err := tx.Tasks.SetTaskScore(ctx, t.ID, t.PriorityScore, t.IsQuickWin); err != nil {
				return err
			}
		}
		return nil
	})
	return changed, err
}

// RunScoreRefresher refreshes deadline scores every interval until ctx ends.
func (s *Service) RunScoreRefresher(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if _, err := s.RefreshDeadlineScores(ctx); err != nil && ctx.Err() == nil {
			s.log.ErrorContext(ctx, "refreshing deadline scores failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
