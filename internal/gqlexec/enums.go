package gqlexec

import (
	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// Enums are graphql.MarshalString of every value of a schema's enums, made
// once.
type Enums map[string]graphql.Marshaler

// NewEnums makes the marshallers of schema's enum values.
func NewEnums(schema *ast.Schema) Enums {
	m := Enums{}
	for _, def := range schema.Types {
		if def.Kind == ast.Enum {
			for _, v := range def.EnumValues {
				m[v.Name] = graphql.MarshalString(v.Name)
			}
		}
	}
	return m
}

// Marshal is graphql.MarshalString(v) for an enum value v: the schema's
// values share one marshaller each instead of a closure made for every
// value written; any other string (a value the schema does not know) is
// marshalled as gqlgen does.
func (e Enums) Marshal(v string) graphql.Marshaler {
	if m, ok := e[v]; ok {
		return m
	}
	return graphql.MarshalString(v)
}
