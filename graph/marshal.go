package graph

import (
	"context"
	"io"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// This file holds what internal/tools/execpass's rewrites of the generated
// executor call.

// concurrentOf is ConcurrentFields by type, then field.
var concurrentOf = func() map[string]map[string]bool {
	m := map[string]map[string]bool{}
	for k := range ConcurrentFields {
		t, f, _ := strings.Cut(k, ".")
		if m[t] == nil {
			m[t] = map[string]bool{}
		}
		m[t][f] = true
	}
	return m
}()

// marshalList marshals the n elements of a list of typeName objects
// selected by sel (internal/tools/execpass puts it where gqlgen's list
// marshallers called graphql.MarshalSliceConcurrently). gqlgen gives each
// element a goroutine, so that the elements' resolvers fill their loader
// batches together; when sel selects only leaves that resolve inline, no
// element can wait on anything, and they are marshalled one after another
// in this goroutine. Paths, errors and a panic's recovery are gqlgen's.
func (ec *executionContext) marshalList(ctx context.Context, sel ast.SelectionSet, typeName string, n int,
	marshal func(ctx context.Context, i int) graphql.Marshaler,
) (ret graphql.Array) {
	if n <= 1 || !inlineLeaves(sel, typeName) {
		return graphql.MarshalSliceConcurrently(ctx, n, 0, false, marshal)
	}
	ret = make(graphql.Array, n)
	for i := range n {
		childCtx := graphql.WithFieldContext(ctx, &graphql.FieldContext{Index: &i})
		if !marshalElement(childCtx, ret, i, marshal) {
			return nil
		}
	}
	return ret
}

// marshalElement writes element i into ret; false when it panicked (the
// panic is the element's error, and the list is null), as in gqlgen.
func marshalElement(ctx context.Context, ret graphql.Array, i int, marshal func(ctx context.Context, i int) graphql.Marshaler) (ok bool) {
	defer func() {
		if r := recover(); r != nil {
			graphql.AddError(ctx, graphql.Recover(ctx, r))
			ok = false
		}
	}()
	ret[i] = marshal(ctx, i)
	return true
}

// inlineLeaves reports whether sel, on an object of typeName, selects only
// fields without selections of their own that the executor resolves inline
// (no resolver, no method taking a context); fragments are not looked into.
func inlineLeaves(sel ast.SelectionSet, typeName string) bool {
	concurrent := concurrentOf[typeName]
	for _, s := range sel {
		f, ok := s.(*ast.Field)
		if !ok || len(f.SelectionSet) > 0 || concurrent[f.Name] {
			return false
		}
	}
	return true
}

// objectJSON writes an object's fields as JSON — what graphql.FieldSet's
// MarshalGQL writes — without copying every field and building a map for
// each object. Fields are GraphQL names: their keys need no escaping.
type objectJSON struct {
	fields []graphql.CollectedField
	set    *graphql.FieldSet
}

func (o objectJSON) MarshalGQL(w io.Writer) {
	_, _ = io.WriteString(w, "{")
	first := true
	var seen map[string]bool // for long selections; short ones are scanned
	if len(o.fields) > 16 {
		seen = make(map[string]bool, len(o.fields))
	}
	for i := range o.fields {
		alias := o.fields[i].Alias
		if seen != nil {
			if seen[alias] {
				continue
			}
			seen[alias] = true
		} else if written(o.fields[:i], alias) {
			continue
		}
		if first {
			first = false
			_, _ = io.WriteString(w, `"`)
		} else {
			_, _ = io.WriteString(w, `,"`)
		}
		_, _ = io.WriteString(w, alias)
		_, _ = io.WriteString(w, `":`)
		o.set.Values[i].MarshalGQL(w)
	}
	_, _ = io.WriteString(w, "}")
}

// written reports whether a field of the same alias comes before (the first
// one is written, as graphql.FieldSet does).
func written(before []graphql.CollectedField, alias string) bool {
	for i := range before {
		if before[i].Alias == alias {
			return true
		}
	}
	return false
}
