package service

import (
	"context"
	"errors"
	"time"

	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/auth"
	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/store"
)

// TransitionTask moves a task along its lifecycle, recording the change.
func (s *Tasks) TransitionTask(ctx context.Context, in domain.TransitionTaskInput) (*domain.Task, *domain.TaskStateChange, error) {
	p, err := app.Caller(ctx)
	if err != nil {
		return nil, nil, err
	}
	cur, _, err := s.editableTask(ctx, p, in.ID, "id")
	if err != nil {
		return nil, nil, err
	}
	reason, err := domain.CheckOptText("reason", in.Reason, 2000)
	if err != nil {
		return nil, nil, err
	}
	if in.To == domain.StatusPending && domain.CheckTransition(cur.Status, in.To, false) == nil {
		// The validation rules run here, off the writer; the gate inside
		// the transaction reuses the verdict while nothing changed.
		if err := s.precheckPending(ctx, cur); err != nil {
			return nil, nil, err
		}
	}
	var (
		t      *domain.Task
		change *domain.TaskStateChange
	)
	err = s.tx(ctx, func(tx *app.Tx) error {
		if t, err = lockTask(ctx, tx, cur.ID, nil); err != nil {
			return err
		}
		now := s.now()
		// A move the lifecycle forbids, or of a task its run still owns, is
		// INVALID_TRANSITION whatever the list says.
		run, err := tx.Runs.OpenRunOfTask(ctx, t.ID)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		if err := domain.CheckManualTransition(t.Status, in.To, runNumber(run), run != nil); err != nil {
			return err
		}
		if in.To == domain.StatusEvaluating && t.TaskListID != nil {
			return &domain.Error{Code: domain.CodeConflict, Field: "to",
				Message: "the task is in a task list; only tasks outside lists go to the evaluation queue"}
		}
		from := t.Status
		if change, err = s.transition(ctx, tx, p, t, in.To, deref(reason), false, now); err != nil {
			return err
		}
		t.UpdatedAt = now
		return s.saveTransitioned(ctx, tx, t, from)
	})
	if err != nil {
		return nil, nil, err
	}
	return t, change, nil
}

// transition applies a lifecycle move to t in memory and writes its history
// row and list item; the caller writes the task row.
func (s *Tasks) transition(ctx context.Context, tx *app.Tx, p *auth.Principal, t *domain.Task, to domain.TaskStatus, reason string, engine bool, now time.Time) (*domain.TaskStateChange, error) {
	var w transitionWrites
	change, err := s.prepareTransition(ctx, tx, p, t, to, reason, engine, now, &w)
	if err != nil {
		return nil, err
	}
	for _, c := range w.changes {
		if err := tx.Tasks.InsertStateChange(ctx, c); err != nil {
			return nil, err
		}
	}
	if w.item != nil {
		if err := tx.Lists.SetItemStatus(ctx, t.ID, w.item.Status, w.item.StartedAt, w.item.CompletedAt); err != nil {
			return nil, err
		}
	}
	return change, nil
}

// transitionWrites is what transitions of a task write besides the task
// row: their history rows and the list item's status.
type transitionWrites struct {
	changes []*domain.TaskStateChange
	item    *store.ItemUpdate
}

// prepareTransition applies a lifecycle move to t in memory, records its
// event and adds its history row and list item's status to w.
func (s *Tasks) prepareTransition(ctx context.Context, tx *app.Tx, p *auth.Principal, t *domain.Task, to domain.TaskStatus, reason string,
	engine bool, now time.Time, w *transitionWrites,
) (*domain.TaskStateChange, error) {
	from := t.Status
	if err := domain.CheckTransition(from, to, engine); err != nil {
		return nil, err
	}
	t.Status = to
	switch to {
	case domain.StatusEvaluating:
		t.Queue = ptr(domain.QueueEvaluation)
	case domain.StatusInProgress:
		if t.StartedAt == nil {
			t.StartedAt = &now
		}
	case domain.StatusCompleted:
		t.CompletedAt = &now
	}
	if from == domain.StatusEvaluating {
		t.Queue = nil
	}
	if to == domain.StatusPending && !engine {
		if err := s.gatePending(ctx, tx, t); err != nil {
			return nil, err
		}
	}
	runID := tx.Run()
	changedBy := tx.Agent()
	if changedBy == nil {
		changedBy = ptr(app.Actor(p))
	}
	change := &domain.TaskStateChange{ID: app.NewID(), TaskID: t.ID, ExecutionRunID: runID, FromStatus: &from, ToStatus: to,
		ChangedBy: changedBy, ChangedAt: now}
	if reason != "" {
		change.Reason = &reason
	}
	w.changes = append(w.changes, change)
	ev := domain.NewTaskStatusChanged(t, from, to, reason, now)
	ev.RunID = runID
	tx.Record(ev)
	if t.TaskListID != nil {
		var started, completed *time.Time
		if to == domain.StatusInProgress {
			started = &now
		}
		if to == domain.StatusCompleted || to == domain.StatusFailed {
			completed = &now
		}
		// A move within one item status (IN_PROGRESS to VALIDATING, PENDING
		// to BLOCKED) leaves the item as it is.
		if domain.ItemStatusFor(from) != domain.ItemStatusFor(to) || started != nil || completed != nil {
			w.item = &store.ItemUpdate{Status: domain.ItemStatusFor(to), StartedAt: started, CompletedAt: completed}
		}
	}
	return change, nil
}

// saveEngineMoves writes a task the engine moved (from status from) with
// the history rows and list item of its moves (w) — one statement on
// PostgreSQL — and counts the move in its list's counters.
func (s *Tasks) saveEngineMoves(ctx context.Context, tx *app.Tx, t *domain.Task, from domain.TaskStatus, w *transitionWrites) error {
	if err := tx.Tasks.SaveTransition(ctx, t, w.changes, w.item); err != nil {
		return err
	}
	if t.TaskListID != nil {
		tx.CountListMove(t.ProjectID, *t.TaskListID, from, t.Status, t.UpdatedAt)
	}
	return nil
}

func runNumber(r *domain.ExecutionRun) int {
	if r == nil {
		return 0
	}
	return r.RunNumber
}
