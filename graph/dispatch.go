package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"

	"github.com/taskgraph/taskgraph/internal/gqlexec"
)

// concurrentFields are an object's fields that gqlgen resolves concurrently
// (resolvers, methods taking a context, root fields): internal/tools/execpass
// makes object marshallers add them here rather than to their
// graphql.FieldSet, and resolve them with dispatch rather than
// FieldSet.Dispatch (gqlexec.ConcurrentFields: the first in the object's
// goroutine, the others on elementWorkers).
type concurrentFields struct{ gqlexec.ConcurrentFields }

// add is graphql.FieldSet.Concurrently: the i-th field's value is f's.
func (c *concurrentFields) add(i int, f func(context.Context) graphql.Marshaler) { c.Add(i, f) }

// dispatch is graphql.FieldSet.Dispatch for the fields added: one after
// another in this goroutine below a list whose levels were read, where none
// of them can wait.
func (c *concurrentFields) dispatch(ctx context.Context, out *graphql.FieldSet) {
	if c.Len() > 1 && levelsRead(ctx) {
		c.DispatchInOrder(ctx, out)
		return
	}
	c.Dispatch(ctx, out, elementWorkers)
}
