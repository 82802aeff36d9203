package server

import (
	"context"
	"reflect"
	"strings"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// LevelTracker is what the level dispatch tells about a request's work: the
// request's loaders close their batches when the promised work is all done
// or waiting on them (internal/loader's Tracker).
type LevelTracker interface {
	Promise(n int)
	Done()
	Abandon()
	Abandoned() bool
	// Closed: batches closed by quiescence, and by their safety timer.
	Closed() (quiescent, timed int64)
	// Waits: how many times a resolver waited on a fetch (a batch's, or a Read's).
	Waits() int64
}

// levelDispatch closes the loaders' batches of a query, a mutation or a
// subscription's event level by level, the moment a level's last key is in,
// rather than after an idle window. It promises to the request's tracker
// each field the executor is about to start, and counts it done when its
// resolver returns.
//
// It follows gqlgen's order of work within an object: the inline fields one
// after another, each with its whole subtree, then the concurrent fields
// (ConcurrentFields) all at once. A field is promised only when nothing but
// the scheduler stands between it and its start: an object's first inline
// field when the object is returned, the next one when the previous one's
// subtree is complete, the concurrent ones when the last inline one's is.
// Promising a field that waits behind a sibling's subtree would keep the
// count above zero while that subtree waits on a batch: no batch would
// close. Inline leaves are not counted at all (untracked): the object's
// goroutine runs them between the tracked fields, and they never wait.
type levelDispatch struct {
	track      func(ctx context.Context) LevelTracker
	schema     *ast.Schema
	concurrent map[typeField]bool
	// satisfies: per object type, the type conditions its fields answer
	// (itself, its interfaces, its unions), as the executor collects them.
	satisfies map[string][]string
	metrics   *metrics
}

func newLevelDispatch(track func(ctx context.Context) LevelTracker, schema *ast.Schema, concurrent map[string]bool, m *metrics) *levelDispatch {
	d := &levelDispatch{track: track, schema: schema, concurrent: map[typeField]bool{}, satisfies: map[string][]string{}, metrics: m}
	for k := range concurrent {
		if t, f, ok := strings.Cut(k, "."); ok {
			d.concurrent[typeField{t, f}] = true
		}
	}
	for name, def := range schema.Types {
		if def.Kind != ast.Object {
			continue
		}
		conds := append([]string{name}, def.Interfaces...)
		for uname, u := range schema.Types {
			if u.Kind == ast.Union && contains(u.Types, name) {
				conds = append(conds, uname)
			}
		}
		d.satisfies[name] = conds
	}
	return d
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

var (
	_ graphql.HandlerExtension    = (*levelDispatch)(nil)
	_ graphql.ResponseInterceptor = (*levelDispatch)(nil)
	_ graphql.FieldInterceptor    = (*levelDispatch)(nil)
)

func (*levelDispatch) ExtensionName() string                   { return "LevelDispatch" }
func (*levelDispatch) Validate(graphql.ExecutableSchema) error { return nil }

// typeField names a field of an object type.
type typeField struct{ typeName, field string }

// levels is one operation's bookkeeping, under mu.
type levels struct {
	oc      *graphql.OperationContext
	tracker LevelTracker
	// event: a subscription event's selections, whose object is the root
	// (eventRoot); nil for a query or mutation.
	event ast.SelectionSet
	mu    sync.Mutex
	// shapes: the fields counted per selection and type, a handful per
	// operation, scanned (a map hashed its key for every list and object).
	shapes  []countedShape
	objects map[objectKey]*object
}

// fieldCounts is how an object of a type with a selection set resolves: its
// inline and concurrent fields.
type fieldCounts struct{ inline, concurrent int }

// none reports whether an object so counted has no field to resolve.
func (c fieldCounts) none() bool { return c.inline+c.concurrent == 0 }

type fieldsKey struct {
	sel      *ast.Selection
	typeName string
}

type countedShape struct {
	key    fieldsKey
	counts fieldCounts
}

// objectKey names an object being resolved by what its fields see as their
// parent: the field that returned it, and its index when in a list.
type objectKey struct {
	field *graphql.FieldContext // nil: the operation's root
	index int                   // -1: not a list element
}

// object is an object whose fields are not all complete.
type object struct {
	parent        *subtree // the field that returned it (nil: the root)
	inlineLeft    int      // inline fields not promised yet
	concurrent    int      // concurrent fields, promised after the inline ones
	open          int      // fields not complete (with their subtrees)
	concurrentDue bool     // the concurrent fields have been promised
}

// subtree is a field whose returned objects are not all complete.
type subtree struct {
	of     *object
	inline bool
	open   int
	single object // the object, when the field returns one
}

type levelsKey struct{}

func (d *levelDispatch) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	if !graphql.HasOperationContext(ctx) {
		return next(ctx)
	}
	oc := graphql.GetOperationContext(ctx)
	if oc.Operation == nil || strings.Contains(oc.RawQuery, "@defer") {
		return next(ctx)
	}
	var root *ast.Definition
	var event ast.SelectionSet
	switch oc.Operation.Operation {
	case ast.Query:
		root = d.schema.Query
	case ast.Mutation:
		root = d.schema.Mutation
	case ast.Subscription:
		// Each event is a response of its own, with loaders of its own
		// (graphql.go): its root is the event, an object of the stream
		// field's type, opened at its first tracked field (eventRoot), when
		// its concrete type is known.
		if d.schema.Subscription == nil {
			return next(ctx)
		}
		fields := graphql.CollectFields(oc, oc.Operation.SelectionSet, []string{d.schema.Subscription.Name})
		if len(fields) != 1 || len(fields[0].Selections) == 0 {
			return next(ctx)
		}
		event = fields[0].Selections
	}
	if root == nil && event == nil {
		return next(ctx)
	}
	t := d.track(ctx)
	if t == nil {
		return next(ctx)
	}
	lv := &levels{oc: oc, tracker: t, event: event, objects: map[objectKey]*object{}}
	if root != nil {
		lv.mu.Lock()
		lv.open(d, oc, objectKey{index: -1}, nil, oc.Operation.SelectionSet, root.Name)
		lv.mu.Unlock()
	}
	resp := next(context.WithValue(ctx, levelsKey{}, lv))
	if d.metrics != nil {
		quiet, timed := t.Closed()
		d.metrics.countBatches(quiet, timed, t.Waits(), t.Abandoned())
	}
	return resp
}

func (d *levelDispatch) InterceptField(ctx context.Context, next graphql.Resolver) (res any, err error) {
	fc := graphql.GetFieldContext(ctx)
	if d.untracked(fc.Object, fc.Field) {
		return next(ctx)
	}
	lv, _ := ctx.Value(levelsKey{}).(*levels)
	if lv == nil {
		return next(ctx)
	}
	if lv.event != nil && fc.Parent == nil {
		lv.mu.Lock()
		lv.eventRoot(d, fc.Object)
		lv.mu.Unlock()
	}
	defer func() {
		lv.mu.Lock()
		ok := lv.resolved(d, lv.oc, fc, res, err)
		lv.mu.Unlock()
		if !ok {
			lv.tracker.Abandon()
		}
		lv.tracker.Done()
	}()
	return next(ctx)
}

// untracked reports whether a field of an object type is left out of the
// count: an inline leaf (a struct field or a method without a context, with
// no selections) runs in its object's goroutine without ever waiting on a
// loader, so it cannot hold a level back. Most fields are such leaves.
func (d *levelDispatch) untracked(typeName string, f graphql.CollectedField) bool {
	return len(f.Selections) == 0 && !d.concurrent[typeField{typeName, f.Name}]
}

// eventRoot opens a subscription event's object, of typeName, as the root
// when the first of its tracked fields starts: the executor runs its fields
// in the same order as a query's root's, so that field is the one open
// promises. lv.mu is held.
func (lv *levels) eventRoot(d *levelDispatch, typeName string) {
	if _, ok := lv.objects[objectKey{index: -1}]; !ok {
		lv.open(d, lv.oc, objectKey{index: -1}, nil, lv.event, typeName)
	}
}

// open registers an object of typeName returned by parent (nil: the root)
// and promises its first fields. lv.mu is held.
func (lv *levels) open(d *levelDispatch, oc *graphql.OperationContext, key objectKey, parent *subtree, sel ast.SelectionSet, typeName string) {
	if sh := lv.fieldCounts(d, oc, sel, typeName); !sh.none() {
		lv.openCounted(&object{}, key, parent, sh)
	}
}

// openCounted registers o, an object with fields to resolve (sh), and
// promises its first fields. lv.mu is held.
func (lv *levels) openCounted(o *object, key objectKey, parent *subtree, sh fieldCounts) {
	*o = object{parent: parent, inlineLeft: sh.inline, concurrent: sh.concurrent, open: sh.inline + sh.concurrent}
	lv.objects[key] = o
	lv.advance(o)
}

// advance promises the object's next field (inline) or, when no inline field
// is left, its concurrent fields. lv.mu is held.
func (lv *levels) advance(o *object) {
	switch {
	case o.inlineLeft > 0:
		o.inlineLeft--
		lv.tracker.Promise(1)
	case !o.concurrentDue:
		o.concurrentDue = true
		lv.tracker.Promise(o.concurrent)
	}
}

// resolved records that field fc returned res: it opens the objects res holds
// and, when there are none, completes the field. It reports false when the
// field cannot be placed or its result not counted. lv.mu is held.
func (lv *levels) resolved(d *levelDispatch, oc *graphql.OperationContext, fc *graphql.FieldContext, res any, err error) bool {
	key := objectKey{index: -1} // the root: its fields' parent has no field
	switch p := fc.Parent; {
	case p == nil:
	case p.Index != nil:
		key = objectKey{field: p.Parent, index: *p.Index}
	case p.Field.Field != nil:
		key = objectKey{field: p, index: -1}
	}
	of := lv.objects[key]
	if of == nil {
		return false
	}
	inline := !d.concurrent[typeField{fc.Object, fc.Field.Name}]
	if err != nil || res == nil || len(fc.Field.Selections) == 0 {
		// A leaf (most fields): complete at once.
		lv.complete(of, inline)
		return true
	}
	n, ok := lv.children(d, oc, fc, of, inline, reflect.ValueOf(res))
	if !ok {
		return false
	}
	if n == 0 {
		lv.complete(of, inline)
	}
	return true // else its objects complete it
}

// children opens the objects of a field's result v that have fields to
// resolve, under one subtree (the field, of object of), and returns how
// many. The subtree and its objects are allocated together when the field
// returns one object, the objects in one slice when it returns a list; a
// result without such objects (a list of file impacts, whose fields are all
// inline leaves) allocates nothing. lv.mu is held.
func (lv *levels) children(d *levelDispatch, oc *graphql.OperationContext, fc *graphql.FieldContext, of *object, inline bool, v reflect.Value) (int, bool) {
	t := fc.Field.Definition.Type
	sel := fc.Field.Selections
	v = deref(v)
	if !v.IsValid() {
		return 0, true
	}
	if t.Elem == nil {
		name, ok := d.typeOf(t.Name(), v)
		if !ok {
			return 0, false
		}
		if name == "" {
			return 0, true
		}
		sh := lv.fieldCounts(d, oc, sel, name)
		if sh.none() {
			return 0, true
		}
		st := &subtree{of: of, inline: inline, open: 1}
		lv.openCounted(&st.single, objectKey{field: fc, index: -1}, st, sh)
		return 1, true
	}
	if t.Elem.Elem != nil || (v.Kind() != reflect.Slice && v.Kind() != reflect.Array) {
		return 0, false // lists of lists: not in this schema
	}
	// Twice over the elements: to count the objects, then to open them.
	var st *subtree
	var objs []object
	for pass := range 2 {
		n := 0
		var last string // the elements are mostly of one type: counted once
		var sh fieldCounts
		for i := range v.Len() {
			e := deref(v.Index(i))
			if !e.IsValid() {
				continue
			}
			name, ok := d.typeOf(t.Elem.Name(), e)
			if !ok {
				return 0, false
			}
			if name == "" {
				continue
			}
			if name != last {
				last, sh = name, lv.fieldCounts(d, oc, sel, name)
			}
			if sh.none() {
				continue
			}
			if pass == 1 {
				lv.openCounted(&objs[n], objectKey{field: fc, index: i}, st, sh)
			}
			n++
		}
		if n == 0 {
			return 0, true
		}
		if pass == 0 {
			st, objs = &subtree{of: of, inline: inline, open: n}, make([]object, n)
		}
	}
	return len(objs), true
}

// deref follows pointers and interfaces to the value, invalid when nil.
func deref(v reflect.Value) reflect.Value {
	for v.IsValid() && (v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface) {
		if v.IsNil() {
			return reflect.Value{}
		}
		v = v.Elem()
	}
	return v
}

// complete ends a field of o whose subtree is resolved: o moves on, and
// completes in turn when that was its last field, which may complete the
// field that returned it, and so on up. lv.mu is held.
func (lv *levels) complete(o *object, inline bool) {
	for {
		o.open--
		if inline {
			lv.advance(o)
		}
		if o.open > 0 {
			return
		}
		st := o.parent
		if st == nil {
			return
		}
		if st.open--; st.open > 0 {
			return
		}
		o, inline = st.of, st.inline
	}
}

// typeOf names the object type of a value of GraphQL type named: itself for
// an object type, "" for scalars and enums, the concrete type for interfaces
// and unions (ok false when it cannot be told).
func (d *levelDispatch) typeOf(named string, v reflect.Value) (string, bool) {
	def := d.schema.Types[named]
	if def == nil {
		return "", false
	}
	switch def.Kind {
	case ast.Object:
		return def.Name, true
	case ast.Interface, ast.Union:
		goName := v.Type().Name()
		candidates := []string{goName, strings.TrimSuffix(goName, "Event"), goTypeAliases[goName]}
		for _, p := range d.schema.GetPossibleTypes(def) {
			for _, c := range candidates {
				if c != "" && strings.EqualFold(p.Name, c) {
					return p.Name, true
				}
			}
		}
		return "", false
	default:
		return "", true
	}
}

// goTypeAliases are the Go types bound to an object type of another name
// (gqlgen.yml's models) that can stand for an interface.
var goTypeAliases = map[string]string{"AgentHeartbeat": "HeartbeatRecord"}

// fieldCounts counts the fields of an object of typeName with selections sel
// that the level dispatch tracks — the collected fields less __typename,
// which the executor answers inline, and the untracked leaves. lv.mu is held.
func (lv *levels) fieldCounts(d *levelDispatch, oc *graphql.OperationContext, sel ast.SelectionSet, typeName string) fieldCounts {
	if len(sel) == 0 {
		return fieldCounts{}
	}
	key := fieldsKey{sel: &sel[0], typeName: typeName}
	for i := range lv.shapes {
		if lv.shapes[i].key == key {
			return lv.shapes[i].counts
		}
	}
	var sh fieldCounts
	for _, f := range graphql.CollectFields(oc, sel, d.satisfies[typeName]) {
		switch {
		case f.Name == "__typename", d.untracked(typeName, f):
		case d.concurrent[typeField{typeName, f.Name}]:
			sh.concurrent++
		default:
			sh.inline++
		}
	}
	lv.shapes = append(lv.shapes, countedShape{key, sh})
	return sh
}
