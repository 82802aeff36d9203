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

// maybeOne is the single row of a by-id load, nil when there is none.
func maybeOne[T any](rows []*T, err error) (*T, error) {
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	return rows[0], nil
}

// taskRefs are the optional task-graph references of a create or update, decoded
// and checked to lie in the task's project.
type taskRefs struct {
	list       *domain.TaskList
	parent     *domain.Task
	idea       *domain.Idea
	supersedes *domain.Task
}

// It reads through q: a create resolves them inside its transaction, whose
// row locks must not wait for a pool connection of the request's loaders.
func resolveRefs(ctx context.Context, q *store.Q, projectID string, listID, parentID, ideaID, supersedesID *string) (taskRefs, error) {
	var r taskRefs
	if listID != nil {
		id, err := domain.DecodeID(domain.KindTaskList, *listID, "taskListId")
		if err != nil {
			return r, err
		}
		if r.list, err = maybeOne(q.Lists.TaskListsByIDs(ctx, []string{id})); err != nil {
			return r, err
		}
		if r.list == nil || r.list.ProjectID != projectID {
			return r, &domain.Error{Code: domain.CodeNotFound, Field: "taskListId", Message: "task list not found in this project"}
		}
	}
	for _, ref := range []struct {
		gid   *string
		field string
		out   **domain.Task
	}{{parentID, "parentTaskId", &r.parent}, {supersedesID, "supersedesTaskId", &r.supersedes}} {
		if ref.gid == nil {
			continue
		}
		id, err := domain.DecodeID(domain.KindTask, *ref.gid, ref.field)
		if err != nil {
			return r, err
		}
		t, err := maybeOne(q.Tasks.TasksByIDs(ctx, []string{id}))
		if err != nil {
			return r, err
		}
		if t == nil || t.ProjectID != projectID {
			return r, &domain.Error{Code: domain.CodeNotFound, Field: ref.field, Message: "task not found in this project"}
		}
		*ref.out = t
	}
	if ideaID != nil {
		id, err := domain.DecodeID(domain.KindIdea, *ideaID, "ideaId")
		if err != nil {
			return r, err
		}
		if r.idea, err = maybeOne(q.Projects.IdeasByIDs(ctx, []string{id})); err != nil {
			return r, err
		}
		if r.idea == nil || r.idea.ProjectID != projectID {
			return r, &domain.Error{Code: domain.CodeNotFound, Field: "ideaId", Message: "idea not found in this project"}
		}
	}
	return r, nil
}

// checkImpacts validates file impacts and turns them into rows of task taskID.
func checkImpacts(taskID string, in []*domain.FileImpactInput, now time.Time) ([]*domain.TaskFileImpact, error) {
	if len(in) > 500 {
		return nil, domain.InputError("fileImpacts", "at most 500 file impacts per task")
	}
	seen := map[string]bool{}
	out := make([]*domain.TaskFileImpact, 0, len(in))
	for _, fi := range in {
		path, err := domain.CheckText("fileImpacts.filePath", fi.FilePath, 1000, true)
		if err != nil {
			return nil, err
		}
		if err := domain.CheckUnit("fileImpacts.confidence", fi.Confidence); err != nil {
			return nil, err
		}
		key := path + "\x00" + string(fi.Operation)
		if seen[key] {
			return nil, domain.InputError("fileImpacts", "%s %s is listed twice", fi.Operation, path)
		}
		seen[key] = true
		conf := 1.0
		if fi.Confidence != nil {
			conf = *fi.Confidence
		}
		src := domain.SourceUserDeclared
		if fi.Source != nil {
			src = *fi.Source
		}
		out = append(out, &domain.TaskFileImpact{ID: app.NewID(), TaskID: taskID, FilePath: path, Operation: fi.Operation,
			Confidence: conf, Source: src, CreatedAt: now, UpdatedAt: now})
	}
	return out, nil
}

// taskLists are the checked list fields shared by create and update.
type taskLists struct {
	acceptance, codebase, api, ui, files []string
}

func checkTaskLists(acceptance, codebase, api, ui, files []string) (taskLists, error) {
	var out taskLists
	var err error
	for _, l := range []struct {
		field string
		in    []string
		out   *[]string
	}{{"acceptanceCriteria", acceptance, &out.acceptance}, {"codebaseTests", codebase, &out.codebase},
		{"apiTests", api, &out.api}, {"uiTests", ui, &out.ui}, {"affectedFiles", files, &out.files}} {
		if l.in == nil {
			continue
		}
		if *l.out, err = domain.CheckList(l.field, l.in, domain.MaxListItems, domain.MaxListEntry); err != nil {
			return out, err
		}
	}
	return out, nil
}

// CreateTask creates a task: PENDING in a list, EVALUATING in the evaluation
// queue, DRAFT otherwise.
func (s *Tasks) CreateTask(ctx context.Context, in domain.CreateTaskInput) (*domain.Task, error) {
	p, err := app.Caller(ctx)
	if err != nil {
		return nil, err
	}
	project, err := s.Projects.writableProject(ctx, p, in.ProjectID, "projectId")
	if err != nil {
		return nil, err
	}
	var t *domain.Task
	err = s.tx(ctx, func(tx *app.Tx) error {
		t, err = s.createTask(ctx, tx, p, project, in)
		return err
	})
	return t, err
}

func (s *Tasks) createTask(ctx context.Context, tx *app.Tx, p *auth.Principal, project *domain.Project, in domain.CreateTaskInput) (*domain.Task, error) {
	title, err := domain.CheckText("title", in.Title, domain.MaxTitle, true)
	if err != nil {
		return nil, err
	}
	desc, err := domain.CheckText("description", deref(in.Description), domain.MaxDescription, false)
	if err != nil {
		return nil, err
	}
	lists, err := checkTaskLists(in.AcceptanceCriteria, in.CodebaseTests, in.APITests, in.UITests, in.AffectedFiles)
	if err != nil {
		return nil, err
	}
	queued := deref(in.InEvaluationQueue)
	if queued && in.TaskListID != nil {
		return nil, domain.InputError("inEvaluationQueue", "a task is in the evaluation queue or in a task list, never both")
	}
	refs, err := resolveRefs(ctx, tx.Q, project.ID, in.TaskListID, in.ParentTaskID, in.IdeaID, in.SupersedesTaskID)
	if err != nil {
		return nil, err
	}
	now := s.now()
	t := &domain.Task{
		ID: app.NewID(), UserID: p.UserID, ProjectID: project.ID, Title: title, Description: desc,
		Category: orDefault(in.Category, domain.CategoryTask), Priority: orDefault(in.Priority, domain.PriorityP3),
		RiskLevel: orDefault(in.RiskLevel, domain.RiskMedium), Effort: in.Effort, Owner: in.Owner, Phase: in.Phase,
		Deadline: utc(in.Deadline), AcceptanceCriteria: lists.acceptance, CodebaseTests: lists.codebase,
		APITests: lists.api, UITests: lists.ui, AffectedFiles: lists.files, Version: 1,
		Status: domain.StatusDraft, CreatedAt: now, UpdatedAt: now,
	}
	if !t.Category.Valid() {
		return nil, domain.InputError("category", "unknown category %q", t.Category)
	}
	impacts, err := checkImpacts(t.ID, in.FileImpacts, now)
	if err != nil {
		return nil, err
	}
	switch {
	case refs.list != nil:
		t.Status, t.TaskListID = domain.StatusPending, &refs.list.ID
	case queued:
		t.Status, t.Queue = domain.StatusEvaluating, ptr(domain.QueueEvaluation)
	}
	if refs.parent != nil {
		t.ParentTaskID = &refs.parent.ID
	}
	if refs.idea != nil {
		t.IdeaID = &refs.idea.ID
	}
	if refs.supersedes != nil {
		t.SupersedesTaskID = &refs.supersedes.ID
	}
	t.Rescore(now)
	n, err := tx.Tasks.NextDisplayNumber(ctx, project.ID, t.Category)
	if err != nil {
		return nil, err
	}
	t.SetDisplayID(domain.DisplayID(project.Slug, t.Category, n))
	if err := tx.Tasks.InsertTask(ctx, t); err != nil {
		return nil, err
	}
	if err := tx.Tasks.InsertStateChange(ctx, &domain.TaskStateChange{ID: app.NewID(), TaskID: t.ID, ToStatus: t.Status,
		Reason: ptr("created"), ChangedBy: ptr(app.Actor(p)), ChangedAt: now}); err != nil {
		return nil, err
	}
	tx.Record(domain.NewTaskCreated(t, now))
	if err := tx.Tasks.ReplaceFileImpacts(ctx, t.ID, impacts); err != nil {
		return nil, err
	}
	if refs.list != nil {
		if err := s.appendToList(ctx, tx, refs.list.ID, []string{t.ID}, now); err != nil {
			return nil, err
		}
	}
	// The parent and superseded task are links of the graph too; a new task has
	// no links yet, so neither can close a cycle.
	for _, link := range []struct {
		target *domain.Task
		typ    domain.RelationshipType
	}{{refs.parent, domain.RelSubtaskOf}, {refs.supersedes, domain.RelSupersedes}} {
		if link.target == nil {
			continue
		}
		if err := tx.Tasks.InsertRelationship(ctx, &domain.TaskRelationship{ID: app.NewID(), SourceTaskID: t.ID,
			TargetTaskID: link.target.ID, Type: link.typ, CreatedAt: now, CreatedByID: &p.UserID}); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// appendToList adds tasks (already checked to be in the list's project) at the end
// of a list and recounts the lists involved.
func (s *Tasks) appendToList(ctx context.Context, tx *app.Tx, listID string, taskIDs []string, now time.Time) error {
	pos, err := tx.Lists.MaxItemPosition(ctx, listID)
	if err != nil {
		return err
	}
	items := make([]*domain.TaskListItem, len(taskIDs))
	for i, id := range taskIDs {
		pos++
		items[i] = &domain.TaskListItem{ID: app.NewID(), TaskListID: listID, TaskID: id, Position: pos,
			ItemStatus: domain.ItemPending, AddedAt: now}
	}
	if err := tx.Lists.InsertItems(ctx, items); err != nil {
		return err
	}
	return tx.Lists.RecountTaskLists(ctx, []string{listID}, now)
}

// editableTask loads a task the caller may change, by global id given in field.
func (s *Tasks) editableTask(ctx context.Context, p *auth.Principal, gid, field string) (*domain.Task, *domain.Project, error) {
	t, project, err := s.visibleTask(ctx, p, gid, field)
	if err != nil {
		return nil, nil, err
	}
	return t, project, checkWriter(p)
}

func (s *Tasks) visibleTask(ctx context.Context, p *auth.Principal, gid, field string) (*domain.Task, *domain.Project, error) {
	id, err := domain.DecodeID(domain.KindTask, gid, field)
	if err != nil {
		return nil, nil, err
	}
	t, err := s.load(ctx).tasks.Get(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	if t == nil {
		return nil, nil, &domain.Error{Code: domain.CodeNotFound, Field: field, Message: "task not found"}
	}
	project, err := s.load(ctx).projects.Get(ctx, t.ProjectID)
	if err != nil {
		return nil, nil, err
	}
	if !app.CanSee(p, project) {
		return nil, nil, &domain.Error{Code: domain.CodeNotFound, Field: field, Message: "task not found"}
	}
	return t, project, nil
}

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
	if in.ActualEffortMinutes != nil && *in.ActualEffortMinutes < 0 {
		return nil, domain.InputError("actualEffortMinutes", "actualEffortMinutes must not be negative")
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
		t.EmbeddingModel = in.EmbeddingModel
	}
	if in.Embedding != nil {
		if len(in.Embedding) > 8192 {
			return domain.InputError("embedding", "embedding has more than 8192 dimensions")
		}
		t.Embedding = domain.EncodeEmbedding(in.Embedding)
	}
	return clearTaskFields(t, in.Null)
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
	var (
		t      *domain.Task
		change *domain.TaskStateChange
	)
	err = s.tx(ctx, func(tx *app.Tx) error {
		if t, err = lockTask(ctx, tx, cur.ID, nil); err != nil {
			return err
		}
		now := s.now()
		// A move the lifecycle forbids is INVALID_TRANSITION whatever the list says.
		if err := domain.CheckTransition(t.Status, in.To, false); err != nil {
			return err
		}
		if in.To == domain.StatusEvaluating && t.TaskListID != nil {
			return &domain.Error{Code: domain.CodeConflict, Field: "to",
				Message: "the task is in a task list; only tasks outside lists go to the evaluation queue"}
		}
		if change, err = s.transition(ctx, tx, p, t, in.To, deref(reason), false, now); err != nil {
			return err
		}
		t.UpdatedAt = now
		return s.saveTransitioned(ctx, tx, t)
	})
	if err != nil {
		return nil, nil, err
	}
	return t, change, nil
}

// transition applies a lifecycle move to t in memory and writes its history row
// and list item; the caller writes the task row.
func (s *Tasks) transition(ctx context.Context, tx *app.Tx, p *auth.Principal, t *domain.Task, to domain.TaskStatus, reason string, engine bool, now time.Time) (*domain.TaskStateChange, error) {
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
	runID := tx.Run()
	change := &domain.TaskStateChange{ID: app.NewID(), TaskID: t.ID, ExecutionRunID: runID, FromStatus: &from, ToStatus: to,
		ChangedBy: ptr(app.Actor(p)), ChangedAt: now}
	if reason != "" {
		change.Reason = &reason
	}
	if err := tx.Tasks.InsertStateChange(ctx, change); err != nil {
		return nil, err
	}
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
		if err := tx.Lists.SetItemStatus(ctx, t.ID, domain.ItemStatusFor(to), started, completed); err != nil {
			return nil, err
		}
	}
	return change, nil
}

// Task finds a task by global id or display id; nil when absent or invisible.
func (s *Tasks) Task(ctx context.Context, gid, displayID *string) (*domain.Task, error) {
	p, err := app.Caller(ctx)
	if err != nil {
		return nil, err
	}
	if (gid == nil) == (displayID == nil) {
		return nil, domain.InputError("id", "give exactly one of id and displayId")
	}
	var t *domain.Task
	if gid != nil {
		kind, id, ok := domain.ParseGlobalID(*gid)
		if !ok {
			return nil, domain.InputError("id", "%q is not a valid id", *gid)
		}
		if kind != domain.KindTask {
			return nil, nil
		}
		if t, err = s.load(ctx).tasks.Get(ctx, id); err != nil {
			return nil, err
		}
	} else if t, err = s.db.Tasks.TaskByDisplayID(ctx, *displayID); errors.Is(err, store.ErrNotFound) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	if t == nil {
		return nil, nil
	}
	project, err := s.load(ctx).projects.Get(ctx, t.ProjectID)
	if err != nil || !app.CanSee(p, project) {
		return nil, err
	}
	return t, nil
}

// TaskByID loads a task for nested fields (nil when gone).
func (s *Tasks) TaskByID(ctx context.Context, id *string) (*domain.Task, error) {
	if id == nil {
		return nil, nil
	}
	return s.load(ctx).tasks.Load(ctx, *id)
}

// TasksArgs are the arguments of a tasks connection.
type TasksArgs struct {
	Filter *domain.TaskFilter
	Order  *domain.TaskOrder
	Page   domain.PageArgs
}

// decodeFilter turns the filter's global ids into database ids.
func decodeFilter(f *domain.TaskFilter) (*domain.TaskFilter, error) {
	if f == nil || f.TaskListID == nil {
		return f, nil
	}
	out := *f
	id, err := domain.DecodeID(domain.KindTaskList, *f.TaskListID, "filter.taskListId")
	if err != nil {
		var de *domain.Error
		if errors.As(err, &de) && de.Code == domain.CodeNotFound {
			id = "00000000-0000-0000-0000-000000000000" // another kind of id matches no task
		} else {
			return nil, err
		}
	}
	out.TaskListID = &id
	return &out, nil
}

// ListTasks pages the tasks of one project, or of every project the caller can see.
func (s *Tasks) ListTasks(ctx context.Context, projectGID *string, args TasksArgs) (domain.Page[*domain.Task], error) {
	p, err := app.Caller(ctx)
	if err != nil {
		return domain.Page[*domain.Task]{}, err
	}
	filter, err := decodeFilter(args.Filter)
	if err != nil {
		return domain.Page[*domain.Task]{}, err
	}
	tq := store.TaskQuery{Scope: app.ScopeOf(p), Filter: filter, Order: args.Order, Page: args.Page}
	if projectGID != nil {
		project, err := s.Projects.visibleProject(ctx, p, *projectGID, "projectId")
		if err != nil {
			return domain.Page[*domain.Task]{}, err
		}
		tq.Scope = domain.ProjectScope{ProjectID: project.ID}
	}
	pages, err := s.db.Tasks.Tasks(ctx, tq)
	if err != nil {
		return domain.Page[*domain.Task]{}, err
	}
	pg := pages[""]
	pg.Total = func(ctx context.Context) (int, error) {
		n, err := s.db.Tasks.CountTasks(ctx, tq)
		return n[""], err
	}
	return pg, nil
}

// TasksOfProject pages a project's tasks (batched across projects).
func (s *Tasks) TasksOfProject(ctx context.Context, projectID string, args TasksArgs) (domain.Page[*domain.Task], error) {
	filter, err := decodeFilter(args.Filter)
	if err != nil {
		return domain.Page[*domain.Task]{}, err
	}
	return s.nestedTasks(ctx, "Project.tasks", projectID, store.TaskQuery{Scope: domain.ProjectScope{All: true},
		Filter: filter, Order: args.Order, Page: args.Page}, false)
}

// EvaluationQueue pages a project's queued tasks, highest priority score first.
func (s *Tasks) EvaluationQueue(ctx context.Context, projectID string, page domain.PageArgs) (domain.Page[*domain.Task], error) {
	return s.nestedTasks(ctx, "Project.evaluationQueue", projectID, store.TaskQuery{Scope: domain.ProjectScope{All: true},
		Filter: &domain.TaskFilter{InEvaluationQueue: ptr(true)},
		Order:  &domain.TaskOrder{Field: domain.OrderPriorityScore, Direction: domain.OrderDesc}, Page: page}, false)
}

// TasksOfIdea pages the tasks related to an idea.
func (s *Tasks) TasksOfIdea(ctx context.Context, ideaID string, page domain.PageArgs) (domain.Page[*domain.Task], error) {
	return s.nestedTasks(ctx, "Idea.tasks", ideaID, store.TaskQuery{Scope: domain.ProjectScope{All: true}, Page: page}, true)
}

func (s *Tasks) nestedTasks(ctx context.Context, field, parent string, tq store.TaskQuery, byIdea bool) (domain.Page[*domain.Task], error) {
	withParents := func(parents []string) store.TaskQuery {
		out := tq
		if byIdea {
			out.IdeaIDs = parents
		} else {
			out.ProjectIDs = parents
		}
		return out
	}
	return app.NestedPage(ctx, s.db, field, tq, parent,
		func(ctx context.Context, q *store.Q, parents []string) (map[string]domain.Page[*domain.Task], error) {
			return q.Tasks.Tasks(ctx, withParents(parents))
		},
		func(ctx context.Context, q *store.Q, parents []string) (map[string]int, error) {
			return q.Tasks.CountTasks(ctx, withParents(parents))
		})
}

func orDefault[T any](v *T, def T) T {
	if v == nil {
		return def
	}
	return *v
}

func setIf[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC().Truncate(time.Microsecond)
	return &u
}
