package graph

import (
	"context"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/stretchr/testify/require"
	"github.com/vektah/gqlparser/v2"

	"github.com/taskgraph/taskgraph/internal/app"
)

// TestLeanReads: an operation reads an entity lean unless it selects a field
// of it outside the lean fields — directly, in a fragment or in a spread.
func TestLeanReads(t *testing.T) {
	for _, c := range []struct {
		name, query string
		want        app.Lean
	}{
		{"lean fields", `{ task(id: "x") { id title fileImpacts { filePath } relationships { target { status } } } }`,
			app.Lean{Tasks: true, FileImpacts: true}},
		{"a wide task field", `{ task(id: "x") { id description fileImpacts { filePath } } }`,
			app.Lean{FileImpacts: true}},
		{"a wide impact field", `{ task(id: "x") { id fileImpacts { createdAt } } }`, app.Lean{Tasks: true}},
		{"deep in an inline fragment", `{ node(id: "x") { id ... on Task { relationships { target { updatedAt } } } } }`,
			app.Lean{FileImpacts: true}},
		{"in a spread fragment, spread twice", `{ a: task(id: "x") { ...F } b: task(id: "y") { ...F } }
			fragment F on Task { id validation { valid } }`, app.Lean{FileImpacts: true}},
		{"a field of an interface", `{ node(id: "x") { id __typename } }`, app.Lean{Tasks: true, FileImpacts: true}},
		{"a field resolved from wide columns", `{ task(id: "x") { relevantLessons { id } } }`, app.Lean{FileImpacts: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			doc, err := gqlparser.LoadQuery(parsedSchema, c.query)
			require.Nil(t, err)
			ctx := graphql.WithOperationContext(context.Background(), &graphql.OperationContext{Doc: doc, Operation: doc.Operations[0]})
			require.Equal(t, c.want, LeanReads(ctx))
		})
	}
	require.Equal(t, app.Lean{}, LeanReads(context.Background()), "outside an operation")
}
