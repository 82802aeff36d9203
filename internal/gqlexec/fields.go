package gqlexec

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// ConcurrentFields are an object's fields that gqlgen resolves concurrently
// (resolvers, methods taking a context, root fields): the rewritten object
// marshallers add them here rather than to their graphql.FieldSet, and
// resolve them with Dispatch rather than FieldSet.Dispatch.
//
// The first few are kept in the value itself (a task's relationships and
// file impacts, a link's target): an object marshaller's ConcurrentFields
// stays on its stack, where a slice appended to was one or two allocations
// per object.
type ConcurrentFields struct {
	first [inlineConcurrent]concurrentField
	n     int
	more  []concurrentField
}

const inlineConcurrent = 4

type concurrentField struct {
	i int // the field's index in the object's field set
	f func(context.Context) graphql.Marshaler
}

// Add is graphql.FieldSet.Concurrently: the i-th field's value is f's.
func (c *ConcurrentFields) Add(i int, f func(context.Context) graphql.Marshaler) {
	if c.n < inlineConcurrent {
		c.first[c.n] = concurrentField{i: i, f: f}
	} else {
		c.more = append(c.more, concurrentField{i: i, f: f})
	}
	c.n++
}

// at is the k-th field added.
func (c *ConcurrentFields) at(k int) concurrentField {
	if k < inlineConcurrent {
		return c.first[k]
	}
	return c.more[k-inlineConcurrent]
}

// Len is the number of fields added.
func (c *ConcurrentFields) Len() int { return c.n }

// DispatchInOrder resolves the fields added one after another in this
// goroutine, for an object none of whose fields can wait.
func (c *ConcurrentFields) DispatchInOrder(ctx context.Context, out *graphql.FieldSet) {
	for k := range c.n {
		d := c.at(k)
		out.Values[d.i] = d.f(ctx)
	}
}

// Dispatch is graphql.FieldSet.Dispatch for the fields added: the first in
// this goroutine, the others on workers, whose stacks have grown already
// (gqlgen starts a goroutine for each, whose stack grows by copying several
// times before the field's resolver runs). It returns when all are in
// out.Values. The field functions recover their own panics, as in gqlgen;
// the object's field set has no views (deferred fields go to a set of their
// own), so there is no result callback to run.
func (c *ConcurrentFields) Dispatch(ctx context.Context, out *graphql.FieldSet, workers *Workers) {
	switch c.n {
	case 0:
		return
	case 1:
		out.Values[c.first[0].i] = c.first[0].f(ctx)
		return
	}
	var wg sync.WaitGroup
	wg.Add(c.n - 1)
	for k := 1; k < c.n; k++ {
		d := c.at(k)
		workers.Run(func() {
			defer wg.Done()
			out.Values[d.i] = d.f(ctx)
		})
	}
	out.Values[c.first[0].i] = c.first[0].f(ctx)
	wg.Wait()
}

// Collected is an operation's fields collected per object selection, kept
// in its execution context. graphql.CollectFields caches them per operation
// too, but builds its key for every object written: the selection set
// boxed by reflection (an allocation) and the implementors hashed. Here the
// key is the addresses both already have: a selection set belongs to the
// operation's document, and an implementors list is a variable of the
// generated package.
//
// An operation has a handful of object selections and writes each many
// times (a hundred tasks, two hundred relationships), from many goroutines:
// the entries are a short list, read without a lock and scanned by address
// — a map under a read lock cost the hashing of its key and a shared
// counter's cache line moving between cores, for every object written —
// and replaced whole, under mu, when a selection is first collected.
type Collected struct {
	mu      sync.Mutex
	entries atomic.Pointer[[]collectedEntry]
}

type collectedEntry struct {
	sel          *ast.Selection
	n            int
	implementors *string
	fields       []graphql.CollectedField
}

// Fields is graphql.CollectFields(op, sel, implementors), the same fields
// in the same order, shared by every object of one selection (callers only
// read them, as gqlgen's do).
func (c *Collected) Fields(op *graphql.OperationContext, sel ast.SelectionSet, implementors []string) []graphql.CollectedField {
	if len(sel) == 0 || len(implementors) == 0 {
		return graphql.CollectFields(op, sel, implementors)
	}
	if fields, ok := c.find(&sel[0], len(sel), &implementors[0]); ok {
		return fields
	}
	fields := graphql.CollectFields(op, sel, implementors)
	c.mu.Lock()
	defer c.mu.Unlock()
	if known, ok := c.find(&sel[0], len(sel), &implementors[0]); ok {
		return known // collected meanwhile by another object of the selection
	}
	var old []collectedEntry
	if p := c.entries.Load(); p != nil {
		old = *p
	}
	entries := append(append(make([]collectedEntry, 0, len(old)+1), old...),
		collectedEntry{sel: &sel[0], n: len(sel), implementors: &implementors[0], fields: fields})
	c.entries.Store(&entries)
	return fields
}

// find is the fields collected for a selection, by its addresses.
func (c *Collected) find(sel *ast.Selection, n int, implementors *string) ([]graphql.CollectedField, bool) {
	p := c.entries.Load()
	if p == nil {
		return nil, false
	}
	for i := range *p {
		if e := &(*p)[i]; e.sel == sel && e.n == n && e.implementors == implementors {
			return e.fields, true
		}
	}
	return nil, false
}

// DeferredSets is the field set and views an object marshaller fills with
// its @defer'd fields: nil when none of fields is deferred (the generated
// code touches them only for a deferred field, and writes the group only
// when a view was made), so an object without one allocates neither.
func DeferredSets(fields []graphql.CollectedField) (*graphql.FieldSet, map[string]*graphql.FieldSetView) {
	for i := range fields {
		if fields[i].IsDeferred() {
			return graphql.NewFieldSet(nil), map[string]*graphql.FieldSetView{}
		}
	}
	return nil, nil
}
