package main

// The texts of gqlgen's output the pass replaces where it finds them,
// each checked for how often it must occur (run).

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
