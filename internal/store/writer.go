package store

import (
	"context"
	"sync"
)

// writeQueue is SQLite's one writer, taken by the process's write
// transactions in two lanes, each in arrival order: urgent ones (lease
// renewals: heartbeats) go before every waiting other, so an agent's lease
// never waits behind a queue of claims — only behind the one transaction
// that holds the writer and the renewals that arrived before it. The
// writer is handed from one transaction to the next (a sync.Cond woken by
// broadcast would let any waiter take it, and one unlucky heartbeat could
// lose the race for seconds while others' went through).
type writeQueue struct {
	mu     sync.Mutex
	held   bool
	urgent []chan struct{} // urgent transactions waiting, oldest first
	others []chan struct{} // other transactions waiting, oldest first
	streak int             // urgent grants in a row while others waited
}

// maxUrgentStreak bounds how many urgent transactions pass waiting others in
// a row: the others (claims, completions) are never starved.
const maxUrgentStreak = 4

func newWriteQueue() *writeQueue { return &writeQueue{} }

// lock takes the writer, waiting in urgent's lane for its turn.
func (w *writeQueue) lock(urgent bool) {
	w.mu.Lock()
	if !w.held && len(w.urgent) == 0 && len(w.others) == 0 {
		w.held, w.streak = true, 0
		w.mu.Unlock()
		return
	}
	turn := make(chan struct{})
	if urgent {
		w.urgent = append(w.urgent, turn)
	} else {
		w.others = append(w.others, turn)
	}
	w.mu.Unlock()
	<-turn // handed the writer by unlock
}

// unlock hands the writer to the next waiter, or frees it.
func (w *writeQueue) unlock() {
	w.mu.Lock()
	var next chan struct{}
	switch {
	case len(w.urgent) > 0 && (len(w.others) == 0 || w.streak < maxUrgentStreak):
		next, w.urgent = w.urgent[0], w.urgent[1:]
		if len(w.others) > 0 {
			w.streak++
		}
	case len(w.others) > 0:
		next, w.others = w.others[0], w.others[1:]
		w.streak = 0
	default:
		w.held = false
	}
	w.mu.Unlock()
	if next != nil {
		close(next) // the writer stays held: it passes to next
	}
}

// waiting is how many transactions wait for the writer.
func (w *writeQueue) waiting() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.urgent) + len(w.others)
}

type urgentKey struct{}

// Urgent marks ctx's writes as lease renewals: on SQLite they take the
// writer before the other waiting transactions.
func Urgent(ctx context.Context) context.Context { return context.WithValue(ctx, urgentKey{}, true) }

func isUrgent(ctx context.Context) bool { v, _ := ctx.Value(urgentKey{}).(bool); return v }
