package graph_test

import (
	"context"
	"reflect"
	"slices"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/stretchr/testify/require"
	"github.com/vektah/gqlparser/v2"

	"github.com/taskgraph/taskgraph/graph"
	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/domain"
)

// schema is the server's GraphQL schema.
var schema = graph.NewExecutableSchema(graph.Config{}).Schema()

// TestLeanReads: an operation reads an entity lean, showing the domain
// fields its selected fields need, unless it selects a field of it outside
// the lean fields — directly, in a fragment or in a spread.
func TestLeanReads(t *testing.T) {
	lean := func(fields ...string) app.Shown { return app.Shown{Lean: true, Fields: fields} }
	none := lean()
	for _, c := range []struct {
		name, query string
		want        app.Lean
	}{
		{"the fields shown, each once, over every place", `{ task(id: "x") { id title fileImpacts { filePath }
			relationships { type target { status title } } } }`,
			app.Lean{Tasks: lean("Status", "Title"), FileImpacts: lean("FilePath"), Relationships: none}},
		{"a field resolved from wide columns", `{ task(id: "x") { id description fileImpacts { filePath } validation { valid } } }`,
			app.Lean{FileImpacts: lean("FilePath"), Relationships: none}},
		{"a link's fields", `{ task(id: "x") { relationships { notes createdBy { id } } } }`,
			app.Lean{Tasks: none, FileImpacts: none, Relationships: lean("CreatedByID", "Notes")}},
		{"deep in an inline fragment", `{ node(id: "x") { id ... on Task { relationships { target { relevantLessons { id } } } } } }`,
			app.Lean{FileImpacts: none, Relationships: none}},
		{"in a spread fragment, spread twice", `{ a: task(id: "x") { ...F } b: task(id: "y") { ...F } }
			fragment F on Task { id updatedAt validation { valid } }`, app.Lean{FileImpacts: none, Relationships: none}},
		{"a field of an interface", `{ node(id: "x") { id __typename } }`,
			app.Lean{Tasks: none, FileImpacts: none, Relationships: none}},
	} {
		t.Run(c.name, func(t *testing.T) {
			doc, err := gqlparser.LoadQuery(schema, c.query)
			require.Nil(t, err)
			ctx := graphql.WithOperationContext(context.Background(), &graphql.OperationContext{Doc: doc, Operation: doc.Operations[0]})
			require.Equal(t, c.want, graph.LeanReads(ctx))
		})
	}
	require.Equal(t, app.Lean{}, graph.LeanReads(context.Background()), "outside an operation")
}

// TestLeanFieldsName: the domain fields the lean fields name are fields of
// the domain structs, and every field of the GraphQL type is either lean or
// named here as read in full.
func TestLeanFieldsName(t *testing.T) {
	for _, c := range []struct {
		typeName string
		fields   map[string][]string
		domain   reflect.Type
		full     []string
	}{
		{"Task", graph.LeanTaskFields, reflect.TypeFor[domain.Task](), []string{"validation", "relevantLessons"}},
		{"TaskFileImpact", graph.LeanFileImpactFields, reflect.TypeFor[domain.TaskFileImpact](), nil},
		{"TaskRelationship", graph.LeanRelationshipFields, reflect.TypeFor[domain.TaskRelationship](), nil},
	} {
		for field, needs := range c.fields {
			for _, n := range needs {
				_, ok := c.domain.FieldByName(n)
				require.True(t, ok, "%s.%s shows %s, not a field of %s", c.typeName, field, n, c.domain)
			}
		}
		for _, f := range schema.Types[c.typeName].Fields {
			_, lean := c.fields[f.Name]
			require.True(t, lean != slices.Contains(c.full, f.Name), "%s.%s: lean or read in full", c.typeName, f.Name)
		}
	}
}
