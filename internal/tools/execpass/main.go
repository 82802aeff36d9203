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
//     together; the lists call graph.marshalElements instead, which does so on
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
			fmt.Sprintf("marshalElements(ec, ctx, sel, %q, v, ", typeName)})
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
