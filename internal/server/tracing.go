package server

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/vektah/gqlparser/v2/ast"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/taskgraph/taskgraph/internal/tracing"
)

// startRequestSpan starts the span of one HTTP request, the child of the
// W3C trace context its headers carry (traceparent), if any. Tracing off:
// ctx unchanged and a span that does nothing.
func startRequestSpan(ctx context.Context, r *http.Request) (context.Context, trace.Span) {
	if !tracing.Enabled() {
		return ctx, tracing.None
	}
	ctx = tracing.Propagator.Extract(ctx, propagation.HeaderCarrier(r.Header))
	return tracing.Start(ctx, r.Method, trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(attribute.String("http.request.method", r.Method), attribute.String("url.path", r.URL.Path)))
}

// endRequestSpan names the request's span by its route, once the router has
// told it, records the status, and ends it.
func endRequestSpan(span trace.Span, method, route string, status int) {
	if !span.IsRecording() {
		return
	}
	span.SetName(method + " " + route)
	span.SetAttributes(attribute.String("http.route", route), attribute.Int("http.response.status_code", status))
	if status >= 500 {
		span.SetStatus(codes.Error, http.StatusText(status))
	}
	span.End()
}

// traceOperations makes a span of each GraphQL operation, the child of its
// request's: named by the operation's type and name, with its complexity and
// the error codes of its response. A subscription's span covers its start
// (the subscribe call); each of its events is a delivery span of its own
// (traceDeliveries).
type traceOperations struct{}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationInterceptor
} = traceOperations{}

func (traceOperations) ExtensionName() string                   { return "TraceOperations" }
func (traceOperations) Validate(graphql.ExecutableSchema) error { return nil }

func (traceOperations) InterceptOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	// On a websocket, the request's span (the upgrade) has ended: the
	// socket's operations are still its children.
	if !tracing.Enabled() || !trace.SpanContextFromContext(ctx).IsValid() {
		return next(ctx)
	}
	oc := graphql.GetOperationContext(ctx)
	typ := "query"
	if oc.Operation != nil {
		typ = string(oc.Operation.Operation)
	}
	name := typ
	if oc.Operation != nil && oc.Operation.Name != "" {
		name += " " + oc.Operation.Name // the one chosen by operationName
	}
	attrs := []attribute.KeyValue{attribute.String("graphql.operation.type", typ),
		attribute.String("graphql.operation.name", strings.TrimPrefix(strings.TrimPrefix(name, typ), " "))}
	if oc.Operation != nil {
		attrs = append(attrs, attribute.StringSlice("graphql.operation.root_fields", rootFields(oc.Operation.SelectionSet)))
	}
	if stats := extension.GetComplexityStats(ctx); stats != nil {
		attrs = append(attrs, attribute.Int("graphql.complexity", stats.Complexity))
	}
	ctx, span := tracing.Start(ctx, name, trace.WithAttributes(attrs...))
	h := next(ctx)
	if typ == string(ast.Subscription) {
		span.End()
		return h
	}
	first := true
	return func(ctx context.Context) *graphql.Response {
		resp := h(ctx)
		if first {
			first = false
			endOperationSpan(span, resp)
		}
		return resp
	}
}

// endOperationSpan records resp's error codes on span and ends it.
func endOperationSpan(span trace.Span, resp *graphql.Response) {
	if resp != nil && len(resp.Errors) > 0 {
		var codesSeen []string
		for _, e := range resp.Errors {
			code, _ := e.Extensions["code"].(string)
			if code == "" {
				code = "UNKNOWN"
			}
			if !slices.Contains(codesSeen, code) {
				codesSeen = append(codesSeen, code)
			}
		}
		slices.Sort(codesSeen)
		span.SetAttributes(attribute.StringSlice("graphql.error.codes", codesSeen), attribute.Int("graphql.error.count", len(resp.Errors)))
		span.SetStatus(codes.Error, strings.Join(codesSeen, ","))
	}
	span.End()
}

// maxRootFields bounds the root fields a span lists (a document may alias
// one field many times).
const maxRootFields = 16

// rootFields names the distinct root fields of an operation (those written
// directly in its selection set, not in fragments), so that an anonymous
// operation's span still says what it did.
func rootFields(set ast.SelectionSet) []string {
	var out []string
	for _, sel := range set {
		if f, ok := sel.(*ast.Field); ok && !slices.Contains(out, f.Name) {
			out = append(out, f.Name)
			if len(out) == maxRootFields {
				break
			}
		}
	}
	return out
}
