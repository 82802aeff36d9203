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
//
// PrecheckPending is asked first, before the transaction, on a snapshot read
// from the pool (the task as it would be in PENDING): the gate evaluates
// there, off the SQLite writer, and remembers its verdict, so that
// EnterPending, inside, re-reads the rules and only evaluates again when the
// task or the rules changed in between.
type Gate interface {
	PrecheckPending(ctx context.Context, q *store.Q, t *domain.Task) error
	EnterPending(ctx context.Context, q *store.Q, t *domain.Task) error
	StartRun(ctx context.Context, q *store.Q, tasks []*domain.Task) error
}

// precheckPending asks the gate, before the transaction, whether cur (read
// outside it) may enter PENDING: a refusal needs no transaction, a pass
// is remembered for the check inside.
func (s *Service) precheckPending(ctx context.Context, cur *domain.Task) error {
	if s.gate == nil {
		return nil
	}
	t := *cur
	if t.Status == domain.StatusEvaluating {
		t.Queue = nil
	}
	t.Status = domain.StatusPending
	return s.gate.PrecheckPending(ctx, &s.db.Q, &t)
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

// precheckRun asks the gate, before the transaction, about the tasks a run
// of list listID would plan, read from the pool: the rules run there, off
// the writer, and the gate inside reuses the verdicts of unchanged tasks.
func (s *Runs) precheckRun(ctx context.Context, listID string) error {
	if s.gate == nil {
		return nil
	}
	pd, err := loadPlanData(ctx, &s.db.Q, listID)
	if err != nil {
		return err
	}
	var run []*domain.Task
	for _, t := range pd.tasks {
		if t.Status != domain.StatusCompleted {
			run = append(run, t)
		}
	}
	if len(run) == 0 {
		return nil
	}
	return s.gate.StartRun(ctx, &s.db.Q, run)
}
