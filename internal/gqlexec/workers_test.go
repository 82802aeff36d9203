package gqlexec

import (
	"bytes"
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/stretchr/testify/require"
	"github.com/vektah/gqlparser/v2/ast"
)

// runTogether hands n functions to p that each return only once all n run
// together; the group is done when they all have.
func runTogether(p *Workers, n int) *sync.WaitGroup {
	var started, done sync.WaitGroup
	started.Add(n)
	done.Add(n)
	for range n {
		p.Run(func() {
			defer done.Done()
			started.Done()
			started.Wait()
		})
	}
	return &done
}

// TestWorkersRunAllAtOnce: every function handed to the workers runs at
// once, however many are waiting on each other (a list element may wait on
// a loader batch the next element fills), and the workers are reused.
func TestWorkersRunAllAtOnce(t *testing.T) {
	p := NewWorkers(4)
	for round := range 3 {
		const n = 50
		done := runTogether(p, n)
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

// TestMarshalConcurrently: a list's elements run all at once, each under a
// field context holding its own index, and land in their places; a panic
// in one is its error and fails the list.
func TestMarshalConcurrently(t *testing.T) {
	p := NewWorkers(4)
	for _, n := range []int{2, 3, 40} {
		var started sync.WaitGroup
		started.Add(n)
		ret := make(graphql.Array, n)
		ctx := graphql.WithResponseContext(context.Background(), graphql.DefaultErrorPresenter, graphql.DefaultRecover)
		done := make(chan bool)
		go func() {
			done <- MarshalConcurrently(ctx, ret, func(ctx context.Context, i int) graphql.Marshaler {
				started.Done()
				started.Wait() // returns only once all n run together
				return graphql.MarshalInt(*graphql.GetFieldContext(ctx).Index * 10)
			}, p)
		}()
		select {
		case ok := <-done:
			require.True(t, ok)
		case <-time.After(10 * time.Second):
			t.Fatalf("%d elements did not all run at once", n)
		}
		for i := range n {
			var b bytes.Buffer
			ret[i].MarshalGQL(&b)
			require.Equal(t, strconv.Itoa(i*10), b.String())
		}
	}
	ctx := graphql.WithResponseContext(context.Background(), graphql.DefaultErrorPresenter, graphql.DefaultRecover)
	ok := MarshalConcurrently(ctx, make(graphql.Array, 3), func(ctx context.Context, i int) graphql.Marshaler {
		if i == 1 {
			panic("element 1")
		}
		return graphql.MarshalInt(i)
	}, p)
	require.False(t, ok)
	require.Len(t, graphql.GetErrors(ctx), 1)
}

// TestMarshalInOrder: a list's elements run one after another in the
// calling goroutine, each seeing its index in the shared field context, an
// error's path naming its element; a panic fails the list at once; an empty
// list costs nothing.
func TestMarshalInOrder(t *testing.T) {
	ctx := graphql.WithResponseContext(context.Background(), graphql.DefaultErrorPresenter, graphql.DefaultRecover)
	ctx = graphql.WithFieldContext(ctx, &graphql.FieldContext{Field: graphql.CollectedField{Field: &ast.Field{Alias: "items"}}})
	ret := make(graphql.Array, 3)
	var order []int
	require.True(t, MarshalInOrder(ctx, ret, func(ctx context.Context, i int) graphql.Marshaler {
		order = append(order, i)
		if i == 2 {
			graphql.AddErrorf(ctx, "element %d", i)
		}
		return graphql.MarshalInt(*graphql.GetFieldContext(ctx).Index * 10)
	}))
	require.Equal(t, []int{0, 1, 2}, order)
	for i := range ret {
		var b bytes.Buffer
		ret[i].MarshalGQL(&b)
		require.Equal(t, strconv.Itoa(i*10), b.String())
	}
	errs := graphql.GetErrors(ctx)
	require.Len(t, errs, 1)
	require.Equal(t, "items[2]", errs[0].Path.String())

	ran := 0
	require.False(t, MarshalInOrder(ctx, make(graphql.Array, 3), func(ctx context.Context, i int) graphql.Marshaler {
		ran++
		panic("element 0")
	}))
	require.Equal(t, 1, ran, "the list stops at the panic")
	require.Zero(t, testing.AllocsPerRun(100, func() {
		MarshalInOrder(ctx, nil, func(context.Context, int) graphql.Marshaler { return graphql.Null })
	}))
}

// TestWorkersTrim: Trim stops the workers that stayed idle since the last
// Trim, and only those; the pool works as before afterwards.
func TestWorkersTrim(t *testing.T) {
	p := NewWorkers(64)
	// burst runs n functions together and waits until idle workers are
	// back in the pool: a worker returns to it just after its function.
	burst := func(n, idle int) {
		runTogether(p, n).Wait()
		for deadline := time.Now().Add(5 * time.Second); len(p.idle) < idle; {
			if time.Now().After(deadline) {
				t.Fatalf("%d idle workers after a burst of %d, want %d", len(p.idle), n, idle)
			}
			time.Sleep(time.Millisecond)
		}
	}
	burst(20, 20)
	require.Equal(t, 0, p.Trim(), "the burst made every worker: none was idle throughout")
	// 20 idle; a burst of 5 leaves at least 15 idle throughout.
	burst(5, 20)
	require.Equal(t, 15, p.Trim())
	require.Equal(t, 5, len(p.idle))
	require.Equal(t, 5, p.Trim(), "idle for a whole period")
	require.Equal(t, 0, len(p.idle))
	burst(3, 3)
	require.Equal(t, 3, len(p.idle))
}
