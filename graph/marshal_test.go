package graph

import (
	"bytes"
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
)

// TestWorkersRunAllAtOnce: every function handed to the workers runs at
// once, however many are waiting on each other (a list element may wait on
// a loader batch the next element fills), and the workers are reused.
func TestWorkersRunAllAtOnce(t *testing.T) {
	p := &workers{idle: make(chan *worker, 4)}
	for round := range 3 {
		const n = 50
		var started, done sync.WaitGroup
		started.Add(n)
		done.Add(n)
		for range n {
			p.run(func() {
				defer done.Done()
				started.Done()
				started.Wait() // returns only once all n run together
			})
		}
		finished := make(chan struct{})
		go func() { done.Wait(); close(finished) }()
		select {
		case <-finished:
		case <-time.After(10 * time.Second):
			t.Fatalf("round %d: the functions did not all run at once", round)
		}
		// Workers park after their function; at most the pool's room.
		for deadline := time.Now().Add(5 * time.Second); len(p.idle) < cap(p.idle); {
			if time.Now().After(deadline) {
				t.Fatalf("round %d: %d idle workers, want %d", round, len(p.idle), cap(p.idle))
			}
			time.Sleep(time.Millisecond)
		}
	}
}

// TestDelayedFieldsRunTogether: an object's concurrent fields all run at once
// (each may wait on a batch another fills), and each value lands at its index.
func TestDelayedFieldsRunTogether(t *testing.T) {
	const n = 5
	out := graphql.NewFieldSet(make([]graphql.CollectedField, n+1))
	var d delayedFields
	var started sync.WaitGroup
	started.Add(n)
	for i := 1; i <= n; i++ {
		d.add(i, func(context.Context) graphql.Marshaler {
			started.Done()
			started.Wait()
			return graphql.MarshalInt(i)
		})
	}
	done := make(chan struct{})
	go func() { d.dispatch(context.Background(), out); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the fields did not all run at once")
	}
	for i := 1; i <= n; i++ {
		var b bytes.Buffer
		out.Values[i].MarshalGQL(&b)
		if b.String() != strconv.Itoa(i) {
			t.Errorf("value %d: %s", i, b.String())
		}
	}
}
