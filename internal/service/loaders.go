package service

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/loader"
	"github.com/taskgraph/taskgraph/internal/store"
)

// loaders are one request's batched reads. Entry points check visibility; the
// nested fields read through here stay inside what the entry point showed.
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
	relsOfTask    *loader.Loader[string, []*domain.TaskRelationship]
	historyOfTask *loader.Loader[string, []*domain.TaskStateChange]
	blocksOfTask  *loader.Loader[string, []*domain.TaskBlock]
	impactsOfTask *loader.Loader[string, []*domain.TaskFileImpact]
	itemOfTask    *loader.Loader[string, *domain.TaskListItem]
	lastEventSeq  *loader.Loader[string, int64] // by project

	mu    sync.Mutex
	pages map[string]clearer // connection loaders, one per field and arguments
	all   []clearer
}

type clearer interface{ Clear() }

// byID adapts a store batch read to a loader fetch keyed by id.
func byID[T any](fetch func(context.Context, []string) ([]*T, error), id func(*T) string) func(context.Context, []string) (map[string]*T, error) {
	return func(ctx context.Context, ids []string) (map[string]*T, error) {
		rows, err := fetch(ctx, ids)
		if err != nil {
			return nil, err
		}
		out := make(map[string]*T, len(rows))
		for _, r := range rows {
			out[id(r)] = r
		}
		return out, nil
	}
}

// grouped adapts a store read of children to a loader fetch keyed by parent.
func grouped[T any](fetch func(context.Context, []string) ([]*T, error), parent func(*T) []string) func(context.Context, []string) (map[string][]*T, error) {
	return func(ctx context.Context, ids []string) (map[string][]*T, error) {
		rows, err := fetch(ctx, ids)
		if err != nil {
			return nil, err
		}
		out := make(map[string][]*T, len(ids))
		for _, r := range rows {
			for _, p := range parent(r) {
				out[p] = append(out[p], r)
			}
		}
		return out, nil
	}
}

func newLoaders(s *Service) *loaders {
	q := &s.db.Q
	w := s.loaderTiming
	l := &loaders{pages: map[string]clearer{}}
	l.users = loader.New(w, byID(q.UsersByIDs, func(u *domain.User) string { return u.ID }))
	l.tokens = loader.New(w, byID(q.APITokensByIDs, func(t *domain.APIToken) string { return t.ID }))
	l.projects = loader.New(w, byID(q.ProjectsByIDs, func(p *domain.Project) string { return p.ID }))
	l.ideas = loader.New(w, byID(q.IdeasByIDs, func(i *domain.Idea) string { return i.ID }))
	l.tasks = loader.New(w, byID(q.TasksByIDs, func(t *domain.Task) string { return t.ID }))
	l.lists = loader.New(w, byID(q.TaskListsByIDs, func(t *domain.TaskList) string { return t.ID }))
	l.items = loader.New(w, byID(q.ItemsByIDs, func(i *domain.TaskListItem) string { return i.ID }))
	l.relationships = loader.New(w, byID(q.RelationshipsByIDs, func(r *domain.TaskRelationship) string { return r.ID }))
	l.stateChanges = loader.New(w, byID(q.StateChangesByIDs, func(c *domain.TaskStateChange) string { return c.ID }))
	l.blocks = loader.New(w, byID(q.BlocksByIDs, func(b *domain.TaskBlock) string { return b.ID }))
	l.impacts = loader.New(w, byID(q.FileImpactsByIDs, func(f *domain.TaskFileImpact) string { return f.ID }))
	l.templates = loader.New(w, byID(q.TemplatesByIDs, func(t *domain.TaskTemplate) string { return t.ID }))
	l.tokensOfUser = loader.New(w, grouped(q.APITokensByUsers, func(t *domain.APIToken) []string { return []string{t.UserID} }))
	l.relsOfTask = loader.New(w, grouped(q.RelationshipsOfTasks, func(r *domain.TaskRelationship) []string {
		return []string{r.SourceTaskID, r.TargetTaskID}
	}))
	l.historyOfTask = loader.New(w, grouped(q.StateHistoryOfTasks, func(c *domain.TaskStateChange) []string { return []string{c.TaskID} }))
	l.blocksOfTask = loader.New(w, grouped(q.BlocksOfTasks, func(b *domain.TaskBlock) []string { return []string{b.TaskID} }))
	l.impactsOfTask = loader.New(w, grouped(q.FileImpactsOfTasks, func(f *domain.TaskFileImpact) []string { return []string{f.TaskID} }))
	l.itemOfTask = loader.New(w, byID(q.ItemsOfTasks, func(i *domain.TaskListItem) string { return i.TaskID }))
	l.lastEventSeq = loader.New(w, q.LastEventSeqs)
	l.all = []clearer{l.users, l.tokens, l.projects, l.ideas, l.tasks, l.lists, l.items, l.relationships,
		l.stateChanges, l.blocks, l.impacts, l.templates, l.tokensOfUser, l.relsOfTask, l.historyOfTask,
		l.blocksOfTask, l.impactsOfTask, l.itemOfTask, l.lastEventSeq}
	return l
}

func (l *loaders) clear() {
	for _, c := range l.all {
		c.Clear()
	}
	l.mu.Lock()
	for _, c := range l.pages {
		c.Clear()
	}
	l.mu.Unlock()
}

type loadersKey struct{}

// lazyLoaders makes a request's loaders when it first reads through them: a
// subscription event whose fields need no reads costs nothing.
type lazyLoaders struct {
	once sync.Once
	s    *Service
	l    *loaders
}

func (z *lazyLoaders) get() *loaders {
	z.once.Do(func() { z.l = newLoaders(z.s) })
	return z.l
}

// WithLoaders gives ctx a fresh set of batched readers; call it once per GraphQL
// operation (and per event of a subscription).
func (s *Service) WithLoaders(ctx context.Context) context.Context {
	return context.WithValue(ctx, loadersKey{}, &lazyLoaders{s: s})
}

// withoutLoaders hides the request's loaders: reads through the returned
// context use a set of their own, dropped afterwards.
func withoutLoaders(ctx context.Context) context.Context {
	return context.WithValue(ctx, loadersKey{}, (*lazyLoaders)(nil))
}

func loadersFrom(ctx context.Context) *loaders {
	if z, _ := ctx.Value(loadersKey{}).(*lazyLoaders); z != nil {
		return z.get()
	}
	return nil
}

// load returns the request's loaders, or a fresh unshared set when the caller
// set none (direct service use outside a GraphQL operation).
func (s *Service) load(ctx context.Context) *loaders {
	if l := loadersFrom(ctx); l != nil {
		return l
	}
	return newLoaders(s)
}

// pageLoader returns the request's loader for one connection field with given
// arguments (a batch pages every parent with the same arguments at once).
func pageLoader[T any](ctx context.Context, s *Service, field string, args any,
	fetch func(ctx context.Context, parents []string) (map[string]domain.Page[T], error),
) *loader.Loader[string, domain.Page[T]] {
	l := s.load(ctx)
	b, _ := json.Marshal(args)
	key := field + string(b)
	l.mu.Lock()
	defer l.mu.Unlock()
	if got, ok := l.pages[key]; ok {
		return got.(*loader.Loader[string, domain.Page[T]])
	}
	ld := loader.New(s.loaderTiming, fetch)
	l.pages[key] = ld
	return ld
}

// countLoader is pageLoader for the totals of a connection field.
func countLoader(ctx context.Context, s *Service, field string, args any,
	fetch func(ctx context.Context, parents []string) (map[string]int, error),
) *loader.Loader[string, int] {
	l := s.load(ctx)
	b, _ := json.Marshal(args)
	key := "count:" + field + string(b)
	l.mu.Lock()
	defer l.mu.Unlock()
	if got, ok := l.pages[key]; ok {
		return got.(*loader.Loader[string, int])
	}
	ld := loader.New(s.loaderTiming, fetch)
	l.pages[key] = ld
	return ld
}

// nestedPage loads the page of one parent through the field's batched loader and
// gives it a batched total.
func nestedPage[T any](ctx context.Context, s *Service, field string, args any, parent string,
	fetch func(ctx context.Context, q *store.Q, parents []string) (map[string]domain.Page[T], error),
	count func(ctx context.Context, q *store.Q, parents []string) (map[string]int, error),
) (domain.Page[T], error) {
	pl := pageLoader(ctx, s, field, args, func(ctx context.Context, parents []string) (map[string]domain.Page[T], error) {
		return fetch(ctx, &s.db.Q, parents)
	})
	pg, err := pl.Load(ctx, parent)
	if err != nil {
		return pg, err
	}
	pg.Total = func(ctx context.Context) (int, error) {
		cl := countLoader(ctx, s, field, args, func(ctx context.Context, parents []string) (map[string]int, error) {
			return count(ctx, &s.db.Q, parents)
		})
		return cl.Load(ctx, parent)
	}
	return pg, nil
}
