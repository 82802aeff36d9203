package server

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/stretchr/testify/require"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
)

const floatsSDL = `
input Inner { weights: [Float!] n: Int }
input Outer { vector: [Float!] score: Float count: Int id: ID inner: Inner self: Outer tags: [String!] }
input NoFloat { n: Int name: String }
type Query { q(o: Outer, f: Float, fs: [[Float]], n: Int, nf: NoFloat): String }
`

// TestFloatVariables: the numbers at a Float position of a cached
// operation's variables become the float64 gqlgen would parse them to — in
// lists, input objects and recursive input types — and nothing else changes:
// Ints, IDs, strings, numbers out of float64's range, and every variable of
// a document not in the query cache.
func TestFloatVariables(t *testing.T) {
	schema, err := gqlparser.LoadSchema(&ast.Source{Name: "floats.graphqls", Input: floatsSDL})
	require.NoError(t, err)
	ctx := context.Background()
	cache := lru.New[*ast.QueryDocument](10)
	const query = `query($o: Outer, $f: Float, $fs: [[Float]], $n: Int, $nf: NoFloat) { q(o: $o, f: $f, fs: $fs, n: $n, nf: $nf) }`
	doc, gerr := gqlparser.LoadQuery(schema, query)
	require.Nil(t, gerr)
	cache.Add(ctx, query, doc)
	ext := newFloatVariables(schema, cache)
	require.Equal(t, map[string]bool{"Inner": true, "Outer": true}, ext.floaty)

	vars := func() map[string]any {
		return map[string]any{
			"o": map[string]any{
				"vector": []any{json.Number("0.1"), json.Number("-2.5e-3"), json.Number("7")},
				"score":  json.Number("0.30000000000000004"),
				"count":  json.Number("3"), "id": json.Number("42"), "tags": []any{"1.5"},
				"inner": map[string]any{"weights": []any{json.Number("1e-7")}, "n": json.Number("5")},
				"self":  map[string]any{"vector": []any{json.Number("1e999"), nil}, "score": json.Number("2")},
			},
			"f":  json.Number("3.25"),
			"fs": []any{[]any{json.Number("1.5"), nil}, json.Number("2")},
			"n":  json.Number("9"),
			"nf": map[string]any{"n": json.Number("1")},
		}
	}
	p := &graphql.RawParams{Query: query, Variables: vars()}
	require.Nil(t, ext.MutateOperationParameters(ctx, p))
	require.Equal(t, map[string]any{
		"o": map[string]any{
			// A [Float!] of numbers: one []float64, which the validator and
			// the executor take as it is.
			"vector": []float64{0.1, -2.5e-3, 7.0},
			"score":  0.30000000000000004,
			"count":  json.Number("3"), "id": json.Number("42"), "tags": []any{"1.5"},
			"inner": map[string]any{"weights": []float64{1e-7}, "n": json.Number("5")},
			// Out of float64's range: left for the validator to refuse, the
			// list element by element (so is a list with a null or a string).
			"self": map[string]any{"vector": []any{json.Number("1e999"), nil}, "score": 2.0},
		},
		"f":  3.25,
		"fs": []any{[]any{1.5, nil}, 2.0},
		"n":  json.Number("9"),
		"nf": map[string]any{"n": json.Number("1")},
	}, p.Variables)

	// A document the executor has not cached (not yet validated) is left alone.
	other := &graphql.RawParams{Query: query + " ", Variables: vars()}
	require.Nil(t, ext.MutateOperationParameters(ctx, other))
	require.Equal(t, vars(), other.Variables)
	// So is an operation name the document does not have.
	named := &graphql.RawParams{Query: query, OperationName: "Missing", Variables: vars()}
	require.Nil(t, ext.MutateOperationParameters(ctx, named))
	require.Equal(t, vars(), named.Variables)
}
