package server

import (
	"context"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/taskgraph/taskgraph/internal/tracing"
)

// traceDeliveries makes a span of each event a subscription delivers: from
// the moment its fields start resolving (the event has arrived) to its
// response, with the reads the event's fields make as its children. Each
// is the root of a trace of its own, linked to the subscription's span (a
// subscription lives for hours: one trace would grow without end). The wait for the event is left out:
// the response handler waits inside the executor, so the span starts at the
// event's first field (or, for an event of plain leaves only, covers the
// response alone). Registered only while tracing is on: off, no field pays
// for it.
type traceDeliveries struct{}

var _ interface {
	graphql.HandlerExtension
	graphql.ResponseInterceptor
	graphql.FieldInterceptor
} = traceDeliveries{}

func (traceDeliveries) ExtensionName() string                   { return "TraceDeliveries" }
func (traceDeliveries) Validate(graphql.ExecutableSchema) error { return nil }

type deliveryKey struct{}

// delivery is one event's span, started by its first field.
type delivery struct {
	parent context.Context
	name   string
	once   sync.Once
	span   trace.Span
}

func (d *delivery) start() trace.Span {
	d.once.Do(func() { d.span = startDelivery(d.parent, d.name) })
	return d.span
}

// startDelivery starts a delivery's span: a root, linked to ctx's span (the
// subscription's).
func startDelivery(ctx context.Context, name string, opts ...trace.SpanStartOption) trace.Span {
	opts = append(opts, trace.WithNewRoot(), trace.WithLinks(trace.LinkFromContext(ctx)),
		trace.WithAttributes(attribute.String("graphql.operation.type", "subscription")))
	_, span := tracing.Start(ctx, name, opts...)
	return span
}

func (traceDeliveries) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	if !graphql.HasOperationContext(ctx) || !tracing.Enabled() || !trace.SpanContextFromContext(ctx).IsValid() {
		return next(ctx)
	}
	oc := graphql.GetOperationContext(ctx)
	if oc.Operation == nil || oc.Operation.Operation != ast.Subscription {
		return next(ctx)
	}
	d := &delivery{parent: ctx, name: "subscription delivery"}
	if oc.Operation.Name != "" {
		d.name += " " + oc.Operation.Name
	}
	resp := next(context.WithValue(ctx, deliveryKey{}, d))
	if resp == nil {
		// The subscription ended: no event, and no span unless a field
		// started one.
		if d.span != nil {
			d.span.End()
		}
		return nil
	}
	var span trace.Span
	if d.span == nil {
		span = startDelivery(ctx, d.name, trace.WithTimestamp(time.Now()))
	} else {
		span = d.span
	}
	span.SetAttributes(attribute.Int("taskgraph.response.bytes", len(resp.Data)))
	endOperationSpan(span, resp)
	return resp
}

func (traceDeliveries) InterceptField(ctx context.Context, next graphql.Resolver) (any, error) {
	d, _ := ctx.Value(deliveryKey{}).(*delivery)
	if d == nil {
		return next(ctx)
	}
	return next(trace.ContextWithSpan(ctx, d.start()))
}
