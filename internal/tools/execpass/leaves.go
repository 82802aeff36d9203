package main

// The plain leaves: field functions of scalars and enums read straight
// from a struct field or a method, written by their marshaller directly
// or from the field's address.

import (
	"go/ast"
	"go/token"
	"slices"
	"strings"
)

// leaf is a field function that can write its value directly.
type leaf struct {
	field      string // the struct field read, or the method called ("M()")
	marshaller string // the ec method that writes it
	guard      string // on the value ($): when false, gqlgen's path (""=always direct)
}

// plainLeaf recognises gqlgen's function for a field read from a struct
// field of obj, of a scalar or enum type, without middleware:
//
//	return graphql.ResolveField(ctx, ec.OperationContext, field,
//		func(...) { return ec.fieldContext_T_f(ctx, field) },   // a scalar field context
//		func(ctx) (any, error) { return obj.F, nil },
//		nil,
//		func(ctx, selections, v V) graphql.Marshaler { return ec.marshalX(ctx, selections, v) },
//		true, true)
func plainLeaf(fn *ast.FuncDecl, methods map[string]*ast.FuncDecl) (leaf, bool) {
	if !strings.HasPrefix(fn.Name.Name, "_") || len(fn.Body.List) != 1 {
		return leaf{}, false
	}
	ret, ok := fn.Body.List[0].(*ast.ReturnStmt)
	if !ok || len(ret.Results) != 1 {
		return leaf{}, false
	}
	call, ok := ret.Results[0].(*ast.CallExpr)
	if !ok || !isSel(call.Fun, "graphql", "ResolveField") || len(call.Args) != 9 {
		return leaf{}, false
	}
	if id, ok := call.Args[5].(*ast.Ident); !ok || id.Name != "nil" {
		return leaf{}, false // directives
	}
	fcName, ok := returnedCall(call.Args[3])
	if !ok || !scalarContext(methods[fcName]) {
		return leaf{}, false
	}
	field, ok := returnedObjField(call.Args[4])
	if !ok {
		return leaf{}, false
	}
	marshaller, ok := returnedCall(call.Args[6])
	if !ok {
		return leaf{}, false
	}
	guard, ok := nullGuard(methods[marshaller])
	if !ok || (guard != "" && strings.HasSuffix(field, "()")) {
		return leaf{}, false // a method is called once
	}
	return leaf{field: field, marshaller: marshaller, guard: guard}, true
}

// leafHelpers are the graph helpers that write a scalar leaf read from a
// struct field, by the Go type of the field and the call gqlgen's
// marshaller makes: from the field's address (addr), or from its value
// when a value costs no allocation either (booleans).
var leafHelpers = []struct {
	typ      string   // the marshaller's value type: string, int, time.Time, bool
	calls    []string // what gqlgen's marshaller calls on it: graphql.MarshalString, …
	required string   // helper of the non-null marshaller (marshalN…)
	optional string   // helper of the nullable one (marshalO…, a pointer)
	addr     bool     // the non-null helper takes the field's address
}{
	{"string", []string{"graphql.MarshalString", "graphql.MarshalID"}, "stringAt", "optionalStringAt", true},
	{"int", []string{"graphql.MarshalInt"}, "intAt", "optionalIntAt", true},
	{"time.Time", []string{"gqlexec.MarshalTime"}, "timeAt", "optionalTimeAt", true},
	{"bool", []string{"graphql.MarshalBoolean"}, "boolean", "optionalBoolean", false},
}

// leafMarshallers are gqlgen's marshallers of those scalars: each, when the
// file has it, must be a shape leafHelper knows, or the pass fails.
var leafMarshallers = []string{"marshalNString2string", "marshalOString2ᚖstring", "marshalNID2string", "marshalOID2ᚖstring",
	"marshalNInt2int", "marshalOInt2ᚖint", "marshalNTime2timeᚐTime", "marshalOTime2ᚖtimeᚐTime",
	"marshalNBoolean2bool", "marshalOBoolean2ᚖbool"}

// leafHelper is the graph helper that writes, for marshaller fn, a leaf
// read from a struct field, and how it takes the field (a format of the
// field's name: its address, its value, or its address as a *string for an
// enum, whose Go type is a string type); "" when fn is not one of gqlgen's
// two shapes for such scalars:
//
//	marshalNString2string(ctx, sel, v string): res := graphql.MarshalString(v) … return res
//	marshalOString2ᚖstring(ctx, sel, v *string): if v == nil { return graphql.Null } … res := graphql.MarshalString(*v) … return res
//	marshalNStatus2domainᚐStatus(ctx, sel, v domain.Status): res := graphql.MarshalString(string(v)) … return res
func leafHelper(fn *ast.FuncDecl) (helper, form string) {
	if fn == nil || len(fn.Type.Params.List) != 3 || len(fn.Type.Params.List[2].Names) != 1 {
		return "", ""
	}
	typ, optional := fn.Type.Params.List[2].Type, false
	if star, ok := typ.(*ast.StarExpr); ok {
		typ, optional = star.X, true
	}
	var call string
	enum := false
	for _, st := range fn.Body.List {
		as, ok := st.(*ast.AssignStmt)
		if !ok || len(as.Rhs) != 1 || len(as.Lhs) != 1 || !isIdent(as.Lhs[0], "res") {
			continue
		}
		c, ok := as.Rhs[0].(*ast.CallExpr)
		if call != "" || !ok || len(c.Args) != 1 {
			return "", ""
		}
		arg := c.Args[0]
		if conv, ok := arg.(*ast.CallExpr); ok && isIdent(conv.Fun, "string") && len(conv.Args) == 1 {
			arg, enum = conv.Args[0], true
		}
		star, deref := arg.(*ast.StarExpr)
		if deref != optional {
			return "", "" // a nullable marshaller writes *v, a non-null one v
		}
		if deref {
			arg = star.X
		}
		sel, ok := c.Fun.(*ast.SelectorExpr)
		if !isIdent(arg, "v") || !ok {
			return "", ""
		}
		x, ok := sel.X.(*ast.Ident)
		if !ok {
			return "", ""
		}
		call = x.Name + "." + sel.Sel.Name
	}
	switch {
	case enum && call == "graphql.MarshalString" && optional:
		return "optionalStringAt", "(*string)(obj.%s)"
	case enum && call == "graphql.MarshalString":
		return "stringAt", "(*string)(&obj.%s)"
	case enum:
		return "", ""
	}
	for _, h := range leafHelpers {
		if exprText(typ) != h.typ || !slices.Contains(h.calls, call) {
			continue
		}
		switch {
		case optional:
			return h.optional, "obj.%s"
		case h.addr:
			return h.required, "&obj.%s"
		}
		return h.required, "obj.%s"
	}
	return "", ""
}

// exprText is a type's name as written: string, time.Time.
func exprText(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.Ident:
		return t.Name
	case *ast.SelectorExpr:
		if x, ok := t.X.(*ast.Ident); ok {
			return x.Name + "." + t.Sel.Name
		}
	}
	return ""
}

// onlyReturn is the results of a function literal whose body is one return
// of n results; nil when e is no such literal.
func onlyReturn(e ast.Expr, n int) []ast.Expr {
	lit, ok := e.(*ast.FuncLit)
	if !ok || len(lit.Body.List) != 1 {
		return nil
	}
	ret, ok := lit.Body.List[0].(*ast.ReturnStmt)
	if !ok || len(ret.Results) != n {
		return nil
	}
	return ret.Results
}

// returnedCall is the ec method a one-statement function literal returns the
// result of.
func returnedCall(e ast.Expr) (string, bool) {
	r := onlyReturn(e, 1)
	if r == nil {
		return "", false
	}
	name := ecCall(r[0])
	return name, name != ""
}

// returnedObjField is what a resolver literal `return obj.F, nil` or
// `return obj.M(), nil` reads: "F", or "M()" for a method without
// arguments.
func returnedObjField(e ast.Expr) (string, bool) {
	r := onlyReturn(e, 2)
	if r == nil || !isIdent(r[1], "nil") {
		return "", false
	}
	value, call := r[0], ""
	if c, ok := value.(*ast.CallExpr); ok && len(c.Args) == 0 {
		value, call = c.Fun, "()"
	}
	sel, ok := value.(*ast.SelectorExpr)
	if !ok || !isIdent(sel.X, "obj") {
		return "", false
	}
	return sel.Sel.Name + call, true
}

// scalarContext reports whether a fieldContext method is a scalar field's
// (graphql.NewScalarFieldContext: no child fields).
func scalarContext(fn *ast.FuncDecl) bool {
	if fn == nil || len(fn.Body.List) != 1 {
		return false
	}
	ret, ok := fn.Body.List[0].(*ast.ReturnStmt)
	if !ok || len(ret.Results) != 1 {
		return false
	}
	call, ok := ret.Results[0].(*ast.CallExpr)
	return ok && isSel(call.Fun, "graphql", "NewScalarFieldContext")
}

// neverNull are gqlgen's scalar marshallers that answer a value for every
// input.
var neverNull = map[string]bool{
	"MarshalString": true, "MarshalID": true, "MarshalInt": true, "MarshalInt32": true,
	"MarshalInt64": true, "MarshalBoolean": true, "MarshalFloat": true,
}

// nullGuard reads a marshaller: the condition on its value ($) under which it
// writes a value without reporting anything ("" when always), ok false when
// it is not one of the shapes gqlgen writes for scalars and enums:
//
//   - marshalO…: a nil v is a null, without an error: always direct;
//   - marshalN… starting with `if v == nil { …error… }`: direct when v != nil;
//   - marshalN… with `res := graphql.MarshalTime(v)` or gqlexec.MarshalTime
//     (the schema's Time, gqlgen.yml): direct when !v.IsZero();
//   - marshalN… with another graphql.Marshal… that never answers null, or
//     returning v itself (an enum that marshals itself): always direct.
func nullGuard(fn *ast.FuncDecl) (string, bool) {
	if fn == nil {
		return "", false
	}
	name := fn.Name.Name
	body := fn.Body.List
	reports := false
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		if c, ok := n.(*ast.CallExpr); ok {
			if s, ok := c.Fun.(*ast.SelectorExpr); ok && (strings.Contains(s.Sel.Name, "Error") || s.Sel.Name == "Recover") {
				reports = true
			}
		}
		return true
	})
	switch {
	case strings.HasPrefix(name, "marshalO"):
		if reports {
			return "", false
		}
		return "", true
	case !strings.HasPrefix(name, "marshalN"):
		return "", false
	}
	guards := []string{}
	rest := body
	if len(rest) > 0 {
		if is, ok := rest[0].(*ast.IfStmt); ok && isNilCheck(is.Cond) {
			guards = append(guards, "$ != nil")
			rest = rest[1:]
		}
	}
	for _, st := range rest {
		switch s := st.(type) {
		case *ast.AssignStmt:
			if len(s.Rhs) != 1 {
				continue
			}
			if c, ok := s.Rhs[0].(*ast.CallExpr); ok {
				if sel, ok := c.Fun.(*ast.SelectorExpr); ok && (isIdent(sel.X, "graphql") || isIdent(sel.X, "gqlexec")) {
					switch {
					case sel.Sel.Name == "MarshalTime" && len(guards) == 0:
						guards = append(guards, "!$.IsZero()")
					case neverNull[sel.Sel.Name]:
					default:
						return "", false
					}
				} else {
					return "", false
				}
			}
		case *ast.ReturnStmt:
			if len(s.Results) != 1 {
				return "", false
			}
			switch r := s.Results[0].(type) {
			case *ast.Ident:
				if r.Name != "res" && r.Name != "v" {
					return "", false
				}
			default:
				return "", false
			}
		case *ast.IfStmt, *ast.ExprStmt:
			// the null branch (`if res == graphql.Null { …error… }`)
		default:
			return "", false
		}
	}
	return strings.Join(guards, " && "), true
}

func isNilCheck(e ast.Expr) bool {
	b, ok := e.(*ast.BinaryExpr)
	return ok && b.Op == token.EQL && isIdent(b.X, "v") && isIdent(b.Y, "nil")
}
