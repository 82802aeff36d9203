package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/taskgraph/taskgraph/internal/domain"
)

// inputChecks rejects, before execution, input values that the schema's
// types admit on paper but the databases do not agree on:
//
//   - an Int outside the signed 32-bit range: GraphQL's Int is 32-bit, and
//     gqlparser and gqlgen accept any 64-bit value, which SQLite stores and
//     PostgreSQL's integer columns refuse (an INTERNAL error);
//   - a string containing the NUL character (U+0000), which SQLite stores and
//     PostgreSQL's text and jsonb refuse — in any input value: String, ID,
//     JSON (keys too), wherever it is nested.
//
// Both answer BAD_USER_INPUT with extensions.field, the argument's path to
// the value ("input.maxParallelAgents", "input.fileImpacts[0].filePath"), the
// convention of gqlgen's argument errors. Every argument of every field of the
// operation is checked with its variables substituted, whatever its type, so
// that no resolver has to remember; a fragment is walked once.
type inputChecks struct {
	schema *ast.Schema
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = inputChecks{}

func (inputChecks) ExtensionName() string                   { return "InputChecks" }
func (inputChecks) Validate(graphql.ExecutableSchema) error { return nil }

func (c inputChecks) MutateOperationContext(_ context.Context, opCtx *graphql.OperationContext) *gqlerror.Error {
	if opCtx.Operation == nil || c.schema == nil {
		return nil
	}
	w := inputWalker{schema: c.schema, vars: opCtx.Variables, doc: opCtx.Doc, seen: map[string]bool{}}
	return w.selectionSet(opCtx.Operation.SelectionSet)
}

type inputWalker struct {
	schema *ast.Schema
	vars   map[string]any
	doc    *ast.QueryDocument
	seen   map[string]bool // fragments walked
}

func (w *inputWalker) selectionSet(set ast.SelectionSet) *gqlerror.Error {
	for _, sel := range set {
		switch sel := sel.(type) {
		case *ast.Field:
			if err := w.arguments(sel); err != nil {
				return err
			}
			if err := w.selectionSet(sel.SelectionSet); err != nil {
				return err
			}
		case *ast.InlineFragment:
			if err := w.selectionSet(sel.SelectionSet); err != nil {
				return err
			}
		case *ast.FragmentSpread:
			if w.seen[sel.Name] {
				continue
			}
			w.seen[sel.Name] = true
			def := sel.Definition
			if def == nil && w.doc != nil {
				def = w.doc.Fragments.ForName(sel.Name)
			}
			if def != nil {
				if err := w.selectionSet(def.SelectionSet); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func (w *inputWalker) arguments(f *ast.Field) *gqlerror.Error {
	for _, arg := range f.Arguments {
		if arg.Value == nil {
			continue
		}
		var typ *ast.Type
		if f.Definition != nil {
			if def := f.Definition.Arguments.ForName(arg.Name); def != nil {
				typ = def.Type
			}
		}
		v, err := arg.Value.Value(w.vars)
		if errors.Is(err, strconv.ErrRange) {
			// A literal number beyond 64 bits.
			return w.fail(arg.Position, ast.Path{ast.PathName(arg.Name)}, "a number in argument %s is out of range: %s", arg.Name, intRange)
		} else if err != nil {
			continue // gqlgen reports it
		}
		if msg, at := w.value(ast.Path{ast.PathName(arg.Name)}, typ, v); msg != "" {
			return w.fail(arg.Position, at, "%s", msg)
		}
	}
	return nil
}

// intRange describes GraphQL's Int in error messages.
const intRange = "GraphQL Int is a signed 32-bit integer (-2147483648 to 2147483647)"

// value checks v, of type typ (nil: unknown, then only strings are checked),
// and returns what is wrong and where.
func (w *inputWalker) value(path ast.Path, typ *ast.Type, v any) (string, ast.Path) {
	if v == nil {
		return "", nil
	}
	if typ != nil && typ.Elem != nil {
		if list, ok := v.([]any); ok {
			checkNumbers := namedType(typ.Elem) == "Int"
			for i, e := range list {
				if !checkNumbers && isPlainScalar(e) {
					continue // nothing to check, and no path to build (a vector's 768 numbers)
				}
				if msg, at := w.value(append(path, ast.PathIndex(i)), typ.Elem, e); msg != "" {
					return msg, at
				}
			}
			return "", nil
		}
		return w.value(path, typ.Elem, v) // a single value coerced to a list
	}
	var def *ast.Definition
	if typ != nil {
		def = w.schema.Types[typ.NamedType]
	}
	switch {
	case def != nil && def.Name == "Int":
		if !isInt32(v) {
			return fmt.Sprintf("Int cannot represent %v: %s", v, intRange), path
		}
		return "", nil
	case def != nil && def.Kind == ast.InputObject:
		if obj, ok := v.(map[string]any); ok {
			for name, fv := range obj {
				var ft *ast.Type
				if fd := def.Fields.ForName(name); fd != nil {
					ft = fd.Type
				}
				if msg, at := w.value(append(path, ast.PathName(name)), ft, fv); msg != "" {
					return msg, at
				}
			}
			return "", nil
		}
	}
	return anyNUL(path, v)
}

// namedType is the named type at the bottom of typ's lists.
func namedType(typ *ast.Type) string {
	for typ.Elem != nil {
		typ = typ.Elem
	}
	return typ.NamedType
}

// isPlainScalar reports whether v is a number or a boolean: no string to look
// for a NUL in, and only an Int's range to check.
func isPlainScalar(v any) bool {
	switch v.(type) {
	case json.Number, float64, bool, int, int32, int64:
		return true
	}
	return false
}

// anyNUL looks for a string with a NUL character in v, map keys included.
func anyNUL(path ast.Path, v any) (string, ast.Path) {
	const msg = "a string cannot contain the NUL character (U+0000)"
	switch v := v.(type) {
	case string:
		if strings.IndexByte(v, 0) >= 0 {
			return msg, path
		}
	case []any:
		for i, e := range v {
			if m, at := anyNUL(append(path, ast.PathIndex(i)), e); m != "" {
				return m, at
			}
		}
	case map[string]any:
		for k, e := range v {
			if strings.IndexByte(k, 0) >= 0 {
				return msg, path
			}
			if m, at := anyNUL(append(path, ast.PathName(k)), e); m != "" {
				return m, at
			}
		}
	}
	return "", nil
}

// isInt32 reports whether v, an Int as parsing or variable coercion left it,
// is within the signed 32-bit range. Values of other types are left to
// gqlgen's unmarshalling, which reports them.
func isInt32(v any) bool {
	in := func(n int64) bool { return n >= math.MinInt32 && n <= math.MaxInt32 }
	switch v := v.(type) {
	case int:
		return in(int64(v))
	case int32:
		return true
	case int64:
		return in(v)
	case float64:
		return v >= math.MinInt32 && v <= math.MaxInt32
	case json.Number:
		n, err := v.Int64()
		return err == nil && in(n) || err != nil && !isNumeric(string(v))
	case string:
		n, err := strconv.ParseInt(v, 10, 64)
		return err == nil && in(n) || err != nil && !isNumeric(v)
	}
	return true
}

// isNumeric reports whether s looks like a number (a too large one fails to
// parse as int64; anything else is gqlgen's to report).
func isNumeric(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}

func (w *inputWalker) fail(pos *ast.Position, path ast.Path, format string, args ...any) *gqlerror.Error {
	err := gqlerror.Errorf(format, args...)
	err.Extensions = map[string]any{"code": string(domain.CodeBadUserInput), "field": path.String()}
	if pos != nil {
		err.Locations = []gqlerror.Location{{Line: pos.Line, Column: pos.Column}}
	}
	return err
}
