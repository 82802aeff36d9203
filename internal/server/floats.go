package server

import (
	"context"
	"encoding/json"
	"strconv"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// floatVariables turns the numbers of a request's variables that stand where
// the operation declares a Float — a Float variable, an element of a [Float]
// list, a Float field of an input object, however nested — from the
// json.Number the POST transport decodes them as into the float64 they
// denote, before the executor coerces the variables.
//
// The value is the one gqlgen would have made: its Float unmarshaller parses
// a json.Number with strconv.ParseFloat too. What it saves is the work
// between: gqlparser's variable validation formats every json.Number it
// checks as a Float back into a string and parses it (an allocation and a
// parse per number), and gqlgen parses it again. A vector of 768 numbers
// (createTask's embedding) paid both 768 times.
//
// Only the types of the operation's variable definitions are used, read from
// the executor's query cache: a document is there once it has parsed and
// validated, so a query's first request goes the usual way. A number that
// does not parse (out of float64's range) is left as it is, for the
// validator to report as before; an Int, an ID or a custom scalar is never
// touched.
type floatVariables struct {
	schema *ast.Schema
	cache  graphql.Cache[*ast.QueryDocument] // the executor's query cache
	floaty map[string]bool                   // the input types that can hold a Float
}

func newFloatVariables(schema *ast.Schema, cache graphql.Cache[*ast.QueryDocument]) floatVariables {
	f := floatVariables{schema: schema, cache: cache, floaty: map[string]bool{}}
	if schema == nil {
		return f
	}
	// An input type holds a Float if one of its fields' types is Float or
	// such an input type: repeated until nothing is added (types refer to
	// each other, recursively too).
	for changed := true; changed; {
		changed = false
		for name, def := range schema.Types {
			if def.Kind != ast.InputObject || f.floaty[name] {
				continue
			}
			for _, fd := range def.Fields {
				if fd.Type != nil && f.holdsFloat(fd.Type) {
					f.floaty[name], changed = true, true
					break
				}
			}
		}
	}
	return f
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationParameterMutator
} = floatVariables{}

func (floatVariables) ExtensionName() string                   { return "FloatVariables" }
func (floatVariables) Validate(graphql.ExecutableSchema) error { return nil }

func (f floatVariables) MutateOperationParameters(ctx context.Context, params *graphql.RawParams) *gqlerror.Error {
	if len(params.Variables) == 0 || params.Query == "" || f.cache == nil || f.schema == nil {
		return nil
	}
	doc, ok := f.cache.Get(ctx, params.Query)
	if !ok || doc == nil {
		return nil
	}
	op := doc.Operations.ForName(params.OperationName)
	if op == nil {
		return nil // the executor reports it
	}
	for _, def := range op.VariableDefinitions {
		if v, ok := params.Variables[def.Variable]; ok && def.Type != nil && f.holdsFloat(def.Type) {
			params.Variables[def.Variable] = f.coerce(def.Type, v, 0)
		}
	}
	return nil
}

// maxFloatDepth bounds the walk of nested values (the body's size and its
// JSON's nesting bound them already); a value deeper is left as it is, for
// the validator.
const maxFloatDepth = 64

// holdsFloat reports whether a value of typ can contain a Float.
func (f floatVariables) holdsFloat(typ *ast.Type) bool {
	for typ.Elem != nil {
		typ = typ.Elem
	}
	return typ.NamedType == "Float" || f.floaty[typ.NamedType]
}

// coerce returns v, of type typ, with its Float numbers as float64. Lists
// and input objects are changed in place, as the validator does after.
func (f floatVariables) coerce(typ *ast.Type, v any, depth int) any {
	if v == nil || depth > maxFloatDepth {
		return v
	}
	if typ.Elem != nil {
		list, ok := v.([]any)
		if !ok {
			return f.coerce(typ.Elem, v, depth+1) // a single value coerced to a list
		}
		if typ.Elem.NonNull && typ.Elem.Elem == nil && typ.Elem.NamedType == "Float" {
			if vector, ok := floatList(list); ok {
				return vector
			}
		}
		for i, e := range list {
			list[i] = f.coerce(typ.Elem, e, depth+1)
		}
		return list
	}
	def := f.schema.Types[typ.NamedType]
	if def == nil {
		return v
	}
	switch def.Kind {
	case ast.Scalar:
		if def.Name != "Float" {
			return v
		}
		if x, ok := floatOf(v); ok {
			return x
		}
	case ast.InputObject:
		obj, ok := v.(map[string]any)
		if !ok {
			return v
		}
		for name, fv := range obj {
			if fd := def.Fields.ForName(name); fd != nil && fd.Type != nil && f.holdsFloat(fd.Type) {
				obj[name] = f.coerce(fd.Type, fv, depth+1)
			}
		}
	}
	return v
}

// floatList returns a [Float!] list's numbers as one []float64, or false
// when an element is not a number that parses (null, a string, a number
// out of range): then each element is coerced on its own, for the validator
// to report. The validator takes a []float64 as a list of Floats, and the
// executor's [Float!] unmarshallers take it without boxing each number
// again (internal/tools/execpass): a vector of 768 numbers is then one
// allocation, not 768.
func floatList(list []any) ([]float64, bool) {
	out := make([]float64, len(list))
	for i, e := range list {
		x, ok := floatOf(e)
		if !ok {
			return nil, false
		}
		out[i] = x
	}
	return out, true
}

// floatOf is the float64 of a Float variable's value: a json.Number as
// gqlgen parses it, or a float64 already; false for anything else (null, a
// string, a number out of float64's range), left to the validator.
func floatOf(v any) (float64, bool) {
	switch v := v.(type) {
	case json.Number:
		x, err := strconv.ParseFloat(string(v), 64)
		return x, err == nil
	case float64:
		return v, true
	}
	return 0, false
}
