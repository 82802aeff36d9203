package service

import (
	"context"

	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/domain"
)

// CreateTaskBlock records a block; a task that may move to BLOCKED (PENDING,
// IN_PROGRESS, FAILED) does so.
func (s *Tasks) CreateTaskBlock(ctx context.Context, in domain.CreateTaskBlockInput) (*domain.TaskBlock, *domain.Task, error) {
	p, err := app.Caller(ctx)
	if err != nil {
		return nil, nil, err
	}
	cur, project, err := s.editableTask(ctx, p, in.TaskID, "taskId")
	if err != nil {
		return nil, nil, err
	}
	reason, err := domain.CheckText("reason", in.Reason, 2000, true)
	if err != nil {
		return nil, nil, err
	}
	var blocking *string
	if in.BlockingTaskID != nil {
		bt, _, err := s.visibleTask(ctx, p, *in.BlockingTaskID, "blockingTaskId")
		if err != nil {
			return nil, nil, err
		}
		if bt.ProjectID != project.ID {
			return nil, nil, domain.InputError("blockingTaskId", "the blocking task must be in the same project")
		}
		if bt.ID == cur.ID {
			return nil, nil, domain.InputError("blockingTaskId", "a task cannot block itself")
		}
		blocking = &bt.ID
	}
	var (
		b *domain.TaskBlock
		t *domain.Task
	)
	err = s.tx(ctx, func(tx *app.Tx) error {
		if t, err = lockTask(ctx, tx, cur.ID, nil); err != nil {
			return err
		}
		now := s.now()
		b = &domain.TaskBlock{ID: app.NewID(), TaskID: t.ID, BlockType: in.BlockType, Reason: reason,
			BlockingEntityID: blocking, CreatedAt: now}
		if err := tx.Tasks.InsertBlock(ctx, b); err != nil {
			return err
		}
		if domain.CheckTransition(t.Status, domain.StatusBlocked, false) != nil {
			return nil // e.g. a DRAFT task: the block is recorded, the status stays
		}
		from := t.Status
		if _, err := s.transition(ctx, tx, p, t, domain.StatusBlocked, reason, false, now); err != nil {
			return err
		}
		t.UpdatedAt = now
		return s.saveTransitioned(ctx, tx, t, from)
	})
	if err != nil {
		return nil, nil, err
	}
	return b, t, nil
}

// saveTransitioned writes a task after a transition from status from and
// counts the move in its list's counters (written at the end of the
// transaction: CountListMove).
func (s *Tasks) saveTransitioned(ctx context.Context, tx *app.Tx, t *domain.Task, from domain.TaskStatus) error {
	if err := tx.Tasks.UpdateTask(ctx, t); err != nil {
		return err
	}
	if t.TaskListID != nil {
		tx.CountListMove(t.ProjectID, *t.TaskListID, from, t.Status, t.UpdatedAt)
	}
	return nil
}

// ResolveTaskBlock resolves a block; a BLOCKED task with no open block left goes
// back to PENDING.
func (s *Tasks) ResolveTaskBlock(ctx context.Context, in domain.ResolveTaskBlockInput) (*domain.TaskBlock, *domain.Task, error) {
	p, err := app.Caller(ctx)
	if err != nil {
		return nil, nil, err
	}
	id, err := domain.DecodeID(domain.KindTaskBlock, in.ID, "id")
	if err != nil {
		return nil, nil, err
	}
	b0, err := s.load(ctx).blocks.Get(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	if b0 == nil {
		return nil, nil, domain.NotFound("task block")
	}
	if _, _, err := s.editableTask(ctx, p, domain.GlobalID(domain.KindTask, b0.TaskID), "id"); err != nil {
		return nil, nil, notFoundAs(err, "task block")
	}
	notes, err := domain.CheckOptText("notes", in.Notes, 2000)
	if err != nil {
		return nil, nil, err
	}
	var (
		b *domain.TaskBlock
		t *domain.Task
	)
	err = s.tx(ctx, func(tx *app.Tx) error {
		if b, err = tx.Tasks.BlockForUpdate(ctx, id); err != nil {
			return app.NotFound(err, "task block")
		}
		if b.ResolvedAt != nil {
			return &domain.Error{Code: domain.CodeConflict, Field: "id", Message: "the block is already resolved"}
		}
		now := s.now()
		if err := tx.Tasks.ResolveBlock(ctx, id, now, app.Actor(p), notes); err != nil {
			return err
		}
		b.ResolvedAt, b.ResolvedBy, b.ResolutionNotes = &now, ptr(app.Actor(p)), notes
		if t, err = lockTask(ctx, tx, b.TaskID, nil); err != nil {
			return err
		}
		if t.Status != domain.StatusBlocked {
			return nil
		}
		if open, err := tx.Tasks.CountOpenBlocks(ctx, t.ID); err != nil || open > 0 {
			return err
		}
		if _, err := s.transition(ctx, tx, p, t, domain.StatusPending, "all blocks resolved", false, now); err != nil {
			return err
		}
		t.UpdatedAt = now
		return s.saveTransitioned(ctx, tx, t, domain.StatusBlocked)
	})
	if err != nil {
		return nil, nil, err
	}
	return b, t, nil
}

// BlocksOfTask lists a task's blocks, oldest first.
func (s *Tasks) BlocksOfTask(ctx context.Context, taskID string, includeResolved bool) ([]*domain.TaskBlock, error) {
	all, err := s.load(ctx).blocksOfTask.Load(ctx, taskID)
	if err != nil {
		return nil, err
	}
	out := []*domain.TaskBlock{}
	for _, b := range all {
		if includeResolved || b.ResolvedAt == nil {
			out = append(out, b)
		}
	}
	return out, nil
}

// StateHistory lists a task's status changes, oldest first.
func (s *Tasks) StateHistory(ctx context.Context, taskID string) ([]*domain.TaskStateChange, error) {
	h, err := s.load(ctx).historyOfTask.Load(ctx, taskID)
	if h == nil && err == nil {
		h = []*domain.TaskStateChange{}
	}
	return h, err
}

// FileImpacts lists a task's file impacts.
func (s *Tasks) FileImpacts(ctx context.Context, taskID string) ([]*domain.TaskFileImpact, error) {
	f, err := s.load(ctx).shownImpacts().Load(ctx, taskID)
	if f == nil && err == nil {
		f = []*domain.TaskFileImpact{}
	}
	return f, err
}
