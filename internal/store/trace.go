package store

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"strings"
	"unicode"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/tracing"
)

// Spans of statements and transactions. A statement's span is named by the
// store's exported function that runs it (TaskQueries.TasksByIDs,
// Q.AppendTail): read off the call stack (inlined frames included), only
// when the request is traced. Neither the statement's text nor its
// arguments are recorded.

// startStatement starts the span of one statement of q, under ctx's span
// when that one records (else ctx and a span that does nothing).
func (q *Q) startStatement(ctx context.Context, query string) (context.Context, trace.Span) {
	if t := q.trace; t != nil {
		// The use-case passes its own context to the transaction's
		// statements: they are the transaction's children.
		ctx = trace.ContextWithSpan(ctx, t.span)
	}
	return q.db.startStatement(ctx, query, q.inTx)
}

// startStatement starts the span of one statement of d's (inTx: inside a
// transaction), under ctx's span when that one records.
func (d *DB) startStatement(ctx context.Context, query string, inTx bool) (context.Context, trace.Span) {
	if !tracing.Recording(ctx) {
		return ctx, tracing.None
	}
	return tracing.Child(ctx, statementName(), trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(d.systemAttr(), attribute.String("db.operation.name", operationOf(query)),
			attribute.Bool("db.transaction", inTx)))
}

// endStatement records err on span and ends it.
func endStatement(span trace.Span, err error) {
	if !span.IsRecording() {
		return
	}
	if err != nil {
		span.SetStatus(codes.Error, "statement failed")
		span.SetAttributes(attribute.String("error.type", errorType(err)))
	}
	span.End()
}

// errorType names err by the store's sentinel it wraps, not by its text
// (which may quote a value).
func errorType(err error) string {
	for _, s := range []struct {
		err  error
		name string
	}{{ErrRetry, "retry"}, {ErrBusy, "busy"}, {ErrNotFound, "not_found"}, {ErrUnique, "unique"},
		{ErrForeignKey, "foreign_key"}, {ErrCheck, "check"}} {
		if errors.Is(err, s.err) {
			return s.name
		}
	}
	return "other"
}

func (d *DB) systemAttr() attribute.KeyValue {
	if d.dialect == Postgres {
		return attribute.String("db.system.name", "postgresql")
	}
	return attribute.String("db.system.name", "sqlite")
}

// operationOf is the statement's first keyword (SELECT, INSERT, WITH, …).
func operationOf(query string) string {
	query = strings.TrimLeftFunc(query, unicode.IsSpace)
	end := strings.IndexFunc(query, func(r rune) bool { return !unicode.IsLetter(r) })
	if end < 0 {
		end = len(query)
	}
	return strings.ToUpper(query[:end])
}

const storePrefix = "github.com/taskgraph/taskgraph/internal/store."

// statementName is the first exported function of the store on the call
// stack: the query group method (or Q method) a caller outside the store
// called.
func statementName() string {
	var pcs [16]uintptr
	n := runtime.Callers(3, pcs[:])
	frames := runtime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		if s := exportedStoreFunc(f.Function); s != "" {
			return s
		}
		if !more || !strings.HasPrefix(f.Function, storePrefix) {
			return "statement"
		}
	}
}

// exportedStoreFunc is "TaskQueries.TasksByIDs" for the function name
// "…/internal/store.TaskQueries.TasksByIDs" (and "Q.Now" for "….(*Q).Now";
// a closure is named by the function it is in), "" for anything else:
// another package, an unexported or generic function, DB.InTx.
func exportedStoreFunc(fn string) string {
	rest, ok := strings.CutPrefix(fn, storePrefix)
	if i := strings.Index(rest, ".func"); i >= 0 {
		rest = rest[:i] // a closure is its enclosing function's
	}
	if !ok || strings.Contains(rest, "[") || rest == "(*DB).InTx" {
		return "" // generic helpers and the transaction's plumbing name no statement
	}
	rest = strings.NewReplacer("(*", "", ")", "").Replace(rest)
	parts := strings.Split(rest, ".")
	last := parts[len(parts)-1]
	if last == "" || !unicode.IsUpper(rune(last[0])) {
		return ""
	}
	return rest
}

// txTrace is the bookkeeping of a traced transaction: the event types it
// wrote.
type txTrace struct {
	span   trace.Span
	events int
	types  []string
}

// noteEvents counts evs in the transaction's span, when it has one.
func (q *Q) noteEvents(evs []*domain.Event) {
	t := q.trace
	if t == nil {
		return
	}
	t.events += len(evs)
	for _, e := range evs {
		if !slices.Contains(t.types, string(e.Type)) {
			t.types = append(t.types, string(e.Type))
		}
	}
}

// startTx starts the span of one transaction (one attempt of InTx).
func (d *DB) startTx(ctx context.Context, attempt int) (context.Context, trace.Span) {
	if !tracing.Recording(ctx) {
		return ctx, tracing.None
	}
	return tracing.Child(ctx, "transaction", trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(d.systemAttr(), attribute.Int("db.transaction.attempt", attempt)))
}

// endTx records the transaction's outcome and the events it wrote, and
// ends its span.
func endTx(span trace.Span, t *txTrace, err error) {
	if !span.IsRecording() {
		return
	}
	if t != nil {
		slices.Sort(t.types)
		span.SetAttributes(attribute.Int("taskgraph.events.count", t.events),
			attribute.StringSlice("taskgraph.events.types", t.types))
	}
	if err != nil {
		span.SetStatus(codes.Error, "rolled back")
		span.SetAttributes(attribute.String("error.type", errorType(err)), attribute.Bool("db.committed", false))
	} else {
		span.SetAttributes(attribute.Bool("db.committed", true))
	}
	span.End()
}

// startLater starts the span of the round trip that sends n writes waiting
// on the transaction (later.go) ahead of its next statement.
func (q *Q) startLater(ctx context.Context, n int) (context.Context, trace.Span) {
	if t := q.trace; t != nil {
		ctx = trace.ContextWithSpan(ctx, t.span)
	}
	if !tracing.Recording(ctx) {
		return ctx, tracing.None
	}
	return tracing.Child(ctx, "later writes", trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(q.db.systemAttr(), attribute.Int("taskgraph.writes", n), attribute.Bool("db.transaction", true)))
}
