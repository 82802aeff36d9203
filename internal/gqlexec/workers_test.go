package gqlexec

import (
	"bytes"
	"sync"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/stretchr/testify/require"
)

// TestWorkersRunAllAtOnce: every function handed to the workers runs at
// once, however many are waiting on each other (a list element may wait on
// a loader batch the next element fills), and the workers are reused.
func TestWorkersRunAllAtOnce(t *testing.T) {
	p := NewWorkers(4)
	for round := range 3 {
		const n = 50
		var started, done sync.WaitGroup
		started.Add(n)
		done.Add(n)
		for range n {
			p.Run(func() {
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

// TestMarshalEnum: an enum value is written as gqlgen writes it, without an
// allocation; a string no enum has is written as gqlgen writes it too.
func TestMarshalEnum(t *testing.T) {
	enums := NewEnums(testSchema(t))
	require.Contains(t, enums, "IN_PROGRESS")
	for _, v := range []string{"IN_PROGRESS", "DEPENDS_ON", "not \"an\" enum"} {
		var want, got bytes.Buffer
		graphql.MarshalString(v).MarshalGQL(&want)
		enums.Marshal(v).MarshalGQL(&got)
		require.Equal(t, want.String(), got.String())
	}
	require.Zero(t, testing.AllocsPerRun(100, func() { enums.Marshal("IN_PROGRESS") }))
}
