package loader

import (
	"context"
	"errors"
)

// errReadFailed is what waits on a Read's keys get when the Read panicked.
var errReadFailed = errors.New("loader: the read of this key failed")

// Read returns the values of keys, in order, at once: the keys not fetched
// yet are fetched now (at most MaxKeys a statement), without a batch, and
// cached as Get caches them, so that later Loads find them ready. A key in
// an open batch is fetched too, and its batch's waiters still get the
// batch's value. A key another Read is fetching is not fetched again: this
// Read waits for that one (the fields of one level, read concurrently, may
// share a loader), as a Load of a key a Read is fetching does.
//
// Read never waits on a batch, so a request's tracker does not count it: a
// nested list read a level at a time (graph's level reads) reads each field
// of a level so, while the executor's promised work below the list waits
// for it.
func (l *Loader[K, V]) Read(ctx context.Context, keys []K) (out []V, err error) {
	out = make([]V, len(keys))
	var missing []K
	var at []int         // missing[j] is keys[at[j]]
	var own []*result[V] // own[j]: missing[j]'s entry, which this Read resolves (nil: the key is in an open batch)
	var others []int     // keys[i] another Read (or an earlier place of keys) is fetching
	var theirs []*result[V]
	l.mu.Lock()
	for i, k := range keys {
		r, ok := l.cache[k]
		switch {
		case ok && r.ready && r.err != nil:
			l.mu.Unlock()
			return nil, r.err
		case ok && r.ready:
			out[i] = r.val
		case ok && r.reading:
			others, theirs = append(others, i), append(theirs, r)
		default:
			var p *result[V]
			if !ok {
				p = &result[V]{done: make(chan struct{}), reading: true}
				l.keep(k, p)
			}
			missing, at, own = append(missing, k), append(at, i), append(own, p)
		}
	}
	l.mu.Unlock()
	resolved := 0 // own[:resolved] are resolved
	defer func() {
		// A failed or panicking fetch resolves the rest of its keys with
		// the error, so that nothing waits on them for ever.
		if resolved == len(own) {
			return
		}
		fail := err
		if fail == nil {
			fail = errReadFailed
		}
		l.resolve(missing[resolved:], own[resolved:], nil, fail)
	}()
	for start := 0; start < len(missing); start += l.timing.MaxKeys {
		chunk := missing[start:min(start+l.timing.MaxKeys, len(missing))]
		fctx, span := l.startRead(ctx, len(chunk), "read")
		found, err := l.fetch(fctx, chunk)
		endBatch(span, err)
		if err != nil {
			return nil, err
		}
		for j, k := range chunk {
			out[at[start+j]] = found[k]
		}
		l.resolve(chunk, own[start:start+len(chunk)], found, nil)
		resolved = start + len(chunk)
	}
	for j, i := range others {
		r := theirs[j]
		select {
		case <-r.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if r.err != nil {
			return nil, r.err
		}
		out[i] = r.val
	}
	return out, nil
}

// resolve sets the values (or err) of a Read's keys: each of own, or a new
// entry where own is nil (the key is in an open batch, whose waiters get
// the batch's value), and wakes whoever waits on them.
func (l *Loader[K, V]) resolve(keys []K, own []*result[V], found map[K]V, err error) {
	l.mu.Lock()
	waiters := 0
	for j, k := range keys {
		if p := own[j]; p != nil {
			p.val, p.err, p.ready = found[k], err, true
			waiters += p.waiters
		} else if err == nil {
			l.keep(k, &result[V]{done: fetched, val: found[k], ready: true})
		}
	}
	if t := l.timing.Tracker; t != nil {
		t.woken(waiters)
	}
	l.mu.Unlock()
	for _, p := range own {
		if p != nil {
			close(p.done)
		}
	}
}
