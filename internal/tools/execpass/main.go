// Command execpass rewrites gqlgen's generated executor (graph/generated.go)
// in place, after `gqlgen generate`, where the generic code costs the most
// on nested reads without changing an answer:
//
//   - Plain leaves. A scalar or enum field read straight from a struct field
//     or a method without arguments (no resolver, no context, no directive)
//     is written by its marshaller directly, without a FieldContext, a child
//     context and the field middleware chain: most fields of a response are
//     such leaves, and they cannot fail. Where the marshaller would report a
//     null (a nil pointer or map, a zero time in a non-null field), the field
//     keeps gqlgen's path, so the error and its path are what they were. A
//     method that panicked would be recovered by the enclosing list element
//     or operation rather than by the field. The server's only field
//     middleware, the level dispatch, leaves these fields untracked anyway;
//     a field middleware that must see every field would need this pass
//     removed.
//     A String, ID, Int, Time or enum among them read from a struct field
//     is written from the field's address (graph.stringAt, gqlexec.StringAt
//     and the others), a Boolean by one marshaller per value: a pointer
//     makes a Marshaler without allocating, where gqlgen's marshallers made
//     a closure for every value of a response.
//   - Lists of objects. gqlgen marshals every element of a list in a new
//     goroutine, so that the elements' resolvers fill their loader batches
//     together; the lists call graph.marshalList instead, which does so on
//     reused goroutines, and only when an element can wait on something
//     (its selection has a resolver or a subtree): otherwise it marshals
//     the elements one after another.
//   - Objects. gqlgen's FieldSet writes an object by copying each field to
//     the heap and keeping a map of the keys written, and an object's set,
//     its values and its marshaller were three allocations; object
//     marshallers take their set and marshaller from graph.newObject
//     instead, one allocation, which writes the same JSON from the
//     collected fields.
//   - The deferred group. Every object's marshaller computed its response
//     path (an allocation per object) for @defer even when nothing was
//     deferred; the group is now processed only when a field was deferred,
//     and its field set and views are made only then (graph.deferredSets).
//   - Collected fields. graphql.CollectFields builds its cache key by
//     reflection and hashing for every object written; object marshallers
//     call ec.collected.fields instead, whose per-operation cache (a field the
//     pass adds to executionContext) is keyed by addresses (graph/collect.go).
//   - Enums. gqlgen writes an enum value through graphql.MarshalString, a
//     closure made for every value written; enum marshallers call
//     graph.marshalEnum instead, which hands out one made per value of the
//     schema's enums.
//   - Concurrent fields. gqlgen's FieldSet.Dispatch runs an object's second
//     and later concurrent fields (resolvers) each on a new goroutine, whose
//     stack grows by copying before it can resolve anything — a task with
//     its relationships and file impacts paid it once per task. Object
//     marshallers gather those fields in a graph.concurrentFields instead,
//     whose dispatch runs them on the reused workers of the lists.
//   - Response buffers. gqlgen writes a query's or a mutation's response
//     into a buffer grown by doubling from empty, which allocated and
//     copied about twice the response; the buffer is made at about the
//     size of the operation's last response instead (graph.responseBuffer).
//   - Float lists. gqlgen unmarshals a [Float!] argument element by element,
//     each boxed again and given a path context of its own; the server
//     hands a list of numbers over as a []float64 already
//     (internal/server/floats.go), which the unmarshallers now take as it
//     is (copied). Anything else — a list from a literal, one with a value
//     that is not a number — goes gqlgen's way, with its errors and paths.
//
// `make generate` runs it between gqlgen and fieldmodes; `make verify`
// checks that the committed output is what the pass makes.
package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"slices"
	"sort"
	"strings"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: execpass graph/generated.go")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "execpass:", err)
		os.Exit(1)
	}
}

// edit replaces src[from:to] with text.
type edit struct {
	from, to int
	text     string
}

func run(path string) error {
	src, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, 0)
	if err != nil {
		return err
	}
	methods := map[string]*ast.FuncDecl{}
	for _, d := range f.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv != nil {
			methods[fn.Name.Name] = fn
		}
	}
	off := func(p token.Pos) int { return fset.Position(p).Offset }
	var edits []edit
	leaves, addressed := 0, 0
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Recv == nil {
			continue
		}
		l, ok := plainLeaf(fn, methods)
		if !ok {
			continue
		}
		leaves++
		ret := fn.Body.List[0]
		fast := fmt.Sprintf("return ec.%s(ctx, field.Selections, obj.%s)", l.marshaller, l.field)
		if helper, form := leafHelper(methods[l.marshaller]); helper != "" && !strings.HasSuffix(l.field, "()") {
			addressed++
			fast = fmt.Sprintf("return ec.%s("+form+")", helper, l.field)
		}
		text := fast
		if l.guard != "" {
			original := string(src[off(ret.Pos()):off(ret.End())])
			text = fmt.Sprintf("if %s {\n%s\n}\n%s", strings.ReplaceAll(l.guard, "$", "obj."+l.field), fast, original)
		}
		edits = append(edits, edit{off(ret.Pos()), off(ret.End()), text})
	}
	for _, name := range leafMarshallers {
		if fn := methods[name]; fn != nil {
			if helper, _ := leafHelper(fn); helper == "" {
				return fmt.Errorf("%s does not marshal its value as the pass expects: gqlgen's output changed shape", name)
			}
		}
	}
	lists := 0
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Recv == nil {
			continue
		}
		call, typeName, ok := objectList(fn, methods)
		if !ok {
			continue
		}
		lists++
		edits = append(edits, edit{off(call.Pos()), off(call.Args[4].Pos()),
			fmt.Sprintf("ec.marshalList(ctx, sel, %q, len(v), ", typeName)})
	}
	objects, collects := 0, 0
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Recv == nil || !isObjectMarshaller(fn) {
			continue
		}
		if e, ok := collectCall(fn, off); ok {
			collects++
			edits = append(edits, e)
		}
		ret, ok := fn.Body.List[len(fn.Body.List)-1].(*ast.ReturnStmt)
		if !ok || len(ret.Results) != 1 || !isIdent(ret.Results[0], "out") {
			continue
		}
		objects++
		edits = append(edits, edit{off(ret.Pos()), off(ret.End()), "return objectOut"})
	}
	deferred := replaceAll(src, deferredGroupText, "\tif len(deferLabelToView) > 0 {\n"+deferredGroupText+"\t}\n")
	deferredSets := replaceAll(src, deferredSetsText, "\tdeferredFieldSet, deferLabelToView := deferredSets(fields)\n")
	state := replaceAll(src, executionContextText, executionContextText[:len(executionContextText)-2]+
		"\tcollected collected // the fields of each object selection (graph/collect.go)\n}\n")
	enums := append(replaceAll(src, "graphql.MarshalString(string(v))", "marshalEnum(string(v))"),
		replaceAll(src, "graphql.MarshalString(string(*v))", "marshalEnum(string(*v))")...)
	fieldSets := replaceAll(src, fieldSetText, "\tobjectOut, out := newObject(fields)\n\tvar concurrent concurrentFields\n")
	adds := replaceAll(src, concurrentlyText, "concurrent.add(i, ")
	dispatches := replaceAll(src, dispatchText, "\tconcurrent.dispatch(ctx, out)\n")
	buffers := append(replaceAll(src, queryBufferText, queryBufferFast), replaceAll(src, mutationBufferText, mutationBufferFast)...)
	if len(buffers) != 2 {
		return fmt.Errorf("found %d of the query's and the mutation's response buffers, not 2: gqlgen's output changed shape", len(buffers))
	}
	edits = append(edits, buffers...)
	floatLists := replaceAll(src, floatListText, floatListFast+floatListText)
	if n := bytes.Count(src, []byte(floatListFuncs)); n == 0 || n != len(floatLists) {
		return fmt.Errorf("found %d [Float!] unmarshallers and %d that start as the pass expects: gqlgen's output changed shape",
			n, len(floatLists))
	}
	edits = append(edits, floatLists...)
	edits = append(append(append(append(edits, deferred...), deferredSets...), state...), enums...)
	edits = append(append(append(edits, fieldSets...), adds...), dispatches...)
	if leaves == 0 || addressed == 0 || lists == 0 || objects == 0 || len(deferred) == 0 || collects == 0 || len(deferredSets) == 0 || len(state) != 1 ||
		len(enums) == 0 || len(adds) == 0 || len(dispatches) == 0 || len(dispatches) != len(fieldSets) || objects != len(fieldSets) ||
		bytes.Count(src, []byte(".Dispatch(")) != len(dispatches) ||
		bytes.Count(src, []byte("out.Concurrently(")) != len(adds)+bytes.Count(src, []byte("out.Concurrently() call")) {
		return fmt.Errorf("found %d plain leaves (%d from their address), %d object lists, %d objects, %d deferred groups, %d fields collected "+
			"for %d deferred sets, %d execution contexts, %d enum marshallers, %d field sets, %d concurrent fields and "+
			"%d dispatches: gqlgen's output changed shape",
			leaves, addressed, lists, objects, len(deferred), collects, len(deferredSets), len(state), len(enums), len(fieldSets),
			len(adds), len(dispatches))
	}
	sort.Slice(edits, func(i, j int) bool { return edits[i].from < edits[j].from })
	var out bytes.Buffer
	at := 0
	for _, e := range edits {
		if e.from < at {
			return fmt.Errorf("overlapping edits at offset %d", e.from)
		}
		out.Write(src[at:e.from])
		out.WriteString(e.text)
		at = e.to
	}
	out.Write(src[at:])
	formatted, err := format.Source(out.Bytes())
	if err != nil {
		return err
	}
	return os.WriteFile(path, formatted, 0o644)
}

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
		if star, ok := arg.(*ast.StarExpr); ok == optional && ok {
			arg = star.X
		} else if ok != optional {
			return "", ""
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

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}

func isSel(e ast.Expr, x, name string) bool {
	s, ok := e.(*ast.SelectorExpr)
	return ok && isIdent(s.X, x) && s.Sel.Name == name
}

// deferredGroupText is how every object marshaller of gqlgen ends.
const deferredGroupText = `	atomic.AddInt32(&ec.Deferred, int32(min(len(deferLabelToView), math.MaxInt32)))

	ec.ProcessDeferredGroup(graphql.DeferredGroup{
		Defers:   deferLabelToView,
		Path:     graphql.GetPath(ctx),
		FieldSet: deferredFieldSet,
		Context:  ctx,
	})
`

// deferredSetsText is how every object marshaller makes its deferred
// field set and views, after collecting its fields.
const deferredSetsText = `	deferredFieldSet := graphql.NewFieldSet(nil)
	deferLabelToView := make(map[string]*graphql.FieldSetView)
`

// fieldSetText is how every object marshaller makes its field set;
// concurrentlyText how it adds a concurrent field to it (the resolvers'
// fields, and the root fields through the root middleware), and
// dispatchText how it resolves them. Every Dispatch of the file must be an
// object marshaller's, and every concurrent field of its set added so: the
// pass fails otherwise.
const (
	fieldSetText     = "\tout := graphql.NewFieldSet(fields)\n"
	concurrentlyText = "out.Concurrently(i, "
	dispatchText     = "\tout.Dispatch(ctx)\n"
)

// floatListText is how gqlgen's unmarshallers of [Float!] start to coerce
// the list: every element boxed again (graphql.CoerceList) and unmarshalled
// under a path context of its own, 768 of each for an embedding. The server
// hands such a list over as a []float64 already (internal/server/floats.go),
// which the pass returns, copied (an empty list stays a list, not nil), before that. floatListFuncs counts those
// unmarshallers in the file: each must start so, or the pass fails.
const (
	floatListText = `	vSlice := graphql.CoerceList(v)
	var err error
	res := make([]float64, len(vSlice))
`
	floatListFast = `	if vector, ok := v.([]float64); ok {
		return append(make([]float64, 0, len(vector)), vector...), nil
	}
`
	floatListFuncs = "Float2ᚕfloat64ᚄ(ctx context.Context, v any) ([]float64, error) {\n"
)

// queryBufferText and mutationBufferText are how gqlgen's Exec writes a
// query's and a mutation's response: into a buffer grown from empty. The
// pass writes them into a buffer made at about the size of the
// operation's last response (graph.responseBuffer, gqlexec.ResponseSizes).
// Each must occur once, or the pass fails.
const (
	queryBufferText = `			var buf bytes.Buffer
			data.MarshalGQL(&buf)
			response.Data = buf.Bytes()
`
	queryBufferFast = `			buf := responseBuffer(opCtx)
			data.MarshalGQL(buf)
			response.Data = responseWritten(opCtx, buf)
`
	mutationBufferText = `			var buf bytes.Buffer
			data.MarshalGQL(&buf)

			return &graphql.Response{
				Data: buf.Bytes(),
			}
`
	mutationBufferFast = `			buf := responseBuffer(opCtx)
			data.MarshalGQL(buf)

			return &graphql.Response{
				Data: responseWritten(opCtx, buf),
			}
`
)

// executionContextText is gqlgen's executionContext type.
const executionContextText = `type executionContext struct {
	*graphql.ExecutionContextState[ResolverRoot, DirectiveRoot, ComplexityRoot]
}
`

// replaceAll replaces each occurrence of needle in src with text.
func replaceAll(src []byte, needle, text string) []edit {
	var edits []edit
	for at := 0; ; {
		i := bytes.Index(src[at:], []byte(needle))
		if i < 0 {
			return edits
		}
		from := at + i
		edits = append(edits, edit{from, from + len(needle), text})
		at = from + len(needle)
	}
}
