package graph

import (
	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/taskgraph/taskgraph/internal/gqlexec"
)

// This file holds what internal/tools/execpass's rewrites of the object
// marshallers call in place of graphql.CollectFields and of the deferred
// group's two allocations.

// collected is an operation's fields collected per object selection, kept
// in its executionContext, keyed by addresses (gqlexec.Collected).
type collected struct{ gqlexec.Collected }

// fields is graphql.CollectFields(op, sel, implementors), cached.
func (c *collected) fields(op *graphql.OperationContext, sel ast.SelectionSet, implementors []string) []graphql.CollectedField {
	return c.Fields(op, sel, implementors)
}

// deferredSets is the field set and views an object marshaller fills with
// its @defer'd fields, nil when none is deferred.
func deferredSets(fields []graphql.CollectedField) (*graphql.FieldSet, map[string]*graphql.FieldSetView) {
	return gqlexec.DeferredSets(fields)
}
