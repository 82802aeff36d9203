package graph

import (
	"bytes"
	"context"
	"strings"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/taskgraph/taskgraph/internal/gqlexec"
)

// This file holds what internal/tools/execpass's rewrites of the generated
// executor call; the work is internal/gqlexec's.

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

// marshalElements marshals the elements of v, a list of typeName objects
// selected by sel (internal/tools/execpass puts it where gqlgen's list
// marshallers called graphql.MarshalSliceConcurrently). Like gqlgen it
// marshals the elements concurrently, so that the elements' resolvers fill
// their loader batches together — on elementWorkers rather than on new
// goroutines. Elements are marshalled one after another in this goroutine
// when none can wait on anything: when sel selects only leaves that resolve
// inline, or when the levels below the list were read first (level_reads.go),
// or already were by a list above it. Paths, errors and a panic's recovery
// are gqlgen's.
func marshalElements[T any](ec *executionContext, ctx context.Context, sel ast.SelectionSet, typeName string, v []T,
	marshal func(ctx context.Context, i int) graphql.Marshaler,
) (ret graphql.Array) {
	ret = make(graphql.Array, len(v))
	inOrder := len(v) <= 1 || inlineLeaves(sel, typeName) || levelsRead(ctx)
	if !inOrder && outsideLists(ctx) && levelReadable(typeName, sel) && ec.readLevels(ctx, typeName, v, sel) {
		ctx, inOrder = context.WithValue(ctx, levelsReadKey{}, true), true
	}
	if inOrder {
		// One after another (gqlexec.MarshalInOrder).
		if !gqlexec.MarshalInOrder(ctx, ret, marshal) {
			return nil
		}
		return ret
	}
	if !gqlexec.MarshalConcurrently(ctx, ret, marshal, elementWorkers) {
		return nil
	}
	return ret
}

// elementWorkers run the elements of lists marshalled concurrently, and
// objects' concurrent fields.
var elementWorkers = gqlexec.NewWorkers(maxIdleWorkers).TrimEvery(workersTrimPeriod)

// maxIdleWorkers bounds the goroutines kept waiting for elements, each on
// a stack of about 32 KiB. Four nested reads of a hundred tasks at once
// keep some 1,600 busy; with 512 kept, the others were made again for
// every read, and their stacks grew by copying (4% of a light read's CPU).
// Workers idle for a whole period are stopped (workersTrimPeriod), so a
// burst's stacks are not kept.
const (
	maxIdleWorkers    = 2048
	workersTrimPeriod = 30 * time.Second
)

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

// newObject is an object's marshaller and the field set its values go in,
// allocated together (gqlexec.NewObject): the object is written from its
// collected fields (gqlexec.WriteObject), where gqlgen copies every field
// and builds a map for each object.
func newObject(fields []graphql.CollectedField) (graphql.Marshaler, *graphql.FieldSet) {
	return gqlexec.NewObject(fields)
}

// enums marshal the schema's enum values, one marshaller each.
var enums = gqlexec.NewEnums(parsedSchema)

// marshalEnum is graphql.MarshalString(v) for an enum value v
// (internal/tools/execpass puts it in the enum marshallers): the schema's
// values share one marshaller each instead of a closure made for every
// value written.
func marshalEnum(v string) graphql.Marshaler { return enums.Marshal(v) }

// Leaves read from a struct field (internal/tools/execpass puts these
// helpers in such fields' functions) are written from the field's address,
// read when the response is written, without the closure gqlgen's
// marshallers make for each value (gqlexec.StringAt and the others). A
// mutation's fields keep gqlgen's marshallers, which read the value now: a
// later root field of the same mutation may change an object an earlier
// one returned, and each field answers as of its own execution.

// stringAt writes a String or ID.
func (ec *executionContext) stringAt(p *string) graphql.Marshaler {
	return fieldAt(ec, p, graphql.MarshalString, (*gqlexec.StringAt)(p))
}

// optionalStringAt writes a nullable String or ID.
func (ec *executionContext) optionalStringAt(p *string) graphql.Marshaler {
	return fieldAt(ec, p, graphql.MarshalString, gqlexec.OptionalStringAt(p))
}

// intAt writes an Int.
func (ec *executionContext) intAt(p *int) graphql.Marshaler {
	return fieldAt(ec, p, graphql.MarshalInt, (*gqlexec.IntAt)(p))
}

// optionalIntAt writes a nullable Int.
func (ec *executionContext) optionalIntAt(p *int) graphql.Marshaler {
	return fieldAt(ec, p, graphql.MarshalInt, gqlexec.OptionalIntAt(p))
}

// timeAt writes a Time its caller found not zero.
func (ec *executionContext) timeAt(p *time.Time) graphql.Marshaler {
	return fieldAt(ec, p, gqlexec.MarshalTime, (*gqlexec.TimeAt)(p))
}

// optionalTimeAt writes a nullable Time (null when zero, as
// gqlexec.MarshalTime).
func (ec *executionContext) optionalTimeAt(p *time.Time) graphql.Marshaler {
	return fieldAt(ec, p, gqlexec.MarshalTime, gqlexec.OptionalTimeAt(p))
}

// fieldAt is at, the marshaller that reads *p when the response is written,
// or in a mutation marshal(*p), which reads it now; nil p is at's (null).
func fieldAt[T any](ec *executionContext, p *T, marshal func(T) graphql.Marshaler, at graphql.Marshaler) graphql.Marshaler {
	if p != nil && ec.mutation() {
		return marshal(*p)
	}
	return at
}

// boolean writes a Boolean: one marshaller per value, read now.
func (ec *executionContext) boolean(b bool) graphql.Marshaler { return gqlexec.Boolean(b) }

// optionalBoolean writes a nullable Boolean.
func (ec *executionContext) optionalBoolean(p *bool) graphql.Marshaler {
	if p == nil {
		return graphql.Null
	}
	return gqlexec.Boolean(*p)
}

// mutation reports whether the operation executed is a mutation.
func (ec *executionContext) mutation() bool {
	op := ec.OperationContext
	return op == nil || op.Operation == nil || op.Operation.Operation == ast.Mutation
}

// responseSizes are recent operations' last response sizes.
var responseSizes gqlexec.ResponseSizes

// responseBuffer is the buffer a query's or a mutation's response is
// written into (internal/tools/execpass puts it in Exec), made at about the
// size of the operation's last response.
func responseBuffer(op *graphql.OperationContext) *bytes.Buffer {
	return responseSizes.Buffer(op.Operation)
}

// responseWritten records the size of the response written into buf and
// returns its bytes.
func responseWritten(op *graphql.OperationContext, buf *bytes.Buffer) []byte {
	return responseSizes.Written(op.Operation, buf)
}
