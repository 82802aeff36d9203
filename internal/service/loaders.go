package service

import (
	"context"

	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/loader"
	"github.com/taskgraph/taskgraph/internal/store"
)

// loaders are one request's batched reads of the core's entities (a set of
// app.Loaders). Entry points check visibility; the nested fields read through
// here stay inside what the entry point showed.
type loaders struct {
	users         *loader.Loader[string, *domain.User]
	tokens        *loader.Loader[string, *domain.APIToken]
	projects      *loader.Loader[string, *domain.Project]
	ideas         *loader.Loader[string, *domain.Idea]
	tasks         *loader.Loader[string, *domain.Task]
	lists         *loader.Loader[string, *domain.TaskList]
	items         *loader.Loader[string, *domain.TaskListItem]
	relationships *loader.Loader[string, *domain.TaskRelationship]
	stateChanges  *loader.Loader[string, *domain.TaskStateChange]
	blocks        *loader.Loader[string, *domain.TaskBlock]
	impacts       *loader.Loader[string, *domain.TaskFileImpact]
	templates     *loader.Loader[string, *domain.TaskTemplate]

	tokensOfUser  *loader.Loader[string, []*domain.APIToken]
	relsOfTask    *loader.Loader[string, []*domain.TaskRelationship] // both directions
	relsFromTask  *loader.Loader[string, []*domain.TaskRelationship] // outgoing
	relsToTask    *loader.Loader[string, []*domain.TaskRelationship] // incoming
	historyOfTask *loader.Loader[string, []*domain.TaskStateChange]
	blocksOfTask  *loader.Loader[string, []*domain.TaskBlock]
	impactsOfTask *loader.Loader[string, []*domain.TaskFileImpact]
	itemOfTask    *loader.Loader[string, *domain.TaskListItem]
	lastEventSeq  *loader.Loader[string, int64] // by project

	// The lean reads of what the operation shows (app.Lean): nil unless it
	// may read them lean.
	leanTasks         *loader.Loader[string, *domain.Task]
	leanImpactsOfTask *loader.Loader[string, []*domain.TaskFileImpact]
	// taskShown is what the operation shows of tasks, for the reads of
	// tasks that go around the task loaders (a list's task page).
	taskShown app.Shown

	all []app.Clearer
}

func newLoaders(s *Service, w loader.Timing, lean app.Lean) *loaders {
	q := &s.db.Q
	l := &loaders{taskShown: lean.Tasks}
	l.users = loader.New(w, app.ByID(q.Users.UsersByIDs, func(u *domain.User) string { return u.ID }))
	l.tokens = loader.New(w, app.ByID(q.Users.APITokensByIDs, func(t *domain.APIToken) string { return t.ID }))
	l.projects = loader.New(w, app.ByID(q.Projects.ProjectsByIDs, func(p *domain.Project) string { return p.ID }))
	l.ideas = loader.New(w, app.ByID(q.Projects.IdeasByIDs, func(i *domain.Idea) string { return i.ID }))
	l.tasks = loader.New(w, app.ByID(q.Tasks.TasksByIDs, func(t *domain.Task) string { return t.ID }))
	l.lists = loader.New(w, app.ByID(q.Lists.TaskListsByIDs, func(t *domain.TaskList) string { return t.ID }))
	l.items = loader.New(w, app.ByID(q.Lists.ItemsByIDs, func(i *domain.TaskListItem) string { return i.ID }))
	l.relationships = loader.New(w, app.ByID(q.Tasks.RelationshipsByIDs, func(r *domain.TaskRelationship) string { return r.ID }))
	l.stateChanges = loader.New(w, app.ByID(q.Tasks.StateChangesByIDs, func(c *domain.TaskStateChange) string { return c.ID }))
	l.blocks = loader.New(w, app.ByID(q.Tasks.BlocksByIDs, func(b *domain.TaskBlock) string { return b.ID }))
	l.impacts = loader.New(w, app.ByID(q.Tasks.FileImpactsByIDs, func(f *domain.TaskFileImpact) string { return f.ID }))
	l.templates = loader.New(w, app.ByID(q.Lists.TemplatesByIDs, func(t *domain.TaskTemplate) string { return t.ID }))
	l.tokensOfUser = loader.New(w, app.GroupedBy(q.Users.APITokensByUsers, func(t *domain.APIToken) string { return t.UserID }))
	// The links are only ever shown, or their ends and types followed
	// (Linked): read lean when the operation may.
	l.relsOfTask = loader.New(w, app.Grouped(relationships(q, lean.Relationships, domain.DirectionBoth), func(r *domain.TaskRelationship) []string {
		return []string{r.SourceTaskID, r.TargetTaskID}
	}))
	l.relsFromTask = loader.New(w, app.GroupedBy(relationships(q, lean.Relationships, domain.DirectionOutgoing), func(r *domain.TaskRelationship) string {
		return r.SourceTaskID
	}))
	l.relsToTask = loader.New(w, app.GroupedBy(relationships(q, lean.Relationships, domain.DirectionIncoming), func(r *domain.TaskRelationship) string {
		return r.TargetTaskID
	}))
	l.historyOfTask = loader.New(w, app.GroupedBy(q.Tasks.StateHistoryOfTasks, func(c *domain.TaskStateChange) string { return c.TaskID }))
	l.blocksOfTask = loader.New(w, app.GroupedBy(q.Tasks.BlocksOfTasks, func(b *domain.TaskBlock) string { return b.TaskID }))
	l.impactsOfTask = loader.New(w, app.GroupedBy(q.Tasks.FileImpactsOfTasks, func(f *domain.TaskFileImpact) string { return f.TaskID }))
	l.itemOfTask = loader.New(w, app.ByID(q.Lists.ItemsOfTasks, func(i *domain.TaskListItem) string { return i.TaskID }))
	l.lastEventSeq = loader.New(w, q.Events.LastEventSeqs)
	l.all = []app.Clearer{l.users, l.tokens, l.projects, l.ideas, l.tasks, l.lists, l.items, l.relationships,
		l.stateChanges, l.blocks, l.impacts, l.templates, l.tokensOfUser, l.relsOfTask, l.relsFromTask, l.relsToTask, l.historyOfTask,
		l.blocksOfTask, l.impactsOfTask, l.itemOfTask, l.lastEventSeq}
	if shown := lean.Tasks; shown.Lean {
		l.leanTasks = loader.New(w, app.ByID(func(ctx context.Context, ids []string) ([]*domain.Task, error) {
			return q.Tasks.ShownTasksByIDs(ctx, shown.Fields, ids)
		}, func(t *domain.Task) string { return t.ID }))
		l.all = append(l.all, l.leanTasks)
	}
	if shown := lean.FileImpacts; shown.Lean {
		l.leanImpactsOfTask = loader.New(w, app.GroupedBy(func(ctx context.Context, taskIDs []string) ([]*domain.TaskFileImpact, error) {
			return q.Tasks.ShownFileImpactsOfTasks(ctx, shown.Fields, taskIDs)
		}, func(f *domain.TaskFileImpact) string { return f.TaskID }))
		l.all = append(l.all, l.leanImpactsOfTask)
	}
	return l
}

// shownTasks reads the tasks the response shows: lean when the operation may.
func (l *loaders) shownTasks() *loader.Loader[string, *domain.Task] {
	if l.leanTasks != nil {
		return l.leanTasks
	}
	return l.tasks
}

// shownImpacts reads the file impacts the response shows, per task: lean
// when the operation may.
func (l *loaders) shownImpacts() *loader.Loader[string, []*domain.TaskFileImpact] {
	if l.leanImpactsOfTask != nil {
		return l.leanImpactsOfTask
	}
	return l.impactsOfTask
}

// relationships reads the links of tasks in direction dir: only what shown
// says when it is lean.
func relationships(q *store.Q, shown app.Shown, dir domain.RelationshipDirection) func(context.Context, []string) ([]*domain.TaskRelationship, error) {
	return func(ctx context.Context, taskIDs []string) ([]*domain.TaskRelationship, error) {
		if shown.Lean {
			return q.Tasks.ShownRelationshipsOfTasks(ctx, shown.Fields, dir, taskIDs)
		}
		switch dir {
		case domain.DirectionOutgoing:
			return q.Tasks.RelationshipsFromTasks(ctx, taskIDs)
		case domain.DirectionIncoming:
			return q.Tasks.RelationshipsToTasks(ctx, taskIDs)
		}
		return q.Tasks.RelationshipsOfTasks(ctx, taskIDs)
	}
}

// Clear forgets every cached read.
func (l *loaders) Clear() {
	for _, c := range l.all {
		c.Clear()
	}
}

type loadersKey struct{}

// load returns the request's loaders of the core's entities.
func (s *Service) load(ctx context.Context) *loaders {
	return app.Set(ctx, loadersKey{}, func(w loader.Timing) *loaders { return newLoaders(s, w, app.LeanOf(ctx)) })
}
