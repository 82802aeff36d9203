package store

import (
	"sync"
	"testing"
	"time"
)

// TestWriteQueueLanes: with the writer held, an urgent transaction that
// arrives after waiting others goes first; a stream of urgent ones lets a
// waiting other through after maxUrgentStreak of them.
func TestWriteQueueLanes(t *testing.T) {
	w := newWriteQueue()
	var mu sync.Mutex
	var order []string
	waiters := func() int { w.mu.Lock(); defer w.mu.Unlock(); return w.urgent + w.others }
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
	for _, name := range []string{"u1", "u2", "u3", "u4", "u5", "u6"} {
		take(name, true)
	}
	wait(7)
	w.unlock()
	wg.Wait()
	if len(order) != 7 || order[maxUrgentStreak] != "other" {
		t.Fatalf("order %v: want %d urgent, then the other", order, maxUrgentStreak)
	}
	for _, name := range order[:maxUrgentStreak] {
		if name == "other" {
			t.Fatalf("order %v", order)
		}
	}
}
