package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// generatedShapes is the file the pass reads: gqlShapes and, in gqlgen's
// words, a scalar leaf's function of each type the pass writes from the
// field (scalarLeaf) and the marshallers they call.
var generatedShapes = gqlShapes +
	scalarLeaf("title", "Title", "string", "marshalNString2string") +
	scalarLeaf("createdAt", "CreatedAt", "time.Time", "marshalNTime2timeᚐTime") +
	scalarLeaf("note", "Note", "*string", "marshalOString2ᚖstring") +
	scalarLeaf("count", "Count", "int", "marshalNInt2int") +
	scalarLeaf("done", "Done", "bool", "marshalNBoolean2bool") +
	scalarLeaf("closedAt", "ClosedAt", "*time.Time", "marshalOTime2ᚖtimeᚐTime") +
	scalarLeaf("status", "Status", "domain.Status", "marshalNStatus2domainᚐStatus") +
	scalarLeaf("state", "State", "*domain.Status", "marshalOStatus2ᚖdomainᚐStatus") +
	required("marshalNString2string", "string", "graphql.MarshalString") +
	required("marshalNID2string", "string", "graphql.MarshalID") +
	required("marshalNInt2int", "int", "graphql.MarshalInt") +
	required("marshalNBoolean2bool", "bool", "graphql.MarshalBoolean") +
	required("marshalNTime2timeᚐTime", "time.Time", "gqlexec.MarshalTime") +
	optional("marshalOString2ᚖstring", "string", "graphql.MarshalString") +
	optional("marshalOTime2ᚖtimeᚐTime", "time.Time", "gqlexec.MarshalTime")

// scalarLeaf is gqlgen's function, and field context, of T's field f read
// from obj.F, of Go type typ, written by marshaller.
func scalarLeaf(f, F, typ, marshaller string) string {
	return strings.NewReplacer("$f", f, "$F", F, "$typ", typ, "$m", marshaller).Replace(`
func (ec *executionContext) _T_$f(ctx context.Context, field graphql.CollectedField, obj *domain.T) (ret graphql.Marshaler) {
	return graphql.ResolveField(ctx, ec.OperationContext, field,
		func(ctx context.Context, field graphql.CollectedField) (*graphql.FieldContext, error) {
			return ec.fieldContext_T_$f(ctx, field)
		},
		func(ctx context.Context) (any, error) {
			return obj.$F, nil
		},
		nil,
		func(ctx context.Context, selections ast.SelectionSet, v $typ) graphql.Marshaler {
			return ec.$m(ctx, selections, v)
		},
		true, true)
}

func (ec *executionContext) fieldContext_T_$f(_ context.Context, field graphql.CollectedField) (fc *graphql.FieldContext, err error) {
	return graphql.NewScalarFieldContext("T", field, false, false, errors.New("no child fields"))
}
`)
}

// required is gqlgen's marshaller of a non-null scalar of Go type typ,
// written by call.
func required(name, typ, call string) string {
	return strings.NewReplacer("$name", name, "$typ", typ, "$call", call).Replace(`
func (ec *executionContext) $name(ctx context.Context, sel ast.SelectionSet, v $typ) graphql.Marshaler {
	_ = sel
	res := $call(v)
	if res == graphql.Null {
		if !graphql.HasFieldError(ctx, graphql.GetFieldContext(ctx)) {
			graphql.AddErrorf(ctx, "the requested element is null which the schema does not allow")
		}
	}
	return res
}
`)
}

// optional is gqlgen's marshaller of a nullable scalar of Go type typ,
// written by call.
func optional(name, typ, call string) string {
	return strings.NewReplacer("$name", name, "$typ", typ, "$call", call).Replace(`
func (ec *executionContext) $name(ctx context.Context, sel ast.SelectionSet, v *$typ) graphql.Marshaler {
	if v == nil {
		return graphql.Null
	}
	_ = sel
	_ = ctx
	res := $call(*v)
	return res
}
`)
}

// gqlShapes holds, in gqlgen's words, one field function of each shape
// the pass decides on, the marshallers they call, an object list and an
// object marshaller's deferred group.
const gqlShapes = `package graph

type executionContext struct {
	*graphql.ExecutionContextState[ResolverRoot, DirectiveRoot, ComplexityRoot]
}

func (e *executableSchema) Exec(ctx context.Context) graphql.ResponseHandler {
	opCtx := graphql.GetOperationContext(ctx)
	switch opCtx.Operation.Operation {
	case ast.Query:
		return func(ctx context.Context) *graphql.Response {
			var response graphql.Response
			var data graphql.Marshaler
			if true {
				data = ec._Query(ctx, opCtx.Operation.SelectionSet)
			}
			var buf bytes.Buffer
			data.MarshalGQL(&buf)
			response.Data = buf.Bytes()
			return &response
		}
	case ast.Mutation:
		return func(ctx context.Context) *graphql.Response {
			data := ec._Mutation(ctx, opCtx.Operation.SelectionSet)
			var buf bytes.Buffer
			data.MarshalGQL(&buf)

			return &graphql.Response{
				Data: buf.Bytes(),
			}
		}
	}
	return nil
}

func (ec *executionContext) _T_id(ctx context.Context, field graphql.CollectedField, obj *domain.T) (ret graphql.Marshaler) {
	return graphql.ResolveField(ctx, ec.OperationContext, field,
		func(ctx context.Context, field graphql.CollectedField) (*graphql.FieldContext, error) {
			return ec.fieldContext_T_id(ctx, field)
		},
		func(ctx context.Context) (any, error) {
			return obj.GlobalID(), nil
		},
		nil,
		func(ctx context.Context, selections ast.SelectionSet, v string) graphql.Marshaler {
			return ec.marshalNID2string(ctx, selections, v)
		},
		true, true)
}

func (ec *executionContext) _T_owner(ctx context.Context, field graphql.CollectedField, obj *domain.T) (ret graphql.Marshaler) {
	return graphql.ResolveField(ctx, ec.OperationContext, field,
		func(ctx context.Context, field graphql.CollectedField) (*graphql.FieldContext, error) {
			return ec.fieldContext_T_owner(ctx, field)
		},
		func(ctx context.Context) (any, error) {
			return obj.Owner, nil
		},
		nil,
		func(ctx context.Context, selections ast.SelectionSet, v *domain.U) graphql.Marshaler {
			return ec.marshalNU2ᚖdomainᚐU(ctx, selections, v)
		},
		true, true)
}

func (ec *executionContext) fieldContext_T_id(_ context.Context, field graphql.CollectedField) (fc *graphql.FieldContext, err error) {
	return graphql.NewScalarFieldContext("T", field, true, false, errors.New("no child fields"))
}

func (ec *executionContext) fieldContext_T_owner(_ context.Context, field graphql.CollectedField) (fc *graphql.FieldContext, err error) {
	fc = &graphql.FieldContext{Object: "T", Field: field}
	return fc, nil
}

func (ec *executionContext) marshalNStatus2domainᚐStatus(ctx context.Context, sel ast.SelectionSet, v domain.Status) graphql.Marshaler {
	_ = sel
	res := graphql.MarshalString(string(v))
	return res
}

func (ec *executionContext) marshalOStatus2ᚖdomainᚐStatus(ctx context.Context, sel ast.SelectionSet, v *domain.Status) graphql.Marshaler {
	if v == nil {
		return graphql.Null
	}
	res := graphql.MarshalString(string(*v))
	return res
}

func (ec *executionContext) marshalNU2ᚕᚖdomainᚐUᚄ(ctx context.Context, sel ast.SelectionSet, v []*domain.U) graphql.Marshaler {
	ret := graphql.MarshalSliceConcurrently(ctx, len(v), 0, false, func(ctx context.Context, i int) graphql.Marshaler {
		fc := graphql.GetFieldContext(ctx)
		fc.Result = &v[i]
		return ec.marshalNU2ᚖdomainᚐU(ctx, sel, v[i])
	})
	return ret
}

func (ec *executionContext) marshalNU2ᚖdomainᚐU(ctx context.Context, sel ast.SelectionSet, v *domain.U) graphql.Marshaler {
	if v == nil {
		return graphql.Null
	}
	return ec._U(ctx, sel, v)
}

func (ec *executionContext) _U(ctx context.Context, sel ast.SelectionSet, obj *domain.U) graphql.Marshaler {
	fields := graphql.CollectFields(ec.OperationContext, sel, uImplementors)
	out := graphql.NewFieldSet(fields)
	deferredFieldSet := graphql.NewFieldSet(nil)
	deferLabelToView := make(map[string]*graphql.FieldSetView)
	for i, field := range fields {
		switch field.Name {
		case "owner":
			innerFunc := func(ctx context.Context, fs *graphql.FieldSet) (res graphql.Marshaler) {
				return ec._T_owner(ctx, field, obj)
			}
			if field.IsDeferred() {
				// don't run the out.Concurrently() call below
				continue
			}
			out.Concurrently(i, func(ctx context.Context) graphql.Marshaler { return innerFunc(ctx, out) })
		}
	}
	out.Dispatch(ctx)
	atomic.AddInt32(&ec.Deferred, int32(min(len(deferLabelToView), math.MaxInt32)))

	ec.ProcessDeferredGroup(graphql.DeferredGroup{
		Defers:   deferLabelToView,
		Path:     graphql.GetPath(ctx),
		FieldSet: deferredFieldSet,
		Context:  ctx,
	})

	return out
}

func (ec *executionContext) unmarshalOFloat2ᚕfloat64ᚄ(ctx context.Context, v any) ([]float64, error) {
	if v == nil {
		return nil, nil
	}
	vSlice := graphql.CoerceList(v)
	var err error
	res := make([]float64, len(vSlice))
	for i := range vSlice {
		ctx := graphql.WithPathContext(ctx, graphql.NewPathWithIndex(i))
		res[i], err = ec.unmarshalNFloat2float64(ctx, vSlice[i])
		if err != nil {
			return nil, err
		}
	}
	return res, nil
}
`

func TestPass(t *testing.T) {
	path := filepath.Join(t.TempDir(), "generated.go")
	if err := os.WriteFile(path, []byte(generatedShapes), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(path); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := string(b)
	body := func(name string) string {
		i := strings.Index(out, "func (ec *executionContext) "+name+"(")
		if i < 0 {
			t.Fatalf("%s is gone", name)
		}
		j := strings.Index(out[i:], "\n}\n")
		return out[i : i+j]
	}
	for _, c := range []struct {
		fn   string
		want []string
		not  []string
	}{
		// A struct field of a String: written directly, from its address.
		{"_T_title", []string{"return ec.stringAt(&obj.Title)"}, []string{"ResolveField", "marshalNString2string"}},
		{"_T_note", []string{"return ec.optionalStringAt(obj.Note)"}, []string{"ResolveField", "marshalOString2ᚖstring"}},
		// A time: directly unless zero, which keeps gqlgen's path and its error.
		{"_T_createdAt", []string{"if !obj.CreatedAt.IsZero() {\n\t\treturn ec.timeAt(&obj.CreatedAt)\n\t}", "ResolveField"}, nil},
		// Ints from their address, booleans by value, nullable times from
		// their pointer.
		{"_T_count", []string{"return ec.intAt(&obj.Count)"}, []string{"ResolveField"}},
		{"_T_done", []string{"return ec.boolean(obj.Done)"}, []string{"ResolveField"}},
		{"_T_closedAt", []string{"return ec.optionalTimeAt(obj.ClosedAt)"}, []string{"ResolveField"}},
		// Enums (Go string types): from their address, as a *string.
		{"_T_status", []string{"return ec.stringAt((*string)(&obj.Status))"}, []string{"ResolveField"}},
		{"_T_state", []string{"return ec.optionalStringAt((*string)(obj.State))"}, []string{"ResolveField"}},
		// A method without arguments, of a never-null scalar: written
		// directly (its value, not an address: it is called once).
		{"_T_id", []string{"return ec.marshalNID2string(ctx, field.Selections, obj.GlobalID())"}, []string{"ResolveField"}},
		// An object: untouched.
		{"_T_owner", []string{"ResolveField"}, []string{"field.Selections"}},
		// A list of objects: marshalElements.
		{"marshalNU2ᚕᚖdomainᚐUᚄ", []string{`marshalElements(ec, ctx, sel, "U", v, func(`}, []string{"MarshalSliceConcurrently"}},
		// The deferred group: only when something is deferred; its sets made
		// then too. The fields come from the execution context's cache.
		{"_U", []string{"if len(deferLabelToView) > 0 {\n\t\tatomic.AddInt32", "return objectOut",
			"deferredFieldSet, deferLabelToView := deferredSets(fields)", "fields := ec.collected.fields(ec.OperationContext, sel, uImplementors)",
			// Its concurrent fields: resolved on the reused workers.
			"objectOut, out := newObject(fields)\n\tvar concurrent concurrentFields\n",
			"concurrent.add(i, func(ctx context.Context) graphql.Marshaler { return innerFunc(ctx, out) })",
			"concurrent.dispatch(ctx, out)"},
			[]string{"graphql.CollectFields", "make(map", "out.Dispatch", "out.Concurrently(i", "graphql.NewFieldSet(fields)"}},
		// Enums: one marshaller a value, made once.
		{"marshalNStatus2domainᚐStatus", []string{"res := marshalEnum(string(v))"}, []string{"graphql.MarshalString"}},
		{"marshalOStatus2ᚖdomainᚐStatus", []string{"res := marshalEnum(string(*v))"}, []string{"graphql.MarshalString"}},
		// A [Float!] the server made a []float64: taken as it is, copied;
		// any other list goes gqlgen's way.
		{"unmarshalOFloat2ᚕfloat64ᚄ", []string{"if vector, ok := v.([]float64); ok {\n\t\treturn append(make([]float64, 0, len(vector)), vector...), nil\n\t}\n\tvSlice := graphql.CoerceList(v)",
			"ec.unmarshalNFloat2float64(ctx, vSlice[i])"}, nil},
		// A plain string: gqlgen's.
		{"marshalNString2string", []string{"res := graphql.MarshalString(v)"}, nil},
	} {
		got := body(c.fn)
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s lacks %q:\n%s", c.fn, w, got)
			}
		}
		for _, n := range c.not {
			if strings.Contains(got, n) {
				t.Errorf("%s still has %q:\n%s", c.fn, n, got)
			}
		}
	}
	// A query's and a mutation's response: into a buffer sized by the
	// operation's last one.
	if strings.Count(out, "buf := responseBuffer(opCtx)\n\t\t\tdata.MarshalGQL(buf)\n") != 2 ||
		!strings.Contains(out, "response.Data = responseWritten(opCtx, buf)") || !strings.Contains(out, "Data: responseWritten(opCtx, buf),") ||
		strings.Contains(out, "var buf bytes.Buffer") {
		t.Errorf("the response buffers are not rewritten:\n%s", out[:1200])
	}
	if !strings.Contains(out, "\tcollected collected") {
		t.Errorf("executionContext lacks the collected fields' cache:\n%s", out[:200])
	}
	// A second pass finds nothing to do: the output of gqlgen is what it reads.
	if err := run(path); err == nil || !strings.Contains(err.Error(), "changed shape") {
		t.Errorf("a second pass: %v", err)
	}
}

// TestPassRefusesUnknownDispatch: a concurrent field or a dispatch the pass
// does not recognise would be lost or run twice if the rest were rewritten;
// the pass fails instead.
func TestPassRefusesUnknownDispatch(t *testing.T) {
	for name, src := range map[string]string{
		"another field index":       strings.Replace(generatedShapes, "out.Concurrently(i, ", "out.Concurrently(i+0, ", 1),
		"another dispatch":          strings.Replace(generatedShapes, "\tout.Dispatch(ctx)\n", "\tout.Dispatch(ctx)\n\tfs.Dispatch(ctx)\n", 1),
		"another float list":        strings.Replace(generatedShapes, "\tvar err error\n\tres := make([]float64", "\tres := make([]float64", 1),
		"another string marshaller": strings.Replace(generatedShapes, "res := graphql.MarshalString(v)", "res := graphql.MarshalString(strings.TrimSpace(v))", 1),
		"another response buffer":   strings.Replace(generatedShapes, "\t\t\tdata.MarshalGQL(&buf)\n\t\t\tresponse.Data", "\t\t\tdata.MarshalGQL(&buf)\n\n\t\t\tresponse.Data", 1),
		"another int marshaller":    strings.Replace(generatedShapes, "res := graphql.MarshalInt(v)", "res := graphql.MarshalInt(v + 1)", 1),
		"another time marshaller":   strings.Replace(generatedShapes, "res := gqlexec.MarshalTime(*v)", "res := graphql.MarshalTime(*v)", 1),
		"another ID marshaller":     strings.Replace(generatedShapes, "res := graphql.MarshalID(v)", "res := graphql.MarshalID(v + \"\")", 1),
	} {
		path := filepath.Join(t.TempDir(), "generated.go")
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := run(path); err == nil || !strings.Contains(err.Error(), "changed shape") {
			t.Errorf("%s: %v", name, err)
		}
	}
}
