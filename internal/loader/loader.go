// Package loader batches the reads of one request: every Load made while a batch
// is open becomes one fetch, so nested GraphQL fields cost one SQL statement per
// level of the query instead of one per row.
//
// gqlgen resolves the fields of a list's elements in parallel goroutines. A batch
// opens with the first key and closes once no new key has arrived for the idle
// window, or when the batch reaches its maximum age or size. Closing on quiet
// rather than on a fixed timer keeps a level's keys together even when a busy
// machine is slow to start its goroutines, and closes early when they are fast.
// (graph-gophers/dataloader only offers the fixed timer: a short one splits
// batches under load, a long one adds its whole length to every level.)
package loader

import (
	"context"
	"sync"
	"time"
)

// Timing of a batch.
type Timing struct {
	Idle    time.Duration // close after this long without a new key
	MaxWait time.Duration // close at this age whatever happens
	MaxKeys int           // close at this many keys
}

// DefaultTiming suits a server: a level costs at most a few milliseconds of
// waiting on top of its query.
var DefaultTiming = Timing{Idle: 2 * time.Millisecond, MaxWait: 10 * time.Millisecond, MaxKeys: 1000}

func (t Timing) withDefaults() Timing {
	if t.Idle <= 0 {
		t.Idle = DefaultTiming.Idle
	}
	if t.MaxWait < t.Idle {
		t.MaxWait = max(DefaultTiming.MaxWait, t.Idle)
	}
	if t.MaxKeys <= 0 {
		t.MaxKeys = DefaultTiming.MaxKeys
	}
	return t
}

// Loader batches and caches loads of V by K for one request.
type Loader[K comparable, V any] struct {
	fetch  func(ctx context.Context, keys []K) (map[K]V, error)
	timing Timing

	mu    sync.Mutex
	cache map[K]*result[V]
	open  *batch[K, V]
}

type result[V any] struct {
	done chan struct{}
	val  V
	err  error
}

type batch[K comparable, V any] struct {
	ctx      context.Context
	keys     []K
	results  []*result[V]
	deadline time.Time
	timer    *time.Timer
}

// New returns a loader over fetch, which returns the values it found by key;
// keys it did not find load as the zero V (nil, empty slice) without error.
func New[K comparable, V any](timing Timing, fetch func(ctx context.Context, keys []K) (map[K]V, error)) *Loader[K, V] {
	return &Loader[K, V]{fetch: fetch, timing: timing.withDefaults()}
}

// Load returns the value of key, batched with the other loads of this request.
func (l *Loader[K, V]) Load(ctx context.Context, key K) (V, error) {
	l.mu.Lock()
	r := l.enqueue(ctx, key)
	l.mu.Unlock()
	return wait(ctx, r)
}

// LoadMany returns the values of keys, in order, from one batch.
func (l *Loader[K, V]) LoadMany(ctx context.Context, keys []K) ([]V, error) {
	rs := make([]*result[V], len(keys))
	l.mu.Lock()
	for i, k := range keys {
		rs[i] = l.enqueue(ctx, k)
	}
	l.mu.Unlock()
	out := make([]V, len(keys))
	for i, r := range rs {
		v, err := wait(ctx, r)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// Get reads key at once, without waiting for a batch, and caches the value for
// later Loads. Entry points of a request (a mutation's checks, a root query)
// use it: there is nothing to batch them with, so waiting would only add latency.
func (l *Loader[K, V]) Get(ctx context.Context, key K) (V, error) {
	found, err := l.fetch(ctx, []K{key})
	if err != nil {
		var zero V
		return zero, err
	}
	r := &result[V]{done: make(chan struct{}), val: found[key]}
	close(r.done)
	l.mu.Lock()
	l.keep(key, r)
	l.mu.Unlock()
	return r.val, nil
}

// Prime caches val for key, unless key is already cached or loading, so that
// later Loads of rows an entry point read in bulk cost no statement.
func (l *Loader[K, V]) Prime(key K, val V) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.cache[key]; ok {
		return
	}
	r := &result[V]{done: make(chan struct{}), val: val}
	close(r.done)
	l.keep(key, r)
}

// keep caches r as the result of key; the cache is made on first use, as many
// loaders of a request are never used. l.mu is held.
func (l *Loader[K, V]) keep(key K, r *result[V]) {
	if l.cache == nil {
		l.cache = map[K]*result[V]{}
	}
	l.cache[key] = r
}

// Clear forgets every cached value, after a write made them stale.
func (l *Loader[K, V]) Clear() {
	l.mu.Lock()
	l.cache = nil
	l.mu.Unlock()
}

// enqueue returns the cached result of key or adds key to the open batch,
// opening one if needed. l.mu is held.
func (l *Loader[K, V]) enqueue(ctx context.Context, key K) *result[V] {
	if r, ok := l.cache[key]; ok {
		return r
	}
	r := &result[V]{done: make(chan struct{})}
	l.keep(key, r)
	b := l.open
	if b == nil {
		b = &batch[K, V]{ctx: ctx, deadline: time.Now().Add(l.timing.MaxWait)}
		b.timer = time.AfterFunc(l.timing.Idle, func() { l.close(b) })
		l.open = b
	} else {
		b.timer.Reset(min(l.timing.Idle, time.Until(b.deadline)))
	}
	b.keys = append(b.keys, key)
	b.results = append(b.results, r)
	if len(b.keys) >= l.timing.MaxKeys {
		b.timer.Stop()
		go l.close(b)
	}
	return r
}

// close takes b off the loader (once) and resolves its keys with one fetch.
func (l *Loader[K, V]) close(b *batch[K, V]) {
	l.mu.Lock()
	if l.open != b {
		l.mu.Unlock()
		return
	}
	l.open = nil
	l.mu.Unlock()
	found, err := l.fetch(context.WithoutCancel(b.ctx), b.keys)
	for i, k := range b.keys {
		r := b.results[i]
		r.val, r.err = found[k], err
		close(r.done)
	}
}

func wait[V any](ctx context.Context, r *result[V]) (V, error) {
	select {
	case <-r.done:
		return r.val, r.err
	case <-ctx.Done():
		var zero V
		return zero, ctx.Err()
	}
}
