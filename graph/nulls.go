package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
)

// explicitNulls returns the fields of input object argument arg that the client
// set to null, as opposed to leaving out: in an update, null clears a field and
// absence keeps it. gqlgen's decoded input cannot tell the two apart, so this
// reads the argument as the client sent it.
func explicitNulls(ctx context.Context, arg string) map[string]bool {
	fc := graphql.GetFieldContext(ctx)
	if fc == nil {
		return nil
	}
	a := fc.Field.Arguments.ForName(arg)
	if a == nil || a.Value == nil {
		return nil
	}
	raw, err := a.Value.Value(graphql.GetOperationContext(ctx).Variables)
	if err != nil {
		return nil
	}
	obj, ok := raw.(map[string]any)
	if !ok {
		return nil
	}
	nulls := map[string]bool{}
	for k, v := range obj {
		if v == nil {
			nulls[k] = true
		}
	}
	return nulls
}
