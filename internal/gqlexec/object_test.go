package gqlexec

import (
	"bytes"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/stretchr/testify/require"
	"github.com/vektah/gqlparser/v2/ast"
)

// TestWriteObjectAsFieldSet: an object is written as graphql.FieldSet writes
// it, a repeated alias once (its first value), on both sides of the
// scanned/mapped threshold (maxScannedFields); a scanned object allocates
// nothing.
func TestWriteObjectAsFieldSet(t *testing.T) {
	for _, n := range []int{0, 1, 3, 16, 17, 23, maxScannedFields, maxScannedFields + 1, 40} {
		var fields []graphql.CollectedField
		for i := range n {
			alias := string(rune('a' + i%20)) // repeats past 20
			fields = append(fields, graphql.CollectedField{Field: &ast.Field{Alias: alias, Name: alias}})
		}
		want := graphql.NewFieldSet(fields)
		set := graphql.NewFieldSet(fields)
		for i := range fields {
			want.Values[i] = graphql.MarshalInt(i)
			set.Values[i] = graphql.MarshalInt(i)
		}
		var a, b bytes.Buffer
		want.MarshalGQL(&a)
		WriteObject(&b, fields, set)
		require.Equal(t, a.String(), b.String(), "%d fields", n)
		if n <= maxScannedFields {
			b.Grow(4 * b.Len())
			require.Zero(t, testing.AllocsPerRun(10, func() { b.Reset(); WriteObject(&b, fields, set) }), "%d fields", n)
		}
	}
}

// TestNewObject: an object's set has a value for each field, whatever its
// size class, and the object writes them as graphql.FieldSet does; up to 16
// fields it is one allocation.
func TestNewObject(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 4, 5, 8, 9, 16, 17, 40} {
		var fields []graphql.CollectedField
		for i := range n {
			alias := string(rune('a' + i%26))
			fields = append(fields, graphql.CollectedField{Field: &ast.Field{Alias: alias, Name: alias}})
		}
		want := graphql.NewFieldSet(fields)
		obj, set := NewObject(fields)
		require.Len(t, set.Values, n)
		for i := range fields {
			want.Values[i] = graphql.MarshalInt(i)
			set.Values[i] = graphql.MarshalInt(i)
		}
		var a, b bytes.Buffer
		want.MarshalGQL(&a)
		obj.MarshalGQL(&b)
		require.Equal(t, a.String(), b.String(), "%d fields", n)
		if n <= 16 {
			require.Equal(t, 1.0, testing.AllocsPerRun(10, func() { NewObject(fields) }), "%d fields", n)
		}
	}
}
