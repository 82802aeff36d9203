package graph

import (
	"context"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/taskgraph/taskgraph/graph/model"
	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/service"
)

// Level reads. gqlgen resolves each object of a list on its own: a hundred
// tasks asking their relationships are a hundred resolvers, each parked on
// the loader's batch until the level is in and then woken, each on a worker
// of its own. When a list's selection asks, below its objects, only inline
// leaves and fields that can be read for a whole level at once
// (levelReads), the list reads those fields first, a level at a time — the
// relationships of every task, then the targets of every relationship, then
// their file impacts — through the loaders the resolvers use (loader.Read:
// at once, no batch, no wait). Then no resolver below the list can wait:
// each finds its value cached, and the list's elements, their concurrent
// fields and the lists below them are marshalled one after another in the
// list's goroutine (levelsRead). Only a list with no list element above it
// reads its levels (outsideLists).
//
// The statements are the same, one per field of a level, and the fields of
// a level are read concurrently; what goes is the parking, the waking and
// the handing of elements to workers. A selection with anything else below
// the list (a fragment, a directive, a field without a level read) is
// marshalled as before.

// levelRead reads one field of a level's objects: read reads it for objs (a
// slice of the object type's Go values, as the list marshaller holds them)
// and returns the values flattened into the next level's objects (a slice
// of elem's Go values). ok is false when the field cannot be read so (its
// arguments do not parse, objs is not what it reads).
type levelRead struct {
	elem string // the field's object type
	read func(ec *executionContext, ctx context.Context, objs any, f *ast.Field) (children any, ok bool, err error)
}

// levelReads are the fields read a level at a time, by object type: the
// nested reads clients make most (a list's tasks, their links, the links'
// targets, the tasks they wait on or that wait on them, subtasks, file
// impacts).
var levelReads = map[string]map[string]levelRead{
	"Task": {
		"relationships": {elem: "TaskRelationship", read: readRelationships},
		"fileImpacts":   {elem: "TaskFileImpact", read: readFileImpacts},
		"dependencies":  {elem: "Task", read: readLinked(service.DependencyLinks)},
		"dependents":    {elem: "Task", read: readLinked(service.DependentLinks)},
		"subtasks":      {elem: "Task", read: readLinked(service.SubtaskLinks)},
	},
	"TaskRelationship": {
		"target": {elem: "Task", read: readTargets},
	},
	// A connection's edges hold their tasks: no read, and the levels below
	// the tasks are read for a Relay-style edges { node { … } } as for nodes.
	"TaskEdge": {
		"node": {elem: "Task", read: edgeNodes},
	},
}

// levelReadable reports whether every field below sel, on objects of
// typeName, is an inline leaf or has a level read, down to the leaves: no
// fragment, no directive, object types only.
func levelReadable(typeName string, sel ast.SelectionSet) bool {
	if def := parsedSchema.Types[typeName]; def == nil || def.Kind != ast.Object {
		return false
	}
	for _, s := range sel {
		f, ok := s.(*ast.Field)
		if !ok || len(f.Directives) > 0 {
			return false
		}
		if r, ok := levelReads[typeName][f.Name]; ok {
			if !levelReadable(r.elem, f.SelectionSet) {
				return false
			}
			continue
		}
		if len(f.SelectionSet) > 0 || concurrentOf[typeName][f.Name] {
			return false
		}
	}
	return true
}

// outsideLists reports whether no list element is above ctx's field: its
// list is then the only one of its field in the operation, and reading its
// levels costs one statement per field of a level. Below a list's elements
// (each grouping suggestion's tasks) every element's list would read its
// own, where their resolvers, resolved together, fill one batch.
func outsideLists(ctx context.Context) bool {
	for fc := graphql.GetFieldContext(ctx); fc != nil; fc = fc.Parent {
		if fc.Index != nil {
			return false
		}
	}
	return true
}

// readLevels reads the fields below a list's objects (objs, of typeName,
// selected by sel, which levelReadable accepted) a level at a time, the
// fields of a level concurrently. It reports false when a field could not
// be read so (the resolvers then read it, and report its error at their
// paths); what was read stays cached either way.
func (ec *executionContext) readLevels(ctx context.Context, typeName string, objs any, sel ast.SelectionSet) bool {
	type objects struct {
		typeName string
		objs     any
		sel      ast.SelectionSet
	}
	type field struct {
		read  levelRead
		f     *ast.Field
		objs  any
		found any
		ok    bool
	}
	level := []objects{{typeName, objs, sel}}
	for len(level) > 0 {
		var fields []field
		for _, o := range level {
			for _, s := range o.sel {
				f := s.(*ast.Field)
				if r, ok := levelReads[o.typeName][f.Name]; ok {
					fields = append(fields, field{read: r, f: f, objs: o.objs})
				} // else an inline leaf
			}
		}
		read := func(k int) {
			fd := &fields[k]
			// A panic leaves the field to its resolvers, under gqlgen's
			// recovery, which report it at their paths.
			defer func() {
				if recover() != nil {
					fd.ok = false
				}
			}()
			found, ok, err := fd.read.read(ec, ctx, fd.objs, fd.f)
			fd.found, fd.ok = found, ok && err == nil
		}
		var wg sync.WaitGroup
		for k := 1; k < len(fields); k++ {
			wg.Go(func() { read(k) })
		}
		if len(fields) > 0 {
			read(0)
		}
		wg.Wait()
		level = level[:0]
		for _, fd := range fields {
			if !fd.ok {
				return false
			}
			if !inlineLeaves(fd.f.SelectionSet, fd.read.elem) {
				level = append(level, objects{fd.read.elem, fd.found, fd.f.SelectionSet})
			}
		}
	}
	return true
}

// levelsReadKey marks the context of a list whose levels were read.
type levelsReadKey struct{}

// levelsRead reports whether ctx is below a list whose levels were read:
// nothing below it waits.
func levelsRead(ctx context.Context) bool {
	read, _ := ctx.Value(levelsReadKey{}).(bool)
	return read
}

// readRelationships reads Task.relationships(direction:, types:).
func readRelationships(ec *executionContext, ctx context.Context, objs any, f *ast.Field) (any, bool, error) {
	tasks, svc, ok := levelOf[domain.Task](ec, objs)
	if !ok {
		return nil, false, nil
	}
	args, err := ec.field_Task_relationships_args(ctx, f.ArgumentMap(ec.Variables))
	if err != nil {
		return nil, false, nil
	}
	dir, _ := args["direction"].(*domain.RelationshipDirection)
	types, _ := args["types"].([]domain.RelationshipType)
	lists, err := svc.ReadRelationships(ctx, keysOf(tasks, taskID), directionOrBoth(dir), types)
	return flatten(lists), true, err
}

// readFileImpacts reads Task.fileImpacts.
func readFileImpacts(ec *executionContext, ctx context.Context, objs any, _ *ast.Field) (any, bool, error) {
	tasks, svc, ok := levelOf[domain.Task](ec, objs)
	if !ok {
		return nil, false, nil
	}
	lists, err := svc.ReadFileImpacts(ctx, keysOf(tasks, taskID))
	return flatten(lists), true, err
}

// readLinked reads a task list of a task made of its links
// (Task.dependencies, dependents, subtasks).
func readLinked(links service.Links) func(*executionContext, context.Context, any, *ast.Field) (any, bool, error) {
	return func(ec *executionContext, ctx context.Context, objs any, _ *ast.Field) (any, bool, error) {
		tasks, svc, ok := levelOf[domain.Task](ec, objs)
		if !ok {
			return nil, false, nil
		}
		lists, err := svc.ReadLinked(ctx, keysOf(tasks, taskID), links)
		return flatten(lists), true, err
	}
}

// readTargets reads TaskRelationship.target.
func readTargets(ec *executionContext, ctx context.Context, objs any, _ *ast.Field) (any, bool, error) {
	rels, svc, ok := levelOf[domain.TaskRelationship](ec, objs)
	if !ok {
		return nil, false, nil
	}
	tasks, err := svc.ReadTasks(ctx, keysOf(rels, func(r *domain.TaskRelationship) string { return r.TargetTaskID }))
	return tasks, true, err
}

// edgeNodes is TaskEdge.node: the tasks the edges hold.
func edgeNodes(_ *executionContext, _ context.Context, objs any, _ *ast.Field) (any, bool, error) {
	edges, ok := objs.([]*model.TaskEdge)
	if !ok {
		return nil, false, nil
	}
	nodes := make([]*domain.Task, 0, len(edges))
	for _, e := range edges {
		if e != nil && e.Node != nil {
			nodes = append(nodes, e.Node)
		}
	}
	return nodes, true, nil
}

// levelOf is objs, a level's objects, as a []*T, with the tasks' use-cases;
// ok is false when objs is not one, or when the executor runs over another
// resolver root.
func levelOf[T any](ec *executionContext, objs any) ([]*T, *service.Tasks, bool) {
	level, ok := objs.([]*T)
	r, core := ec.Resolvers.(*Resolver)
	if !ok || !core {
		return nil, nil, false
	}
	return level, r.Svc.Tasks, true
}

// keysOf are the keys of objs, skipping nils.
func keysOf[T any](objs []*T, key func(*T) string) []string {
	keys := make([]string, 0, len(objs))
	for _, o := range objs {
		if o != nil {
			keys = append(keys, key(o))
		}
	}
	return keys
}

func taskID(t *domain.Task) string { return t.ID }

// flatten is the elements of lists, one after another.
func flatten[T any](lists [][]T) []T {
	n := 0
	for _, l := range lists {
		n += len(l)
	}
	out := make([]T, 0, n)
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// directionOrBoth is a relationships field's direction: both when not given.
func directionOrBoth(d *domain.RelationshipDirection) domain.RelationshipDirection {
	if d == nil {
		return domain.DirectionBoth
	}
	return *d
}
