package service

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/auth"
	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/store"
)

// lockTask re-reads a task inside a transaction, locking it, and checks the
// caller's expected version.
func lockTask(ctx context.Context, tx *app.Tx, id string, expectedVersion *int) (*domain.Task, error) {
	t, err := tx.Tasks.TaskForUpdate(ctx, id)
	if err != nil {
		return nil, app.NotFound(err, "task")
	}
	if expectedVersion != nil && *expectedVersion != t.Version {
		return nil, versionConflict(t.Version)
	}
	return t, nil
}

func versionConflict(current int) error {
	return &domain.Error{Code: domain.CodeVersionConflict, Field: "expectedVersion",
		Message: fmt.Sprintf("the task changed: it is at version %d", current),
		Details: map[string]any{"currentVersion": current}}
}

// UpdateTask changes the given fields; with expectedVersion it applies only if the
// task is still at that version. Every successful update raises the version by one.
func (s *Tasks) UpdateTask(ctx context.Context, in domain.UpdateTaskInput) (*domain.Task, error) {
	p, err := app.Caller(ctx)
	if err != nil {
		return nil, err
	}
	cur, project, err := s.editableTask(ctx, p, in.ID, "id")
	if err != nil {
		return nil, err
	}
	lists, err := checkTaskLists(in.AcceptanceCriteria, in.CodebaseTests, in.APITests, in.UITests, in.AffectedFiles)
	if err != nil {
		return nil, err
	}
	refs, err := resolveRefs(ctx, &s.db.Q, project.ID, in.TaskListID, in.ParentTaskID, in.IdeaID, in.SupersedesTaskID)
	if err != nil {
		return nil, err
	}
	if deref(in.InEvaluationQueue) && in.TaskListID != nil {
		return nil, domain.InputError("inEvaluationQueue", "a task is in the evaluation queue or in a task list, never both")
	}
	if err := domain.CheckEffortMinutes("actualEffortMinutes", in.ActualEffortMinutes); err != nil {
		return nil, err
	}
	if err := domain.CheckDeadline("deadline", in.Deadline); err != nil {
		return nil, err
	}
	if in.Category != nil && !in.Category.Valid() {
		return nil, domain.InputError("category", "unknown category %q", *in.Category)
	}
	var t *domain.Task
	err = s.tx(ctx, func(tx *app.Tx) error {
		if in.FileImpacts != nil || in.TaskListID != nil {
			if err := tx.Tasks.LockProjectGraph(ctx, project.ID); err != nil {
				return err
			}
		}
		if t, err = lockTask(ctx, tx, cur.ID, in.ExpectedVersion); err != nil {
			return err
		}
		before := *t
		now := s.now()
		if err := applyTaskFields(t, in, lists); err != nil {
			return err
		}
		if in.Embedding != nil || in.EmbeddingModel != nil {
			if err := s.checkTaskDimension(ctx, tx, t); err != nil {
				return err
			}
		}
		if in.FileImpacts != nil {
			impacts, err := checkImpacts(t.ID, in.FileImpacts, now)
			if err != nil {
				return err
			}
			old, err := tx.Tasks.FileImpactsOfTasks(ctx, []string{t.ID})
			if err != nil {
				return err
			}
			if err := tx.Tasks.ReplaceFileImpacts(ctx, t.ID, impacts); err != nil {
				return err
			}
			if !sameFileOperations(old, impacts) {
				if err := tx.Planning.InvalidateAnalysesOfTasks(ctx, []string{t.ID}, now); err != nil {
					return err
				}
			}
		}
		if err := s.relink(ctx, tx, p, t, refs, in.Null, now); err != nil {
			return err
		}
		if in.InEvaluationQueue != nil {
			if err := s.setQueued(ctx, tx, p, t, *in.InEvaluationQueue, now); err != nil {
				return err
			}
		}
		if refs.list != nil && deref(t.TaskListID) != refs.list.ID {
			if err := s.moveToList(ctx, tx, p, t, refs.list.ID, now); err != nil {
				return err
			}
		}
		t.UpdatedAt = now
		t.Rescore(now)
		if err := tx.Tasks.UpdateTask(ctx, t); errors.Is(err, store.ErrVersionConflict) {
			return versionConflict(t.Version)
		} else if err != nil {
			return err
		}
		changed := domain.ChangedTaskFields(&before, t)
		if in.FileImpacts != nil {
			changed = append(changed, "fileImpacts")
		}
		tx.Record(domain.NewTaskUpdated(t, changed, now))
		return nil
	})
	return t, err
}

// sameFileOperations reports whether two sets of file impacts name the same
// (file, operation) pairs: all a plan's conflicts are computed from. A change of
// confidence or source alone leaves a parallelism analysis valid.
func sameFileOperations(a, b []*domain.TaskFileImpact) bool {
	set := func(fs []*domain.TaskFileImpact) map[[2]string]bool {
		out := make(map[[2]string]bool, len(fs))
		for _, f := range fs {
			out[[2]string{f.FilePath, string(f.Operation)}] = true
		}
		return out
	}
	return maps.Equal(set(a), set(b))
}

func applyTaskFields(t *domain.Task, in domain.UpdateTaskInput, lists taskLists) error {
	var err error
	if in.Title != nil {
		if t.Title, err = domain.CheckText("title", *in.Title, domain.MaxTitle, true); err != nil {
			return err
		}
	}
	if in.Description != nil {
		if t.Description, err = domain.CheckText("description", *in.Description, domain.MaxDescription, false); err != nil {
			return err
		}
	}
	if in.Category != nil && *in.Category != t.Category {
		// The display id keeps the category the task was created with: it is never reused or renumbered.
		t.Category = *in.Category
	}
	setIf(&t.Priority, in.Priority)
	setIf(&t.RiskLevel, in.RiskLevel)
	if in.Effort != nil {
		t.Effort = in.Effort
	}
	if in.Owner != nil {
		t.Owner = in.Owner
	}
	if in.Phase != nil {
		t.Phase = in.Phase
	}
	if in.Deadline != nil {
		t.Deadline = utc(in.Deadline)
	}
	for _, f := range []struct {
		in  []string
		val []string
		out *domain.Strings
	}{{in.AcceptanceCriteria, lists.acceptance, &t.AcceptanceCriteria}, {in.CodebaseTests, lists.codebase, &t.CodebaseTests},
		{in.APITests, lists.api, &t.APITests}, {in.UITests, lists.ui, &t.UITests}, {in.AffectedFiles, lists.files, &t.AffectedFiles}} {
		if f.in != nil {
			*f.out = f.val
		}
	}
	if in.ActualEffortMinutes != nil {
		t.ActualEffortMinutes = in.ActualEffortMinutes
	}
	if in.EmbeddingModel != nil {
		model, err := domain.CheckText("embeddingModel", *in.EmbeddingModel, domain.MaxEmbeddingModelLen, true)
		if err != nil {
			return err
		}
		t.EmbeddingModel = &model
	}
	if in.Embedding != nil {
		if err := domain.CheckVector("embedding", in.Embedding); err != nil {
			return err
		}
		t.Embedding = domain.EncodeEmbedding(in.Embedding)
	}
	if err := clearTaskFields(t, in.Null); err != nil {
		return err
	}
	if t.Embedding != nil && t.EmbeddingModel == nil {
		return domain.InputError("embeddingModel", "an embedding needs its embeddingModel")
	}
	return nil
}

// clearTaskFields applies the fields an update set to null: optional ones are
// cleared, lists emptied; fields a task cannot be without are refused.
func clearTaskFields(t *domain.Task, null map[string]bool) error {
	for field := range null {
		switch field {
		case "title", "category", "priority", "riskLevel", "id", "taskListId", "inEvaluationQueue":
			return domain.InputError(field, "%s cannot be null", field)
		case "description":
			t.Description = ""
		case "effort":
			t.Effort = nil
		case "owner":
			t.Owner = nil
		case "phase":
			t.Phase = nil
		case "deadline":
			t.Deadline = nil
		case "actualEffortMinutes":
			t.ActualEffortMinutes = nil
		case "embeddingModel":
			t.EmbeddingModel = nil
		case "embedding":
			t.Embedding = nil
		case "acceptanceCriteria":
			t.AcceptanceCriteria = domain.Strings{}
		case "codebaseTests":
			t.CodebaseTests = domain.Strings{}
		case "apiTests":
			t.APITests = domain.Strings{}
		case "uiTests":
			t.UITests = domain.Strings{}
		case "affectedFiles":
			t.AffectedFiles = domain.Strings{}
		case "ideaId":
			t.IdeaID = nil
		}
	}
	return nil
}

// relink applies new idea, parent and superseded references; parent and
// superseded task are mirrored as SUBTASK_OF and SUPERSEDES links, cycle-checked.
func (s *Tasks) relink(ctx context.Context, tx *app.Tx, p *auth.Principal, t *domain.Task, refs taskRefs, null map[string]bool, now time.Time) error {
	if refs.idea != nil {
		t.IdeaID = &refs.idea.ID
	}
	for _, link := range []struct {
		target *domain.Task
		cur    **string
		typ    domain.RelationshipType
		field  string
	}{{refs.parent, &t.ParentTaskID, domain.RelSubtaskOf, "parentTaskId"}, {refs.supersedes, &t.SupersedesTaskID, domain.RelSupersedes, "supersedesTaskId"}} {
		if link.target == nil && null[link.field] && *link.cur != nil {
			// Set to null: drop the reference and the link that mirrors it.
			if err := tx.Tasks.DeleteLink(ctx, t.ID, **link.cur, link.typ); err != nil {
				return err
			}
			*link.cur = nil
			continue
		}
		if link.target == nil || deref(*link.cur) == link.target.ID {
			continue
		}
		if link.target.ID == t.ID {
			return domain.InputError(link.field, "a task cannot reference itself")
		}
		if *link.cur != nil {
			if err := tx.Tasks.DeleteLink(ctx, t.ID, **link.cur, link.typ); err != nil {
				return err
			}
		}
		rel := &domain.TaskRelationship{ID: app.NewID(), SourceTaskID: t.ID, TargetTaskID: link.target.ID,
			Type: link.typ, CreatedAt: now, CreatedByID: &p.UserID}
		if err := s.insertLink(ctx, tx, t.ProjectID, rel, link.field); err != nil {
			return err
		}
		*link.cur = &link.target.ID
	}
	return nil
}

// setQueued puts a task into or takes it out of the evaluation queue.
func (s *Tasks) setQueued(ctx context.Context, tx *app.Tx, p *auth.Principal, t *domain.Task, queued bool, now time.Time) error {
	if queued == t.InEvaluationQueue() {
		return nil
	}
	if !queued {
		if t.Status == domain.StatusEvaluating {
			return domain.CheckTransition(domain.StatusEvaluating, domain.StatusDraft, false)
		}
		t.Queue = nil
		return nil
	}
	if t.TaskListID != nil {
		return &domain.Error{Code: domain.CodeConflict, Field: "inEvaluationQueue",
			Message: "the task is in a task list; a task is in the evaluation queue or in a list, never both"}
	}
	t.Queue = ptr(domain.QueueEvaluation)
	if t.Status == domain.StatusDraft {
		_, err := s.transition(ctx, tx, p, t, domain.StatusEvaluating, "added to the evaluation queue", false, now)
		return err
	}
	return nil
}

// moveToList takes a task out of the queue or its old list and appends it to a
// list; a DRAFT or EVALUATING task becomes PENDING.
func (s *Tasks) moveToList(ctx context.Context, tx *app.Tx, p *auth.Principal, t *domain.Task, listID string, now time.Time) error {
	old := t.TaskListID
	if old != nil {
		if err := tx.Lists.DeleteItemOfTask(ctx, t.ID); err != nil {
			return err
		}
		// Its pairs were analysed within the old list.
		if err := tx.Planning.InvalidateAnalysesOfTasks(ctx, []string{t.ID}, now); err != nil {
			return err
		}
	}
	t.TaskListID, t.Queue = &listID, nil
	if t.Status == domain.StatusDraft || t.Status == domain.StatusEvaluating {
		if _, err := s.transition(ctx, tx, p, t, domain.StatusPending, "added to a task list", false, now); err != nil {
			return err
		}
	}
	// The task row must name its list before the list's counters are recounted.
	if err := tx.Tasks.SetTaskList(ctx, t.ID, &listID); err != nil {
		return err
	}
	if err := s.appendToList(ctx, tx, listID, []string{t.ID}, now); err != nil {
		return err
	}
	if err := tx.Lists.SetItemStatus(ctx, t.ID, domain.ItemStatusFor(t.Status), nil, nil); err != nil {
		return err
	}
	if old != nil {
		return tx.Lists.RecountTaskLists(ctx, []string{*old}, now)
	}
	return nil
}

func setIf[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}
