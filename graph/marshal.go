package graph

import (
	"context"
	"io"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// This file holds what internal/tools/execpass's rewrites of the generated
// executor call.

// concurrentOf is ConcurrentFields by type, then field.
var concurrentOf = func() map[string]map[string]bool {
	m := map[string]map[string]bool{}
	for k := range ConcurrentFields {
		t, f, _ := strings.Cut(k, ".")
		if m[t] == nil {
			m[t] = map[string]bool{}
		}
		m[t][f] = true
	}
	return m
}()

// marshalList marshals the n elements of a list of typeName objects
// selected by sel (internal/tools/execpass puts it where gqlgen's list
// marshallers called graphql.MarshalSliceConcurrently). Like gqlgen it
// marshals the elements concurrently, so that the elements' resolvers fill
// their loader batches together — on elementWorkers rather than on new
// goroutines; when sel selects only leaves that resolve inline, no element
// can wait on anything, and they are marshalled one after another in this
// goroutine. Paths, errors and a panic's recovery are gqlgen's.
func (ec *executionContext) marshalList(ctx context.Context, sel ast.SelectionSet, typeName string, n int,
	marshal func(ctx context.Context, i int) graphql.Marshaler,
) (ret graphql.Array) {
	ret = make(graphql.Array, n)
	if n <= 1 || inlineLeaves(sel, typeName) {
		// One after another, and nothing keeps an element's context (no
		// resolver runs; an error takes its path at once): the elements
		// share one field context, its index moved on.
		index := 0
		childCtx := graphql.WithFieldContext(ctx, &graphql.FieldContext{Index: &index})
		for i := range n {
			index = i
			if !marshalElement(childCtx, ret, i, marshal) {
				return nil
			}
		}
		return ret
	}
	var wg sync.WaitGroup
	var failed atomic.Bool
	wg.Add(n)
	// The elements' field contexts and indexes, allocated together.
	fcs, indexes := make([]graphql.FieldContext, n), make([]int, n)
	for i := range n {
		indexes[i], fcs[i].Index = i, &indexes[i]
		childCtx := graphql.WithFieldContext(ctx, &fcs[i])
		elementWorkers.run(func() {
			defer wg.Done()
			if !marshalElement(childCtx, ret, i, marshal) {
				failed.Store(true)
			}
		})
	}
	wg.Wait()
	if failed.Load() {
		return nil
	}
	return ret
}

// elementWorkers run the elements of lists marshalled concurrently.
var elementWorkers = &workers{idle: make(chan *worker, maxIdleWorkers)}

// maxIdleWorkers bounds the goroutines kept waiting for elements.
const maxIdleWorkers = 512

// workers run functions on goroutines that outlive them. The executor's
// frames are deep: a new goroutine's stack grows, by copying, several times
// before it can marshal one element, and the runtime spent more time on
// that than on the element. A worker's stack has grown already.
type workers struct{ idle chan *worker }

type worker struct{ job chan func() }

// run runs f on an idle worker, or on a new one: never waits for a worker,
// since an element may wait on a loader batch the next one fills.
func (p *workers) run(f func()) {
	select {
	case w := <-p.idle:
		w.job <- f
	default:
		w := &worker{job: make(chan func(), 1)}
		w.job <- f
		go p.serve(w)
	}
}

// workerBallast is stack every worker keeps in use below its jobs' frames.
// The garbage collector halves a goroutine's stack when less than a quarter
// of it is in use, as it is for a worker waiting for its next job: its stack
// grew for nothing, and grows again, by copying, on the next job. With the
// ballast in use, a worker keeps a stack of up to four times the ballast
// (32 KiB: the executor's frames of a nested element fit in it).
const workerBallast = 8 << 10

// serve runs w's jobs, above the ballast, until there is no room left among
// the idle workers.
func (p *workers) serve(w *worker) {
	var ballast [workerBallast]byte
	p.loop(w, &ballast)
}

// loop is serve's loop; it takes the ballast so that the ballast stays in
// serve's frame, under loop's.
//
//go:noinline
func (p *workers) loop(w *worker, _ *[workerBallast]byte) {
	for f := range w.job {
		f()
		select {
		case p.idle <- w:
		default:
			return
		}
	}
}

// marshalElement writes element i into ret; false when it panicked (the
// panic is the element's error, and the list is null), as in gqlgen.
func marshalElement(ctx context.Context, ret graphql.Array, i int, marshal func(ctx context.Context, i int) graphql.Marshaler) (ok bool) {
	defer func() {
		if r := recover(); r != nil {
			graphql.AddError(ctx, graphql.Recover(ctx, r))
			ok = false
		}
	}()
	ret[i] = marshal(ctx, i)
	return true
}

// inlineLeaves reports whether sel, on an object of typeName, selects only
// fields without selections of their own that the executor resolves inline
// (no resolver, no method taking a context); fragments are not looked into.
func inlineLeaves(sel ast.SelectionSet, typeName string) bool {
	concurrent := concurrentOf[typeName]
	for _, s := range sel {
		f, ok := s.(*ast.Field)
		if !ok || len(f.SelectionSet) > 0 || concurrent[f.Name] {
			return false
		}
	}
	return true
}

// objectJSON writes an object's fields as JSON — what graphql.FieldSet's
// MarshalGQL writes — without copying every field and building a map for
// each object. Fields are GraphQL names: their keys need no escaping.
type objectJSON struct {
	fields []graphql.CollectedField
	set    *graphql.FieldSet
}

func (o objectJSON) MarshalGQL(w io.Writer) {
	_, _ = io.WriteString(w, "{")
	first := true
	var seen map[string]bool // for long selections; short ones are scanned
	if len(o.fields) > 16 {
		seen = make(map[string]bool, len(o.fields))
	}
	for i := range o.fields {
		alias := o.fields[i].Alias
		if seen != nil {
			if seen[alias] {
				continue
			}
			seen[alias] = true
		} else if written(o.fields[:i], alias) {
			continue
		}
		if first {
			first = false
			_, _ = io.WriteString(w, `"`)
		} else {
			_, _ = io.WriteString(w, `,"`)
		}
		_, _ = io.WriteString(w, alias)
		_, _ = io.WriteString(w, `":`)
		o.set.Values[i].MarshalGQL(w)
	}
	_, _ = io.WriteString(w, "}")
}

// written reports whether a field of the same alias comes before (the first
// one is written, as graphql.FieldSet does).
func written(before []graphql.CollectedField, alias string) bool {
	for i := range before {
		if before[i].Alias == alias {
			return true
		}
	}
	return false
}

// enumMarshallers are graphql.MarshalString of every value of the schema's
// enums, made once: what marshalEnum hands out.
var enumMarshallers = func() map[string]graphql.Marshaler {
	m := map[string]graphql.Marshaler{}
	for _, def := range parsedSchema.Types {
		if def.Kind == ast.Enum {
			for _, v := range def.EnumValues {
				m[v.Name] = graphql.MarshalString(v.Name)
			}
		}
	}
	return m
}()

// marshalEnum is graphql.MarshalString(v) for an enum value v
// (internal/tools/execpass puts it in the enum marshallers): the schema's
// values share one marshaller each instead of a closure made for every
// value written; any other string (a value the schema does not know) is
// marshalled as gqlgen does.
func marshalEnum(v string) graphql.Marshaler {
	if m, ok := enumMarshallers[v]; ok {
		return m
	}
	return graphql.MarshalString(v)
}
