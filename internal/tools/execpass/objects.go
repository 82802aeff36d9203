package main

// Object marshallers and lists of objects, and the syntax helpers the
// pass shares.

import (
	"go/ast"
	"go/token"
	"strings"
)

// objectList recognises gqlgen's marshaller of a list of objects of one
// type, and returns its call of graphql.MarshalSliceConcurrently and the
// type's name:
//
//	ret := graphql.MarshalSliceConcurrently(ctx, len(v), 0, false, func(ctx context.Context, i int) graphql.Marshaler {
//		…
//		return ec.marshalNT2ᚖ…(ctx, sel, v[i]) // which returns ec._T(ctx, sel, v), T's object marshaller
//	})
func objectList(fn *ast.FuncDecl, methods map[string]*ast.FuncDecl) (*ast.CallExpr, string, bool) {
	if !strings.HasPrefix(fn.Name.Name, "marshal") || len(fn.Body.List) == 0 {
		return nil, "", false
	}
	as, ok := fn.Body.List[0].(*ast.AssignStmt)
	if !ok || len(as.Rhs) != 1 {
		return nil, "", false
	}
	call, ok := as.Rhs[0].(*ast.CallExpr)
	if !ok || !isSel(call.Fun, "graphql", "MarshalSliceConcurrently") || len(call.Args) != 5 {
		return nil, "", false
	}
	lit, ok := call.Args[4].(*ast.FuncLit)
	if !ok || len(lit.Body.List) == 0 {
		return nil, "", false
	}
	ret, ok := lit.Body.List[len(lit.Body.List)-1].(*ast.ReturnStmt)
	if !ok || len(ret.Results) != 1 {
		return nil, "", false
	}
	elem := ecCall(ret.Results[0])
	if elem == "" || methods[elem] == nil {
		return nil, "", false
	}
	// The element marshaller ends by returning T's object marshaller.
	body := methods[elem].Body.List
	last, ok := body[len(body)-1].(*ast.ReturnStmt)
	if !ok || len(last.Results) != 1 {
		return nil, "", false
	}
	obj := ecCall(last.Results[0])
	if !strings.HasPrefix(obj, "_") || methods[obj] == nil || !isObjectMarshaller(methods[obj]) {
		return nil, "", false
	}
	return call, strings.TrimPrefix(obj, "_"), true
}

// collectCall is the edit of an object marshaller's first statement,
// `fields := graphql.CollectFields(ec.OperationContext, sel, tImplementors)`,
// that collects the fields through the execution context's cache.
func collectCall(fn *ast.FuncDecl, off func(token.Pos) int) (edit, bool) {
	call := fn.Body.List[0].(*ast.AssignStmt).Rhs[0].(*ast.CallExpr)
	if len(call.Args) != 3 || !isSel(call.Args[0], "ec", "OperationContext") || !isIdent(call.Args[1], "sel") {
		return edit{}, false
	}
	implementors, ok := call.Args[2].(*ast.Ident)
	if !ok {
		return edit{}, false
	}
	return edit{off(call.Pos()), off(call.End()), "ec.collected.fields(ec.OperationContext, sel, " + implementors.Name + ")"}, true
}

// ecCall is the name of the ec method e calls, "" when e is no such call.
func ecCall(e ast.Expr) string {
	c, ok := e.(*ast.CallExpr)
	if !ok {
		return ""
	}
	s, ok := c.Fun.(*ast.SelectorExpr)
	if !ok || !isIdent(s.X, "ec") {
		return ""
	}
	return s.Sel.Name
}

// isObjectMarshaller reports whether fn is gqlgen's marshaller of an object
// type: it starts by collecting its fields against the type's implementors.
func isObjectMarshaller(fn *ast.FuncDecl) bool {
	if len(fn.Body.List) == 0 {
		return false
	}
	as, ok := fn.Body.List[0].(*ast.AssignStmt)
	if !ok || len(as.Rhs) != 1 {
		return false
	}
	c, ok := as.Rhs[0].(*ast.CallExpr)
	return ok && isSel(c.Fun, "graphql", "CollectFields")
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}

func isSel(e ast.Expr, x, name string) bool {
	s, ok := e.(*ast.SelectorExpr)
	return ok && isIdent(s.X, x) && s.Sel.Name == name
}
