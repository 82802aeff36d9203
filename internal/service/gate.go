package service

import (
	"context"

	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/store"
)

// Gate is asked, inside the transaction making the change, whether tasks may
// go on: EnterPending when a caller moves a task into PENDING (the task in its
// new state, its file impacts written), StartRun when a run of a list starts
// (the unfinished tasks the run would plan). An error refuses the change, and
// the transaction rolls back. Validation rules implement it
// (internal/validation), which the core cannot import.
type Gate interface {
	EnterPending(ctx context.Context, q *store.Q, t *domain.Task) error
	StartRun(ctx context.Context, q *store.Q, tasks []*domain.Task) error
}

// gatePending asks the gate whether t may enter PENDING.
func (s *Service) gatePending(ctx context.Context, tx *app.Tx, t *domain.Task) error {
	if s.gate == nil {
		return nil
	}
	return s.gate.EnterPending(ctx, tx.Q, t)
}

// gateRun asks the gate whether a run over tasks (only those in only, when
// not nil) may start; finished tasks are not run, so not checked.
func (s *Service) gateRun(ctx context.Context, tx *app.Tx, tasks []*domain.Task, only map[string]bool) error {
	if s.gate == nil {
		return nil
	}
	var run []*domain.Task
	for _, t := range tasks {
		if t.Status != domain.StatusCompleted && (only == nil || only[t.ID]) {
			run = append(run, t)
		}
	}
	if len(run) == 0 {
		return nil
	}
	return s.gate.StartRun(ctx, tx.Q, run)
}
