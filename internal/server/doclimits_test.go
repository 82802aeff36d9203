package server

import (
	"fmt"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql/introspection"
	"github.com/stretchr/testify/require"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
)

// TestDocumentLimits: documents with too many selections, in one selection
// set or in all, answer LIMIT_EXCEEDED without being validated; documents at
// the limits run.
func TestDocumentLimits(t *testing.T) {
	b := setup(t, func(c *Config) { c.MaxSelections = 30; c.MaxSelectionSetSize = 10 })
	fragments := func(n int) string {
		var s strings.Builder
		s.WriteString("{ task(id: 1) { ")
		for i := range n {
			fmt.Fprintf(&s, "...F%d ", i)
		}
		s.WriteString("} }")
		for i := range n {
			fmt.Fprintf(&s, " fragment F%d on Task { id }", i)
		}
		return s.String()
	}
	for _, tc := range []struct {
		name, query, message string
	}{
		{"one selection set", "{ " + strings.Repeat("viewer ", 11) + "}", "selection set holds 11 selections, which exceeds the limit of 10 per selection set"},
		{"a nested selection set", "{ task(id: 1) { " + strings.Repeat("id ", 11) + "} }", "exceeds the limit of 10 per selection set"},
		{"fragment spreads count", fragments(11), "exceeds the limit of 10 per selection set"},
		{"the document", "{ " + strings.Repeat("task(id: 1) { id id id id id } ", 6) + "}", "the document holds more than 30 selections"},
		{"fragment definitions count", "{ viewer } " + strings.Repeat("fragment F on Task { id id id id id id id id id id } ", 4), "the document holds more than 30 selections"},
		{"the 70 KB query", "{ " + strings.Repeat("viewer ", 10000) + "}", "exceeds the limit of 10 per selection set"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, out := b.post(t, tokenGood, gqlRequest{Query: tc.query})
			require.Len(t, out.Errors, 1, "%+v", out.Errors)
			require.Equal(t, []string{"LIMIT_EXCEEDED"}, out.codes())
			require.Contains(t, out.Errors[0].Message, tc.message)
			require.True(t, len(out.Data) == 0 || string(out.Data) == "null")
			require.Less(t, res.StatusCode, 500)
		})
	}
	// At the limits: 10 per set, 30 in all.
	res, out := b.post(t, tokenGood, gqlRequest{Query: "{ " + strings.Repeat("viewer ", 7) + "task(id: 1) { " + strings.Repeat("id ", 10) + "} " +
		strings.Repeat("task(id: 1) { id id id id id } ", 2) + "}"})
	require.Empty(t, out.Errors)
	require.Equal(t, 200, res.StatusCode)
	// A document that does not parse is reported as a parse error.
	_, out = b.post(t, tokenGood, gqlRequest{Query: "{ " + strings.Repeat("viewer ", 11)})
	require.Equal(t, []string{"GRAPHQL_PARSE_FAILED"}, out.codes())
}

// TestDocumentLimitsAdmitIntrospection: the default limits leave room for
// the introspection queries of GraphiQL and gqlgen.
func TestDocumentLimitsAdmitIntrospection(t *testing.T) {
	l := documentLimits{maxSelections: DefaultMaxSelections, maxSetSize: DefaultMaxSelectionSetSize}
	for _, q := range []string{introspection.Query, graphiqlIntrospectionQuery(t)} {
		doc, err := parser.ParseQuery(&ast.Source{Input: q})
		require.NoError(t, err)
		require.Nil(t, l.check(doc))
	}
}
