package store

import (
	"context"
	"sync"
)

// writeQueue is SQLite's one writer, taken by the process's write
// transactions in two lanes: urgent ones (lease renewals: heartbeats) go
// before every waiting other, so an agent's lease never waits behind a queue
// of claims — only behind the one transaction that holds the writer.
// (A sync.Mutex would hand it over in arrival order at best.)
type writeQueue struct {
	mu     sync.Mutex
	free   *sync.Cond
	held   bool
	urgent int // urgent transactions waiting
	others int // other transactions waiting
	streak int // urgent grants in a row while others waited
}

// maxUrgentStreak bounds how many urgent transactions pass waiting others in
// a row: the others (claims, completions) are never starved.
const maxUrgentStreak = 4

func newWriteQueue() *writeQueue {
	w := &writeQueue{}
	w.free = sync.NewCond(&w.mu)
	return w
}

func (w *writeQueue) lock(urgent bool) {
	w.mu.Lock()
	if urgent {
		w.urgent++
		for w.held || (w.others > 0 && w.streak >= maxUrgentStreak) {
			w.free.Wait()
		}
		w.urgent--
		if w.others > 0 {
			w.streak++
		}
	} else {
		w.others++
		for w.held || (w.urgent > 0 && w.streak < maxUrgentStreak) {
			w.free.Wait()
		}
		w.others--
		w.streak = 0
	}
	w.held = true
	w.mu.Unlock()
}

func (w *writeQueue) unlock() {
	w.mu.Lock()
	w.held = false
	w.mu.Unlock()
	w.free.Broadcast()
}

type urgentKey struct{}

// Urgent marks ctx's writes as lease renewals: on SQLite they take the
// writer before the other waiting transactions.
func Urgent(ctx context.Context) context.Context { return context.WithValue(ctx, urgentKey{}, true) }

func isUrgent(ctx context.Context) bool { v, _ := ctx.Value(urgentKey{}).(bool); return v }
