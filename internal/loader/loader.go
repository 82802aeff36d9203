// Package loader batches the reads of one request: every Load made within a short
// window becomes one fetch, so nested GraphQL fields cost one SQL statement per
// level of the query instead of one per row.
package loader

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/graph-gophers/dataloader/v7"
)

// DefaultWait is how long a batch stays open for more keys. gqlgen resolves the
// fields of a list's elements in parallel goroutines, which all ask within it.
const DefaultWait = 2 * time.Millisecond

// Loader batches and caches loads of V by K for one request. Its batching
// machinery is made on first use: a request (or a subscription event) that
// never loads through it pays for nothing but the struct.
type Loader[K comparable, V any] struct {
	wait  time.Duration
	fetch func(ctx context.Context, keys []K) (map[K]V, error)
	mu    sync.Mutex
	dl    atomic.Pointer[dataloader.Loader[K, V]]
}

// New returns a loader over fetch, which returns the values it found by key;
// keys it did not find load as the zero V (nil, empty slice) without error.
func New[K comparable, V any](wait time.Duration, fetch func(ctx context.Context, keys []K) (map[K]V, error)) *Loader[K, V] {
	if wait <= 0 {
		wait = DefaultWait
	}
	return &Loader[K, V]{wait: wait, fetch: fetch}
}

func (l *Loader[K, V]) loader() *dataloader.Loader[K, V] {
	if dl := l.dl.Load(); dl != nil {
		return dl
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if dl := l.dl.Load(); dl != nil {
		return dl
	}
	batch := func(ctx context.Context, keys []K) []*dataloader.Result[V] {
		found, err := l.fetch(ctx, keys)
		out := make([]*dataloader.Result[V], len(keys))
		for i, k := range keys {
			if err != nil {
				out[i] = &dataloader.Result[V]{Error: err}
				continue
			}
			out[i] = &dataloader.Result[V]{Data: found[k]}
		}
		return out
	}
	dl := dataloader.NewBatchedLoader(batch, dataloader.WithWait[K, V](l.wait))
	l.dl.Store(dl)
	return dl
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
	v := found[key]
	dl := l.loader()
	dl.Clear(ctx, key)
	dl.Prime(ctx, key, v)
	return v, nil
}

// Load returns the value of key, batched with other loads of this request.
func (l *Loader[K, V]) Load(ctx context.Context, key K) (V, error) {
	return l.loader().Load(ctx, key)()
}

// LoadMany returns the values of keys, in order.
func (l *Loader[K, V]) LoadMany(ctx context.Context, keys []K) ([]V, error) {
	vals, errs := l.loader().LoadMany(ctx, keys)()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return vals, nil
}

// Clear forgets every cached value, after a write made them stale.
func (l *Loader[K, V]) Clear() {
	if dl := l.dl.Load(); dl != nil {
		dl.ClearAll()
	}
}
