package graph

import (
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// This file holds what internal/tools/execpass's rewrites of the object
// marshallers call in place of graphql.CollectFields and of the deferred
// group's two allocations.

// collected is an operation's fields collected per object selection, kept
// in its executionContext. graphql.CollectFields caches them per operation
// too, but builds its key for every object written: the selection set
// boxed by reflection (an allocation) and the implementors hashed. Here the
// key is the addresses both already have: a selection set belongs to the
// operation's document, and an implementors list is a variable of the
// generated package.
type collected struct {
	mu sync.RWMutex
	m  map[collectedKey][]graphql.CollectedField
}

type collectedKey struct {
	sel          *ast.Selection
	n            int
	implementors *string
}

// fields is graphql.CollectFields(op, sel, implementors), the same fields
// in the same order, shared by every object of one selection (callers only
// read them, as gqlgen's do).
func (c *collected) fields(op *graphql.OperationContext, sel ast.SelectionSet, implementors []string) []graphql.CollectedField {
	if len(sel) == 0 || len(implementors) == 0 {
		return graphql.CollectFields(op, sel, implementors)
	}
	key := collectedKey{sel: &sel[0], n: len(sel), implementors: &implementors[0]}
	c.mu.RLock()
	fields, ok := c.m[key]
	c.mu.RUnlock()
	if ok {
		return fields
	}
	fields = graphql.CollectFields(op, sel, implementors)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[collectedKey][]graphql.CollectedField{}
	}
	c.m[key] = fields
	return fields
}

// deferredSets is the field set and views an object marshaller fills with
// its @defer'd fields: nil when none of fields is deferred (the generated
// code touches them only for a deferred field, and writes the group only
// when a view was made), so an object without one allocates neither.
func deferredSets(fields []graphql.CollectedField) (*graphql.FieldSet, map[string]*graphql.FieldSetView) {
	for i := range fields {
		if fields[i].IsDeferred() {
			return graphql.NewFieldSet(nil), map[string]*graphql.FieldSetView{}
		}
	}
	return nil, nil
}
