// Package loader batches the reads of one request: every Load made while a batch
// is open becomes one fetch, so nested GraphQL fields cost one SQL statement per
// level of the query instead of one per row.
//
// gqlgen resolves the fields of a list's elements in parallel goroutines. A batch
// opens with the first key. With a Tracker (a GraphQL query or mutation), it
// closes when the request is quiescent — every field the executor promised has
// finished or waits on a batch — so a level's batches close together the moment
// its last key is in, however busy the machine. Without one (a subscription's
// event, a call outside an operation), or as a safety net, it closes once no new
// key has arrived for the idle window, or at its maximum age or size.
// (graph-gophers/dataloader only offers a fixed timer: a short one splits
// batches under load, a long one adds its whole length to every level.)
package loader

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Timing of a batch.
type Timing struct {
	Idle    time.Duration // close after this long without a new key
	MaxWait time.Duration // close at this age whatever happens
	MaxKeys int           // close at this many keys
	// Tracker, when set, closes batches when the request is quiescent; the
	// idle window and MaxWait are then unused.
	Tracker *Tracker
	// SafetyWait is the safety net of a tracked batch: quiescence closes it,
	// unless the tracker's bookkeeping missed a piece of work (Tracker.Closed
	// counts those) or one piece of work outlasts it. Long, so that a slow
	// level on a busy machine is never split.
	SafetyWait time.Duration
}

// DefaultTiming suits a server: a level costs at most a few milliseconds of
// waiting on top of its query.
var DefaultTiming = Timing{Idle: 2 * time.Millisecond, MaxWait: 10 * time.Millisecond, MaxKeys: 1000, SafetyWait: 500 * time.Millisecond}

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
	if t.SafetyWait <= 0 {
		t.SafetyWait = DefaultTiming.SafetyWait
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
	done    chan struct{} // its batch's (or Read's), closed when it is fetched
	val     V
	err     error
	ready   bool // val and err are set (under the loader's lock)
	waiters int  // tracked goroutines waiting on done (under the loader's lock)
	reading bool // a Read is fetching it, not a batch: a Read waits for it
}

type batch[K comparable, V any] struct {
	ctx      context.Context
	done     chan struct{} // closed once every result is set: one per batch, not per key
	keys     []K
	results  []*result[V]
	deadline time.Time
	timer    *time.Timer
	tracked  bool // closed by its request's quiescence
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
	return l.wait(ctx, r)
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
		v, err := l.wait(ctx, r)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// wait returns r's value once it is fetched. A tracked request counts the
// caller out while it waits: the close of r's batch counts it back in.
func (l *Loader[K, V]) wait(ctx context.Context, r *result[V]) (V, error) {
	if t := l.timing.Tracker; t != nil {
		l.mu.Lock()
		if r.ready {
			l.mu.Unlock()
			return r.val, r.err
		}
		r.waiters++
		// Under the loader's lock, so that the close of r's batch either
		// sees this waiter or has already marked r ready.
		t.leave()
		l.mu.Unlock()
	}
	select {
	case <-r.done:
		return r.val, r.err
	case <-ctx.Done():
		if t := l.timing.Tracker; t != nil {
			l.mu.Lock()
			if !r.ready {
				// Its batch has not counted it back in, and now will not:
				// it counts itself, as it goes back to work.
				r.waiters--
				t.Promise(1)
			}
			l.mu.Unlock()
		}
		var zero V
		return zero, ctx.Err()
	}
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
	r := &result[V]{done: fetched, val: found[key], ready: true}
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
	l.keep(key, &result[V]{done: fetched, val: val, ready: true})
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
	b := l.open
	t := l.timing.Tracker
	switch {
	case b == nil && t != nil && !t.Abandoned():
		b = &batch[K, V]{ctx: ctx, done: make(chan struct{}), tracked: true}
		b.timer = time.AfterFunc(l.timing.SafetyWait, func() { l.close(b, &t.timed) })
		l.open = b
		t.opened(func() { l.close(b, &t.quiescent) })
	case b == nil:
		b = &batch[K, V]{ctx: ctx, done: make(chan struct{}), deadline: time.Now().Add(l.timing.MaxWait)}
		b.timer = time.AfterFunc(l.timing.Idle, func() { l.close(b, nil) })
		l.open = b
	case !b.tracked:
		b.timer.Reset(min(l.timing.Idle, time.Until(b.deadline)))
	}
	r := &result[V]{done: b.done}
	l.keep(key, r)
	b.keys = append(b.keys, key)
	b.results = append(b.results, r)
	if len(b.keys) >= l.timing.MaxKeys {
		go l.close(b, nil)
	}
	return r
}

// close takes b off the loader (once; counting it in closed, if given) and
// resolves its keys with one fetch. A tracked request counts the waiters back
// in before they wake.
func (l *Loader[K, V]) close(b *batch[K, V], closed *atomic.Int64) {
	l.mu.Lock()
	if l.open != b {
		l.mu.Unlock()
		return
	}
	l.open = nil
	b.timer.Stop()
	l.mu.Unlock()
	if closed != nil {
		closed.Add(1)
	}
	ctx, span := l.startBatch(b, closed)
	found, err := l.fetch(context.WithoutCancel(ctx), b.keys)
	endBatch(span, err)
	l.mu.Lock()
	waiters := 0
	for i, k := range b.keys {
		r := b.results[i]
		r.val, r.err, r.ready = found[k], err, true
		waiters += r.waiters
	}
	if t := l.timing.Tracker; t != nil {
		t.woken(waiters)
	}
	l.mu.Unlock()
	close(b.done)
}

// fetched is the done channel of results known at once (Get, Prime).
var fetched = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()
