package service

import (
	"context"
	"errors"
	"time"

	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/loader"
	"github.com/taskgraph/taskgraph/internal/store"
)

// insertLink inserts a link after checking that it closes no cycle in its acyclic
// graph, then refreshes the blocks count and score of both ends.
func (s *Tasks) insertLink(ctx context.Context, tx *app.Tx, projectID string, r *domain.TaskRelationship, field string) error {
	if domain.GraphKind(r.Type) != nil || domain.PlanningLink(r.Type) {
		if err := tx.Tasks.LockProjectGraph(ctx, projectID); err != nil {
			return err
		}
	}
	if kinds := domain.GraphKind(r.Type); kinds != nil {
		from, to := domain.OrderingEdge(r.Type, r.SourceTaskID, r.TargetTaskID)
		// Would `from` become reachable from itself? Search from `to`, one SQL
		// statement per level of the part of the graph reachable from it.
		path, err := domain.SearchPath(to, from, func(frontier []string) (map[string][]string, error) {
			edges, err := tx.Tasks.OrderingEdgesFrom(ctx, frontier, kinds)
			adj := make(map[string][]string, len(frontier))
			for _, e := range edges {
				adj[e.From] = append(adj[e.From], e.To)
			}
			return adj, err
		})
		if err != nil {
			return err
		}
		if path != nil {
			cycle := make([]string, 0, len(path)+1)
			for _, id := range append([]string{from}, path...) {
				cycle = append(cycle, domain.GlobalID(domain.KindTask, id))
			}
			cycle = cycle[:len(cycle)-1] // the path ends where the cycle began
			return &domain.Error{Code: domain.CodeCycleDetected, Field: field,
				Message: "this " + string(r.Type) + " link would close a cycle", Details: map[string]any{"cycle": cycle}}
		}
	}
	if err := tx.Tasks.InsertRelationship(ctx, r); errors.Is(err, store.ErrUnique) {
		return &domain.Error{Code: domain.CodeConflict, Field: field,
			Message: "these tasks already have a " + string(r.Type) + " link"}
	} else if err != nil {
		return err
	}
	if err := invalidateLinked(ctx, tx, r, s.now()); err != nil {
		return err
	}
	return s.rescoreLinked(ctx, tx, r)
}

// invalidateLinked invalidates the parallelism analysis of both ends of a
// planning link (DEPENDS_ON, BLOCKS, CONFLICTS_WITH) that was added or removed;
// other link types do not change a plan.
func invalidateLinked(ctx context.Context, tx *app.Tx, r *domain.TaskRelationship, now time.Time) error {
	if !domain.PlanningLink(r.Type) {
		return nil
	}
	return tx.Planning.InvalidateAnalysesOfTasks(ctx, []string{r.SourceTaskID, r.TargetTaskID}, now)
}

// rescoreLinked recounts blocks and recomputes scores after a dependency link
// between the two ends of r changed.
func (s *Tasks) rescoreLinked(ctx context.Context, tx *app.Tx, r *domain.TaskRelationship) error {
	if r.Type != domain.RelDependsOn && r.Type != domain.RelBlocks {
		return nil
	}
	ids := []string{r.SourceTaskID, r.TargetTaskID}
	if err := tx.Tasks.RecountBlocks(ctx, ids); err != nil {
		return err
	}
	tasks, err := tx.Tasks.TasksByIDs(ctx, ids)
	if err != nil {
		return err
	}
	now := s.now()
	for _, t := range tasks {
		t.Rescore(now)
		if err := tx.Tasks.SetTaskScore(ctx, t.ID, t.PriorityScore, t.IsQuickWin); err != nil {
			return err
		}
	}
	return nil
}

// AddTaskRelationship links two tasks of one project.
func (s *Tasks) AddTaskRelationship(ctx context.Context, in domain.AddTaskRelationshipInput) (*domain.TaskRelationship, error) {
	p, err := app.Caller(ctx)
	if err != nil {
		return nil, err
	}
	source, project, err := s.editableTask(ctx, p, in.SourceTaskID, "sourceTaskId")
	if err != nil {
		return nil, err
	}
	target, _, err := s.visibleTask(ctx, p, in.TargetTaskID, "targetTaskId")
	if err != nil {
		return nil, err
	}
	if target.ProjectID != project.ID {
		return nil, domain.InputError("targetTaskId", "both tasks must belong to the same project")
	}
	if source.ID == target.ID {
		return nil, domain.InputError("targetTaskId", "a task cannot be linked to itself")
	}
	if err := domain.CheckUnit("strength", in.Strength); err != nil {
		return nil, err
	}
	notes, err := domain.CheckOptText("notes", in.Notes, 2000)
	if err != nil {
		return nil, err
	}
	r := &domain.TaskRelationship{ID: app.NewID(), SourceTaskID: source.ID, TargetTaskID: target.ID, Type: in.Type,
		Strength: in.Strength, Notes: notes, CreatedAt: s.now(), CreatedByID: &p.UserID}
	err = s.tx(ctx, func(tx *app.Tx) error {
		if err := s.insertLink(ctx, tx, project.ID, r, "type"); err != nil {
			return err
		}
		return mirrorRef(ctx, tx, r)
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// mirrorRef keeps Task.parentTask and Task.supersedes in step with a new
// SUBTASK_OF or SUPERSEDES link, as createTask and updateTask do from the other
// side: a task has one parent and supersedes one task.
func mirrorRef(ctx context.Context, tx *app.Tx, r *domain.TaskRelationship) error {
	if r.Type != domain.RelSubtaskOf && r.Type != domain.RelSupersedes {
		return nil
	}
	set, err := tx.Tasks.SetMirroredRef(ctx, r.SourceTaskID, r.TargetTaskID, r.Type)
	if err != nil || set {
		return err
	}
	what, field := "a parent task", "parentTaskId"
	if r.Type == domain.RelSupersedes {
		what, field = "a task it supersedes", "supersedesTaskId"
	}
	return &domain.Error{Code: domain.CodeConflict, Field: "sourceTaskId",
		Message: "the source task already has " + what + "; change it with updateTask(" + field + ")"}
}

// RemoveTaskRelationship removes a link and returns it.
func (s *Tasks) RemoveTaskRelationship(ctx context.Context, in domain.RemoveTaskRelationshipInput) (*domain.TaskRelationship, error) {
	p, err := app.Caller(ctx)
	if err != nil {
		return nil, err
	}
	id, err := domain.DecodeID(domain.KindRelationship, in.ID, "id")
	if err != nil {
		return nil, err
	}
	r, err := s.load(ctx).relationships.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	if r == nil {
		return nil, domain.NotFound("relationship")
	}
	_, project, err := s.editableTask(ctx, p, domain.GlobalID(domain.KindTask, r.SourceTaskID), "id")
	if err != nil {
		return nil, notFoundAs(err, "relationship")
	}
	err = s.tx(ctx, func(tx *app.Tx) error {
		if domain.PlanningLink(r.Type) {
			if err := tx.Tasks.LockProjectGraph(ctx, project.ID); err != nil {
				return err
			}
		}
		if err := tx.Tasks.DeleteRelationship(ctx, id); err != nil {
			return err
		}
		if err := invalidateLinked(ctx, tx, r, s.now()); err != nil {
			return err
		}
		if r.Type == domain.RelSubtaskOf || r.Type == domain.RelSupersedes {
			if err := tx.Tasks.ClearMirroredRef(ctx, r.SourceTaskID, r.TargetTaskID, r.Type); err != nil {
				return err
			}
		}
		return s.rescoreLinked(ctx, tx, r)
	})
	return r, err
}

// notFoundAs renames a NOT_FOUND error to what the caller asked for.
func notFoundAs(err error, what string) error {
	if domain.ErrorCode(err) == domain.CodeNotFound {
		return domain.NotFound(what)
	}
	return err
}

// RelationshipByID loads a link for nested fields.
func (s *Tasks) RelationshipByID(ctx context.Context, id string) (*domain.TaskRelationship, error) {
	return s.load(ctx).relationships.Load(ctx, id)
}

// Relationships lists a task's links by direction and type. One direction
// reads only that direction's links.
func (s *Tasks) Relationships(ctx context.Context, taskID string, dir domain.RelationshipDirection, types []domain.RelationshipType) ([]*domain.TaskRelationship, error) {
	all, err := s.load(ctx).relsIn(dir).Load(ctx, taskID)
	if err != nil {
		return nil, err
	}
	return ofTypes(all, types), nil
}

// relsIn is the loader of tasks' links in direction dir.
func (l *loaders) relsIn(dir domain.RelationshipDirection) *loader.Loader[string, []*domain.TaskRelationship] {
	switch dir {
	case domain.DirectionOutgoing:
		return l.relsFromTask
	case domain.DirectionIncoming:
		return l.relsToTask
	}
	return l.relsOfTask
}

// ofTypes is a task's links of the given types (all of them when none is
// given), never nil.
func ofTypes(all []*domain.TaskRelationship, types []domain.RelationshipType) []*domain.TaskRelationship {
	if len(types) == 0 && all != nil {
		return all
	}
	out := []*domain.TaskRelationship{}
	for _, r := range all {
		if len(types) == 0 || containsType(types, r.Type) {
			out = append(out, r)
		}
	}
	return out
}

func containsType(types []domain.RelationshipType, t domain.RelationshipType) bool {
	for _, x := range types {
		if x == t {
			return true
		}
	}
	return false
}

// Links picks, among a task's relationships, those to the tasks of one of
// its task lists (Dependencies, Dependents, Subtasks): the task at their
// other end, when r is one.
type Links func(taskID string, r *domain.TaskRelationship) (other string, ok bool)

// The task lists of a task made of its links.
var (
	// DependencyLinks: the tasks that must finish before a task — its
	// DEPENDS_ON targets and the sources of BLOCKS links to it.
	DependencyLinks Links = func(taskID string, r *domain.TaskRelationship) (string, bool) {
		switch {
		case r.Type == domain.RelDependsOn && r.SourceTaskID == taskID:
			return r.TargetTaskID, true
		case r.Type == domain.RelBlocks && r.TargetTaskID == taskID:
			return r.SourceTaskID, true
		}
		return "", false
	}
	// DependentLinks: the tasks that wait on a task.
	DependentLinks Links = func(taskID string, r *domain.TaskRelationship) (string, bool) {
		switch {
		case r.Type == domain.RelDependsOn && r.TargetTaskID == taskID:
			return r.SourceTaskID, true
		case r.Type == domain.RelBlocks && r.SourceTaskID == taskID:
			return r.TargetTaskID, true
		}
		return "", false
	}
	// SubtaskLinks: the tasks that are SUBTASK_OF a task.
	SubtaskLinks Links = func(taskID string, r *domain.TaskRelationship) (string, bool) {
		return r.SourceTaskID, r.Type == domain.RelSubtaskOf && r.TargetTaskID == taskID
	}
)

// linkedIDs are the ids, once each in link order, at the other end of
// taskID's relationships rels that links picks.
func linkedIDs(taskID string, rels []*domain.TaskRelationship, links Links) []string {
	seen := map[string]bool{}
	var ids []string
	for _, r := range rels {
		if other, ok := links(taskID, r); ok && !seen[other] {
			seen[other] = true
			ids = append(ids, other)
		}
	}
	return ids
}

// shown are tasks without the nils (tasks not shown to the caller).
func shown(tasks []*domain.Task) []*domain.Task {
	out := make([]*domain.Task, 0, len(tasks))
	for _, t := range tasks {
		if t != nil {
			out = append(out, t)
		}
	}
	return out
}

// Linked loads the tasks at the other end of taskID's links that links picks.
func (s *Tasks) Linked(ctx context.Context, taskID string, links Links) ([]*domain.Task, error) {
	all, err := s.load(ctx).relsOfTask.Load(ctx, taskID)
	if err != nil {
		return nil, err
	}
	tasks, err := s.load(ctx).shownTasks().LoadMany(ctx, linkedIDs(taskID, all, links))
	if err != nil {
		return nil, err
	}
	return shown(tasks), nil
}
