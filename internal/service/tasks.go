package service

import (
	"context"
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
	if err := domain.CheckDeadline("deadline", in.Deadline); err != nil {
		return nil, err
	}
	queued := deref(in.InEvaluationQueue)
	if queued && in.TaskListID != nil {
		return nil, domain.InputError("inEvaluationQueue", "a task is in the evaluation queue or in a task list, never both")
	}
	var embedding []byte
	var embeddingModel *string
	if in.Embedding != nil {
		model, err := domain.CheckEmbedding("embedding", in.Embedding, "embeddingModel", in.EmbeddingModel)
		if err != nil {
			return nil, err
		}
		embedding, embeddingModel = domain.EncodeEmbedding(in.Embedding), &model
	} else if in.EmbeddingModel != nil {
		return nil, domain.InputError("embeddingModel", "embeddingModel goes with an embedding")
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
		Status: domain.StatusDraft, CreatedAt: now, UpdatedAt: now, Embedding: embedding, EmbeddingModel: embeddingModel,
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
	if err := s.checkTaskDimension(ctx, tx, t); err != nil {
		return nil, err
	}
	// A task entering a list may yet be refused by the list's gate: its
	// number is the transaction's, given back if it is (its creates take
	// turns on the list's row anyway). Any other create takes its number at
	// once, so that a project's creates do not queue on the counter; after
	// that only the database can make it fail.
	takeNumber := tx.Tasks.TakeDisplayNumber
	if refs.list != nil {
		takeNumber = tx.Tasks.NextDisplayNumber
	}
	n, err := takeNumber(ctx, project.ID, t.Category)
	if err != nil {
		return nil, err
	}
	t.SetDisplayID(domain.DisplayID(project.DisplayCode, t.Category, n))
	if err := tx.Tasks.InsertTask(ctx, t); err != nil {
		return nil, err
	}
	if err := tx.Tasks.InsertStateChange(ctx, &domain.TaskStateChange{ID: app.NewID(), TaskID: t.ID, ToStatus: t.Status,
		Reason: ptr("created"), ChangedBy: ptr(app.Actor(p)), ChangedAt: now}); err != nil {
		return nil, err
	}
	tx.Record(domain.NewTaskCreated(t, now))
	if err := tx.Tasks.InsertFileImpacts(ctx, impacts); err != nil {
		return nil, err
	}
	if refs.list != nil {
		if err := s.gatePending(ctx, tx, t); err != nil {
			return nil, err
		}
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
	// The list is locked from here: an archive that committed first is seen.
	st, pos, err := tx.Lists.ListForAppend(ctx, listID)
	if err != nil {
		return err
	}
	if err := domain.CheckListTakesTasks(st, "taskListId"); err != nil {
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

func orDefault[T any](v *T, def T) T {
	if v == nil {
		return def
	}
	return *v
}

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC().Truncate(time.Microsecond)
	return &u
}
