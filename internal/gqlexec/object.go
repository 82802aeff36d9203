package gqlexec

import (
	"context"
	"io"
	"sync"
	"sync/atomic"

	"github.com/99designs/gqlgen/graphql"
)

// Object is an object's marshaller and the field set its values go in,
// allocated together (NewObject): gqlgen made the set, its values and the
// object's marshaller apart, three allocations for every object written.
type Object struct {
	fields []graphql.CollectedField
	set    graphql.FieldSet
}

// MarshalGQL writes the object (WriteObject).
func (o *Object) MarshalGQL(w io.Writer) { WriteObject(w, o.fields, &o.set) }

// Objects with room for their values, by size class.
type (
	object2 struct {
		Object
		values [2]graphql.Marshaler
	}
	object4 struct {
		Object
		values [4]graphql.Marshaler
	}
	object8 struct {
		Object
		values [8]graphql.Marshaler
	}
	object16 struct {
		Object
		values [16]graphql.Marshaler
	}
)

// NewObject returns the marshaller of an object of fields and the field set
// to fill (its Values, one for each field): one allocation up to 16 fields.
// Only the set's Values, Invalids and a ConcurrentFields' dispatch are for
// use: the set is not graphql.NewFieldSet's, and does not marshal itself.
func NewObject(fields []graphql.CollectedField) (graphql.Marshaler, *graphql.FieldSet) {
	var o *Object
	switch n := len(fields); {
	case n <= 2:
		a := &object2{}
		a.set.Values, o = a.values[:n], &a.Object
	case n <= 4:
		a := &object4{}
		a.set.Values, o = a.values[:n], &a.Object
	case n <= 8:
		a := &object8{}
		a.set.Values, o = a.values[:n], &a.Object
	case n <= 16:
		a := &object16{}
		a.set.Values, o = a.values[:n], &a.Object
	default:
		o = &Object{}
		o.set.Values = make([]graphql.Marshaler, n)
	}
	o.fields = fields
	return o, &o.set
}

// WriteObject writes an object's fields as JSON — what graphql.FieldSet's
// MarshalGQL writes — without copying every field and building a map for
// each object. Fields are GraphQL names: their keys need no escaping.
func WriteObject(w io.Writer, fields []graphql.CollectedField, set *graphql.FieldSet) {
	_, _ = io.WriteString(w, "{")
	first := true
	var seen map[string]bool // for long selections; shorter ones are scanned
	if len(fields) > maxScannedFields {
		seen = make(map[string]bool, len(fields))
	}
	for i := range fields {
		alias := fields[i].Alias
		if seen != nil {
			if seen[alias] {
				continue
			}
			seen[alias] = true
		} else if written(fields[:i], alias) {
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
		set.Values[i].MarshalGQL(w)
	}
	_, _ = io.WriteString(w, "}")
}

// maxScannedFields is the most fields whose aliases an object's writer
// compares with the ones before (at most 496 comparisons of short strings,
// cheaper than filling a map for every object written: a 23-field object's
// map was 4% of a wide read's CPU); longer selections are deduplicated
// through a map.
const maxScannedFields = 32

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

// MarshalElement writes element i into ret; false when it panicked (the
// panic is the element's error, and the list is null), as in gqlgen.
func MarshalElement(ctx context.Context, ret graphql.Array, i int, marshal func(ctx context.Context, i int) graphql.Marshaler) (ok bool) {
	defer func() {
		if r := recover(); r != nil {
			graphql.AddError(ctx, graphql.Recover(ctx, r))
			ok = false
		}
	}()
	ret[i] = marshal(ctx, i)
	return true
}

// MarshalInOrder writes the elements of ret, marshal(ctx, i) each, one
// after another in this goroutine; false when one panicked. The elements
// share one field context, its index moved on: each element is complete
// when marshal returns (nothing of it waits elsewhere), and an error takes
// its path at once. The field context, with its index, is one allocation.
func MarshalInOrder(ctx context.Context, ret graphql.Array, marshal func(ctx context.Context, i int) graphql.Marshaler) bool {
	if len(ret) == 0 {
		return true
	}
	e := &element{}
	e.fc.Index = &e.index
	childCtx := graphql.WithFieldContext(ctx, &e.fc)
	for i := range ret {
		e.index = i
		if !MarshalElement(childCtx, ret, i, marshal) {
			return false
		}
	}
	return true
}

// MarshalConcurrently writes the elements of ret, marshal(ctx, i) each, all
// at once (an element may wait on a loader batch the next one fills), each
// under a field context of its own holding its index, as gqlgen's
// graphql.MarshalSliceConcurrently does; false when one panicked. The first
// element runs in this goroutine, which would only wait otherwise, the
// others on workers: a relationship list of two elements hands one over,
// not two. The elements' field contexts come in one allocation, and the
// jobs share one function: per element, only its context is made.
func MarshalConcurrently(ctx context.Context, ret graphql.Array, marshal func(ctx context.Context, i int) graphql.Marshaler, workers *Workers) bool {
	if len(ret) == 0 {
		return true
	}
	l := &elementList{ret: ret, marshal: marshal, elems: make([]element, len(ret))}
	l.wg.Add(len(ret))
	for i := range l.elems {
		e := &l.elems[i]
		e.index, e.fc.Index = i, &e.index
		e.ctx = graphql.WithFieldContext(ctx, &e.fc)
	}
	run := l.run
	for i := 1; i < len(l.elems); i++ {
		workers.RunAt(run, i)
	}
	run(0)
	l.wg.Wait()
	return !l.failed.Load()
}

// elementList is one list marshalled by MarshalConcurrently.
type elementList struct {
	wg      sync.WaitGroup
	failed  atomic.Bool
	ret     graphql.Array
	marshal func(ctx context.Context, i int) graphql.Marshaler
	elems   []element
}

// element is an element's field context, its index and its context.
type element struct {
	fc    graphql.FieldContext
	index int
	ctx   context.Context
}

func (l *elementList) run(i int) {
	defer l.wg.Done()
	if !MarshalElement(l.elems[i].ctx, l.ret, i, l.marshal) {
		l.failed.Store(true)
	}
}
