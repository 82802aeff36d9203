package loader

import (
	"sync"
	"sync/atomic"
)

// A Tracker closes the batches of one request when the request is quiescent:
// when every piece of work the request has promised — in a GraphQL
// operation, each field resolution the executor will run — has either
// finished or is waiting on a batch. At that moment no further key can reach
// an open batch without a fetch first, so every open batch is as full as it
// will get: the batches of one level of the query close together, at once,
// instead of after an idle window.
//
// The executor promises work (Promise) before it can start — a field promises
// the fields of the objects it returned before it finishes (Done) — so the
// count never reaches zero while work is still on its way. Loaders move a
// waiting goroutine out of the count while it waits and back in, on its
// behalf, before waking it.
//
// A tracker whose bookkeeping went wrong (Done without a promise) abandons:
// its open batches close at once, and later ones on their timers, as without
// a tracker.
type Tracker struct {
	mu        sync.Mutex
	pending   int
	open      []func()
	abandoned bool

	quiescent atomic.Int64 // batches closed by quiescence
	timed     atomic.Int64 // batches closed by their timer
	waits     atomic.Int64 // goroutines woken from a batch
}

// NewTracker returns a tracker with nothing promised.
func NewTracker() *Tracker { return &Tracker{} }

// Promise adds n pieces of work that will run.
func (t *Tracker) Promise(n int) {
	if n == 0 {
		return
	}
	t.mu.Lock()
	t.pending += n
	t.mu.Unlock()
}

// Done ends one promised piece of work; the last one out closes the open
// batches.
func (t *Tracker) Done() { t.leave() }

// Abandon gives up on quiescence for the rest of the request (its work can no
// longer be counted): open batches close now, later ones on their timers.
func (t *Tracker) Abandon() {
	t.mu.Lock()
	t.abandoned = true
	closers := t.open
	t.open = nil
	t.mu.Unlock()
	for _, c := range closers {
		go c()
	}
}

// Abandoned reports whether the tracker gave up.
func (t *Tracker) Abandoned() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.abandoned
}

// Closed returns how many batches closed by quiescence and how many by
// their timer (a timer closing a tracked batch means promised work never
// came: the bookkeeping missed something).
func (t *Tracker) Closed() (quiescent, timed int64) { return t.quiescent.Load(), t.timed.Load() }

// opened registers the closer of a newly opened batch.
func (t *Tracker) opened(closeBatch func()) {
	t.mu.Lock()
	if !t.abandoned {
		t.open = append(t.open, closeBatch)
	}
	t.mu.Unlock()
}

// leave takes one running piece of work out of the count (it finished, or
// waits on a batch) and closes the open batches if it was the last.
func (t *Tracker) leave() {
	t.mu.Lock()
	t.pending--
	if t.pending < 0 {
		t.abandoned = true
	}
	var closers []func()
	if t.pending <= 0 {
		closers, t.open = t.open, nil
	}
	t.mu.Unlock()
	for _, c := range closers {
		go c()
	}
}

// Waits returns how many times a goroutine waited on a fetch: a batch's, or
// a Read's in flight (each resolver that found its key not yet fetched).
func (t *Tracker) Waits() int64 { return t.waits.Load() }

// woken puts n waiting goroutines back into the count, before they wake.
func (t *Tracker) woken(n int) {
	t.waits.Add(int64(n))
	t.Promise(n)
}
