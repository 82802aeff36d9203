package gqlexec

import (
	"bytes"
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/stretchr/testify/require"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
)

// TestCollectedFieldsAreGqlgens: the cache answers what graphql.CollectFields
// answers for each selection and type, fragments and @include by variable
// included, and one selection read as two types is two entries.
func TestCollectedFieldsAreGqlgens(t *testing.T) {
	doc, err := gqlparser.LoadQueryWithRules(testSchema(t), `query($b: Boolean!) { node(id: "x") {
		id
		... on Task { title status @include(if: $b) }
		... on Project { name }
	} }`, nil)
	require.Nil(t, err)
	for _, b := range []bool{true, false} {
		op := &graphql.OperationContext{Doc: doc, Operation: doc.Operations[0], Variables: map[string]any{"b": b}}
		sel := doc.Operations[0].SelectionSet[0].(*ast.Field).SelectionSet
		var c Collected
		for range 2 { // the second round answers from the cache
			for _, implementors := range [][]string{taskImplementors, projectImplementors} {
				want := graphql.CollectFields(op, sel, implementors)
				got := c.Fields(op, sel, implementors)
				require.Equal(t, names(want), names(got), "%v, $b=%v", implementors, b)
			}
		}
		require.Len(t, *c.entries.Load(), 2)
		require.Zero(t, testing.AllocsPerRun(100, func() { c.Fields(op, sel, taskImplementors) }), "a collected selection is read without allocating")
	}
	require.Equal(t, []string{"id", "title", "status"}, names(new(Collected).Fields(
		&graphql.OperationContext{Doc: doc, Operation: doc.Operations[0], Variables: map[string]any{"b": true}},
		doc.Operations[0].SelectionSet[0].(*ast.Field).SelectionSet, taskImplementors)))
}

// TestCollectedConcurrently: objects of one selection written at once, from
// many goroutines, share one entry per selection and type, and each gets
// gqlgen's fields (go test -race checks the lock-free reads).
func TestCollectedConcurrently(t *testing.T) {
	doc, err := gqlparser.LoadQueryWithRules(testSchema(t), `{ node(id: "x") { id ... on Task { title } ... on Project { name } } }`, nil)
	require.Nil(t, err)
	op := &graphql.OperationContext{Doc: doc, Operation: doc.Operations[0]}
	sel := doc.Operations[0].SelectionSet[0].(*ast.Field).SelectionSet
	var c Collected
	var wg sync.WaitGroup
	got := make([][]string, 64)
	for i := range got {
		wg.Go(func() {
			implementors := taskImplementors
			if i%2 == 1 {
				implementors = projectImplementors
			}
			got[i] = names(c.Fields(op, sel, implementors))
		})
	}
	wg.Wait()
	for i, g := range got {
		want := []string{"id", "title"}
		if i%2 == 1 {
			want = []string{"id", "name"}
		}
		require.Equal(t, want, g)
	}
	require.Len(t, *c.entries.Load(), 2)
}

func names(fields []graphql.CollectedField) []string {
	out := make([]string, len(fields))
	for i, f := range fields {
		out[i] = f.Name
	}
	return out
}

// TestDeferredSetsOnlyWhenDeferred: no allocation for an object without a
// deferred field; the sets the generated code fills when one is.
func TestDeferredSetsOnlyWhenDeferred(t *testing.T) {
	plain := []graphql.CollectedField{{Field: &ast.Field{Name: "id"}}}
	set, views := DeferredSets(plain)
	require.Nil(t, set)
	require.Nil(t, views)
	deferred := append(plain, graphql.CollectedField{Field: &ast.Field{Name: "title"},
		Deferrables: []*graphql.Deferrable{{Label: "later"}}})
	set, views = DeferredSets(deferred)
	require.NotNil(t, set)
	require.NotNil(t, views)
	require.Zero(t, testing.AllocsPerRun(100, func() { DeferredSets(plain) }))
}

// TestConcurrentFieldsDispatch: every field added — kept inline or beyond —
// is resolved, once, into its own index; up to four are added without
// allocating.
func TestConcurrentFieldsDispatch(t *testing.T) {
	workers := NewWorkers(8)
	for _, n := range []int{0, 1, 2, 4, 5, 9} {
		out := graphql.NewFieldSet(make([]graphql.CollectedField, n))
		var c ConcurrentFields
		var calls atomic.Int32
		for i := range n {
			c.Add(i, func(context.Context) graphql.Marshaler {
				calls.Add(1)
				return graphql.MarshalInt(i)
			})
		}
		c.Dispatch(context.Background(), out, workers)
		require.Equal(t, int32(n), calls.Load())
		for i := range n {
			var b bytes.Buffer
			out.Values[i].MarshalGQL(&b)
			require.Equal(t, strconv.Itoa(i), b.String(), "%d fields", n)
		}
	}
	// In order: one after another, each in the order added, in the
	// caller's goroutine (a level-read object's fields, which never wait).
	for _, n := range []int{0, 1, 6} {
		out := graphql.NewFieldSet(make([]graphql.CollectedField, n))
		var c ConcurrentFields
		var order []int
		for i := range n {
			c.Add(n-1-i, func(context.Context) graphql.Marshaler {
				order = append(order, n-1-i) // unsynchronised: -race fails if not one goroutine
				return graphql.MarshalInt(n - 1 - i)
			})
		}
		require.Equal(t, n, c.Len())
		c.DispatchInOrder(context.Background(), out)
		require.Len(t, order, n)
		for k, i := range order {
			require.Equal(t, n-1-k, i)
			var b bytes.Buffer
			out.Values[i].MarshalGQL(&b)
			require.Equal(t, strconv.Itoa(i), b.String())
		}
	}
	f := func(context.Context) graphql.Marshaler { return graphql.Null }
	require.Zero(t, testing.AllocsPerRun(100, func() {
		var c ConcurrentFields
		for i := range 4 {
			c.Add(i, f)
		}
		if c.n != 4 {
			t.Fatal(c.n)
		}
	}))
}
