package server

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/stretchr/testify/require"
	"github.com/vektah/gqlparser/v2/ast"
)

func TestPagedComplexity(t *testing.T) {
	schema := testSchema(t)
	inner := &graphql.ExecutableSchemaMock{
		SchemaFunc: func() *ast.Schema { return schema },
		ComplexityFunc: func(_ context.Context, typeName, field string, child int, _ map[string]any) (int, bool) {
			if typeName == "Task" && field == "tags" {
				return 7 + child, true // a generated (configured) complexity
			}
			return 0, false
		},
	}
	es := withPagedComplexity(inner)

	tests := []struct {
		name      string
		typeName  string
		field     string
		child     int
		args      map[string]any
		want      int
		wantInner bool // the generated complexity is consulted
	}{
		{name: "first from a literal", typeName: "Query", field: "tasks", child: 3, args: map[string]any{"first": int64(10)}, want: 31},
		{name: "last from a variable", typeName: "Task", field: "children", child: 3, args: map[string]any{"last": int64(20)}, want: 61},
		{name: "json.Number", typeName: "Query", field: "tasks", child: 2, args: map[string]any{"first": json.Number("5")}, want: 11},
		{name: "float64 from a websocket payload", typeName: "Query", field: "tasks", child: 2, args: map[string]any{"first": float64(5)}, want: 11},
		{name: "first and last: the larger", typeName: "Query", field: "tasks", child: 1, args: map[string]any{"first": int64(5), "last": int64(8)}, want: 9},
		{name: "zero", typeName: "Query", field: "tasks", child: 100, args: map[string]any{"first": int64(0)}, want: 1},
		{name: "negative counts as zero", typeName: "Query", field: "tasks", child: 100, args: map[string]any{"first": int64(-5)}, want: 1},
		{name: "connection without first or last", typeName: "Query", field: "tasks", child: 3, args: map[string]any{}, want: 151},
		{name: "null first on a connection", typeName: "Task", field: "children", child: 3, args: map[string]any{"first": nil}, want: 151},
		{name: "saturates instead of overflowing", typeName: "Query", field: "tasks", child: 1 << 40, args: map[string]any{"first": int64(1 << 40)}, want: maxInt},
		{name: "first on a non-connection field", typeName: "Query", field: "task", child: 4, args: map[string]any{"first": int64(3)}, want: 13},
		{name: "generated complexity", typeName: "Task", field: "tags", child: 0, args: map[string]any{}, want: 7, wantInner: true},
		{name: "plain field", typeName: "Task", field: "parent", child: 4, args: map[string]any{}, want: 5, wantInner: true},
		{name: "scalar", typeName: "Task", field: "title", child: 0, args: map[string]any{}, want: 1, wantInner: true},
		{name: "unknown type", typeName: "Nope", field: "x", child: 2, args: nil, want: 3, wantInner: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(inner.ComplexityCalls())
			got, ok := es.Complexity(context.Background(), tt.typeName, tt.field, tt.child, tt.args)
			require.True(t, ok)
			require.Equal(t, tt.want, got)
			require.Equal(t, tt.wantInner, len(inner.ComplexityCalls()) > before)
		})
	}
}

// eventSchema stands for a generated schema with @subscriptionContext fields.
type eventSchema struct{ *graphql.ExecutableSchemaMock }

func (eventSchema) ExecWithEventContext(context.Context) graphql.ResponseHandlerWithContext {
	return nil
}

func TestPagedComplexityKeepsEventContext(t *testing.T) {
	plain := withPagedComplexity(&graphql.ExecutableSchemaMock{})
	_, ok := plain.(graphql.ExecutableSchemaWithEventContext)
	require.False(t, ok)

	wrapped := withPagedComplexity(eventSchema{&graphql.ExecutableSchemaMock{}})
	_, ok = wrapped.(graphql.ExecutableSchemaWithEventContext)
	require.True(t, ok, "the executor's type assertion must still see the optional interface")
}
