package app

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/loader"
	"github.com/taskgraph/taskgraph/internal/store"
)

// Loaders are one request's batched readers: each domain keeps its set of
// loaders here under a key of its own, and each connection field one loader
// per arguments. Entry points check visibility; nested fields read through
// here stay inside what the entry point showed.
type Loaders struct {
	timing loader.Timing
	mu     sync.Mutex
	sets   map[any]Clearer
}

// Clearer is a loader, or a set of them, whose cached reads can be dropped.
type Clearer interface{ Clear() }

// Timing is when the loaders' batches close.
func (l *Loaders) Timing() loader.Timing { return l.timing }

// Clear drops every cached read (after a commit, so a payload shows the new
// state).
func (l *Loaders) Clear() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range l.sets {
		c.Clear()
	}
}

type loadersKey struct{}

// lazyLoaders makes a request's loaders when it first reads through them: a
// subscription event whose fields need no reads costs nothing.
type lazyLoaders struct {
	once   sync.Once
	timing loader.Timing
	lean   Lean
	l      *Loaders
}

// Lean is which entities an operation may read lean, and what it shows of
// each: the GraphQL layer decides it from the operation's selections; the
// services read the entities they show through lean loaders when it says
// so, and never decide a rule on an entity read lean.
type Lean struct {
	Tasks         Shown
	FileImpacts   Shown
	Relationships Shown
}

// Shown is what an operation shows of an entity. Lean: only Fields (names
// of the entity's domain struct fields) and what the store always reads
// (its id and the ids it is reached by) need be read, and the other fields
// may stay zero; otherwise everything is read.
type Shown struct {
	Lean   bool
	Fields []string
}

func (z *lazyLoaders) get() *Loaders {
	z.once.Do(func() { z.l = &Loaders{timing: z.timing, sets: map[any]Clearer{}} })
	return z.l
}

// WithLoaders gives ctx a fresh set of batched readers whose batches close as
// timing says, reading lean what lean says; call it once per GraphQL
// operation (and per event of a subscription).
func WithLoaders(ctx context.Context, timing loader.Timing, lean Lean) context.Context {
	return context.WithValue(ctx, loadersKey{}, &lazyLoaders{timing: timing, lean: lean})
}

// LeanOf is what ctx's operation may read lean (nothing outside one).
func LeanOf(ctx context.Context) Lean {
	if z, _ := ctx.Value(loadersKey{}).(*lazyLoaders); z != nil {
		return z.lean
	}
	return Lean{}
}

// WithoutLoaders hides the request's loaders: reads through the returned
// context use loaders of their own, dropped afterwards (a subscription's
// context lives as long as it does, and must not keep a request's reads).
func WithoutLoaders(ctx context.Context) context.Context {
	return context.WithValue(ctx, loadersKey{}, (*lazyLoaders)(nil))
}

// LoadersFrom returns the request's loaders, or, when ctx has none (a direct
// call outside a GraphQL operation), a fresh unshared set.
func LoadersFrom(ctx context.Context) *Loaders {
	if z, _ := ctx.Value(loadersKey{}).(*lazyLoaders); z != nil {
		return z.get()
	}
	return &Loaders{timing: loader.DefaultTiming, sets: map[any]Clearer{}}
}

// Track gives the request's loaders a tracker, so that their batches close
// when the request is quiescent (see loader.Tracker), and returns it. It
// returns nil when ctx has no loaders of its own or they are in use already.
// The GraphQL executor calls it at the start of a query or mutation, before
// any field runs.
func Track(ctx context.Context) *loader.Tracker {
	z, _ := ctx.Value(loadersKey{}).(*lazyLoaders)
	if z == nil {
		return nil
	}
	t := loader.NewTracker()
	took := false
	z.once.Do(func() {
		timing := z.timing
		timing.Tracker = t
		z.l, took = &Loaders{timing: timing, sets: map[any]Clearer{}}, true
	})
	if !took {
		return nil
	}
	return t
}

// ClearLoaders drops the cached reads of ctx's request, if it has loaders.
func ClearLoaders(ctx context.Context) {
	if z, _ := ctx.Value(loadersKey{}).(*lazyLoaders); z != nil {
		z.get().Clear()
	}
}

// Set returns the request's value under key, made by mk on first use.
func Set[T Clearer](ctx context.Context, key any, mk func(timing loader.Timing) T) T {
	l := LoadersFrom(ctx)
	l.mu.Lock()
	defer l.mu.Unlock()
	if got, ok := l.sets[key]; ok {
		return got.(T)
	}
	v := mk(l.timing)
	l.sets[key] = v
	return v
}

// PageLoader returns the request's loader for one connection field with given
// arguments (a batch pages every parent with the same arguments at once).
func PageLoader[T any](ctx context.Context, field string, args any,
	fetch func(ctx context.Context, parents []string) (map[string]domain.Page[T], error),
) *loader.Loader[string, domain.Page[T]] {
	b, _ := json.Marshal(args)
	return Set(ctx, "page:"+field+string(b), func(timing loader.Timing) *loader.Loader[string, domain.Page[T]] {
		return loader.New(timing, fetch)
	})
}

// countLoader is PageLoader for the totals of a connection field.
func countLoader(ctx context.Context, field string, args any,
	fetch func(ctx context.Context, parents []string) (map[string]int, error),
) *loader.Loader[string, int] {
	b, _ := json.Marshal(args)
	return Set(ctx, "count:"+field+string(b), func(timing loader.Timing) *loader.Loader[string, int] {
		return loader.New(timing, fetch)
	})
}

// NestedPage loads the page of one parent through the field's batched loader,
// reading on db's pool, and gives it a batched total.
func NestedPage[T any](ctx context.Context, db *store.DB, field string, args any, parent string,
	fetch func(ctx context.Context, q *store.Q, parents []string) (map[string]domain.Page[T], error),
	count func(ctx context.Context, q *store.Q, parents []string) (map[string]int, error),
) (domain.Page[T], error) {
	pl := PageLoader(ctx, field, args, func(ctx context.Context, parents []string) (map[string]domain.Page[T], error) {
		return fetch(ctx, &db.Q, parents)
	})
	pg, err := pl.Load(ctx, parent)
	if err != nil {
		return pg, err
	}
	pg.Total = func(ctx context.Context) (int, error) {
		cl := countLoader(ctx, field, args, func(ctx context.Context, parents []string) (map[string]int, error) {
			return count(ctx, &db.Q, parents)
		})
		return cl.Load(ctx, parent)
	}
	return pg, nil
}

// ByID adapts a store batch read to a loader fetch keyed by id.
func ByID[T any](fetch func(context.Context, []string) ([]*T, error), id func(*T) string) func(context.Context, []string) (map[string]*T, error) {
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

// Grouped adapts a store read of children to a loader fetch keyed by parent,
// for children with several parents (a link, under both its ends).
func Grouped[T any](fetch func(context.Context, []string) ([]*T, error), parent func(*T) []string) func(context.Context, []string) (map[string][]*T, error) {
	return groupRows(fetch, func(out map[string][]*T, r *T) {
		for _, p := range parent(r) {
			out[p] = append(out[p], r)
		}
	})
}

// GroupedBy is Grouped for children with one parent each: no slice is made
// for each child.
func GroupedBy[T any](fetch func(context.Context, []string) ([]*T, error), parent func(*T) string) func(context.Context, []string) (map[string][]*T, error) {
	return groupRows(fetch, func(out map[string][]*T, r *T) {
		p := parent(r)
		out[p] = append(out[p], r)
	})
}

// groupRows is a loader fetch that reads the children of ids and files each
// row under its parents (add).
func groupRows[T any](fetch func(context.Context, []string) ([]*T, error), add func(out map[string][]*T, r *T)) func(context.Context, []string) (map[string][]*T, error) {
	return func(ctx context.Context, ids []string) (map[string][]*T, error) {
		rows, err := fetch(ctx, ids)
		if err != nil {
			return nil, err
		}
		out := make(map[string][]*T, len(ids))
		for _, r := range rows {
			add(out, r)
		}
		return out, nil
	}
}
