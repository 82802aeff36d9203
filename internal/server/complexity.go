package server

import (
	"context"
	"encoding/json"
	"math"
	"strings"

	"github.com/99designs/gqlgen/graphql"
)

// defaultPageSize is what a connection returns without first/last.
const defaultPageSize = 50

// pagedComplexity makes gqlgen's complexity count list fields by their page
// size: a field with an integer first or last costs childComplexity × n + 1; a
// connection field without either costs as a default page. Other fields keep
// the generated complexity, or childComplexity + 1.
type pagedComplexity struct {
	graphql.ExecutableSchema
}

// pagedComplexityWithEvents keeps the optional event-context interface of a
// generated schema visible to the executor through the wrapper.
type pagedComplexityWithEvents struct {
	pagedComplexity
	events graphql.ExecutableSchemaWithEventContext
}

func (p pagedComplexityWithEvents) ExecWithEventContext(ctx context.Context) graphql.ResponseHandlerWithContext {
	return p.events.ExecWithEventContext(ctx)
}

// withPagedComplexity wraps es; see pagedComplexity.
func withPagedComplexity(es graphql.ExecutableSchema) graphql.ExecutableSchema {
	p := pagedComplexity{ExecutableSchema: es}
	if ev, ok := es.(graphql.ExecutableSchemaWithEventContext); ok {
		return pagedComplexityWithEvents{pagedComplexity: p, events: ev}
	}
	return p
}

// Complexity implements graphql.ExecutableSchema.
func (p pagedComplexity) Complexity(ctx context.Context, typeName, fieldName string, childComplexity int, args map[string]any) (int, bool) {
	n, paged := pageSize(args)
	if !paged && p.returnsConnection(typeName, fieldName) {
		n, paged = defaultPageSize, true
	}
	if paged {
		return saturatingAdd(saturatingMul(max(childComplexity, 0), n), 1), true
	}
	if c, ok := p.ExecutableSchema.Complexity(ctx, typeName, fieldName, childComplexity, args); ok {
		return c, true
	}
	return saturatingAdd(max(childComplexity, 0), 1), true
}

// pageSize returns the larger of the integer arguments first and last.
func pageSize(args map[string]any) (int, bool) {
	n, found := 0, false
	for _, name := range [...]string{"first", "last"} {
		if v, ok := toInt(args[name]); ok {
			n, found = max(n, v), true
		}
	}
	return n, found
}

// toInt reads an Int argument as the parser (int64), the variable coercion
// (int64, json.Number) or a JSON decoder (float64) may have left it. Negative
// values count as 0; the resolver rejects them.
func toInt(v any) (int, bool) {
	var n int64
	switch v := v.(type) {
	case int:
		n = int64(v)
	case int32:
		n = int64(v)
	case int64:
		n = v
	case float64:
		if v != math.Trunc(v) {
			return 0, false
		}
		if v < 0 {
			return 0, true
		}
		if v >= math.MaxInt64 {
			return maxInt, true
		}
		n = int64(v)
	case json.Number:
		i, err := v.Int64()
		if err != nil {
			return 0, false
		}
		n = i
	default:
		return 0, false
	}
	if n < 0 {
		return 0, true
	}
	if n > int64(maxInt) {
		return maxInt, true
	}
	return int(n), true
}

func (p pagedComplexity) returnsConnection(typeName, fieldName string) bool {
	schema := p.Schema()
	if schema == nil {
		return false
	}
	def := schema.Types[typeName]
	if def == nil {
		return false
	}
	f := def.Fields.ForName(fieldName)
	return f != nil && f.Type != nil && strings.HasSuffix(f.Type.Name(), "Connection")
}
