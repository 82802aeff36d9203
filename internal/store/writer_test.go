package store

import (
	"slices"
	"sync"
	"testing"
	"time"
)

// TestWriteQueueLanes: with the writer held, an urgent transaction that
// arrives after waiting others goes first; a stream of urgent ones lets a
// waiting other through after maxUrgentStreak of them; each lane is served
// in arrival order.
func TestWriteQueueLanes(t *testing.T) {
	w := newWriteQueue()
	var mu sync.Mutex
	var order []string
	waiters := w.waiting
	wait := func(n int) {
		deadline := time.Now().Add(5 * time.Second)
		for waiters() < n {
			if time.Now().After(deadline) {
				t.Fatalf("only %d waiters", waiters())
			}
			time.Sleep(time.Millisecond)
		}
	}
	var wg sync.WaitGroup
	take := func(name string, urgent bool) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.lock(urgent)
			mu.Lock()
			order = append(order, name)
			mu.Unlock()
			w.unlock()
		}()
	}
	w.lock(false)
	take("other", false)
	wait(1)
	for i, name := range []string{"u1", "u2", "u3", "u4", "u5", "u6"} {
		take(name, true)
		wait(2 + i) // each arrives after the one before
	}
	w.unlock()
	wg.Wait()
	// maxUrgentStreak urgent ones, then the other, then the rest, each lane
	// in arrival order.
	want := []string{"u1", "u2", "u3", "u4", "other", "u5", "u6"}
	if !slices.Equal(order, want) {
		t.Fatalf("order %v, want %v", order, want)
	}
}
