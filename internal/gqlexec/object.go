package gqlexec

import (
	"context"
	"io"

	"github.com/99designs/gqlgen/graphql"
)

// WriteObject writes an object's fields as JSON — what graphql.FieldSet's
// MarshalGQL writes — without copying every field and building a map for
// each object. Fields are GraphQL names: their keys need no escaping.
func WriteObject(w io.Writer, fields []graphql.CollectedField, set *graphql.FieldSet) {
	_, _ = io.WriteString(w, "{")
	first := true
	var seen map[string]bool // for long selections; short ones are scanned
	if len(fields) > 16 {
		seen = make(map[string]bool, len(fields))
	}
	for i := range fields {
		alias := fields[i].Alias
		if seen != nil {
			if seen[alias] {
				continue
			}
			seen[alias] = true
		} else if written(fields[:i], alias) {
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
		set.Values[i].MarshalGQL(w)
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

// MarshalElement writes element i into ret; false when it panicked (the
// panic is the element's error, and the list is null), as in gqlgen.
func MarshalElement(ctx context.Context, ret graphql.Array, i int, marshal func(ctx context.Context, i int) graphql.Marshaler) (ok bool) {
	defer func() {
		if r := recover(); r != nil {
			graphql.AddError(ctx, graphql.Recover(ctx, r))
			ok = false
		}
	}()
	ret[i] = marshal(ctx, i)
	return true
}
