package graph

import (
	"context"
	"sync"

	"github.com/99designs/gqlgen/graphql"
)

// concurrentFields are an object's fields that gqlgen resolves concurrently
// (resolvers, methods taking a context, root fields): internal/tools/execpass
// makes object marshallers add them here rather than to their
// graphql.FieldSet, and resolve them with dispatch rather than
// FieldSet.Dispatch.
type concurrentFields struct {
	list []concurrentField
}

type concurrentField struct {
	i int // the field's index in the object's field set
	f func(context.Context) graphql.Marshaler
}

// add is graphql.FieldSet.Concurrently: the i-th field's value is f's.
func (c *concurrentFields) add(i int, f func(context.Context) graphql.Marshaler) {
	c.list = append(c.list, concurrentField{i: i, f: f})
}

// dispatch is graphql.FieldSet.Dispatch for the fields added: the first in
// this goroutine, the others on elementWorkers, whose stacks have grown
// already (gqlgen starts a goroutine for each, whose stack grows by copying
// several times before the field's resolver runs). It returns when all are
// in out.Values. The field functions recover their own panics, as in gqlgen;
// the object's field set has no views (deferred fields go to a set of their
// own), so there is no result callback to run.
func (c *concurrentFields) dispatch(ctx context.Context, out *graphql.FieldSet) {
	switch len(c.list) {
	case 0:
		return
	case 1:
		out.Values[c.list[0].i] = c.list[0].f(ctx)
		return
	}
	var wg sync.WaitGroup
	wg.Add(len(c.list) - 1)
	for _, d := range c.list[1:] {
		elementWorkers.run(func() {
			defer wg.Done()
			out.Values[d.i] = d.f(ctx)
		})
	}
	out.Values[c.list[0].i] = c.list[0].f(ctx)
	wg.Wait()
}
