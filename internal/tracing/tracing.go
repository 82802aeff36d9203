// Package tracing is Taskgraph's OpenTelemetry tracing: the tracer provider
// built from the standard OTEL_* environment variables (OTLP over HTTP,
// protobuf), and the span helpers the other packages call.
//
// Tracing is off unless OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set. Off, every helper returns at
// once on one atomic load: no span, no allocation, the context unchanged.
// On, a request's root span is started by the HTTP handler (Start) and
// every inner span (Child) only under a parent that records, so work
// outside a traced request (sweeps, the broker) costs nothing either.
package tracing

import (
	"context"
	"errors"
	"os"
	"sync/atomic"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// scope is the instrumentation scope of every span Taskgraph makes.
const scope = "github.com/taskgraph/taskgraph"

// Propagator reads and writes W3C trace context (traceparent, tracestate).
var Propagator propagation.TextMapPropagator = propagation.TraceContext{}

// tracer is the server's tracer while tracing is on (nil: off).
var tracer atomic.Pointer[trace.Tracer]

// Configured reports whether the environment asks for traces: an OTLP
// endpoint is set.
func Configured() bool {
	return os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// Provider is a tracer provider and how to stop it.
type Provider struct {
	sdk *sdktrace.TracerProvider
}

// NewProvider builds a provider from the OTEL_* environment: an OTLP/HTTP
// (protobuf) exporter when an endpoint is configured, behind a batch span
// processor; none otherwise (spans are made — their context still
// propagates — but not exported). The service is named by
// OTEL_SERVICE_NAME (or OTEL_RESOURCE_ATTRIBUTES), defaultService if
// neither names it.
func NewProvider(ctx context.Context, defaultService string) (*Provider, error) {
	res, err := resource.Merge(
		resource.NewSchemaless(semconv.ServiceName(defaultService)),
		must(resource.New(ctx, resource.WithFromEnv(), resource.WithTelemetrySDK())),
	)
	if err != nil {
		return nil, err
	}
	opts := []sdktrace.TracerProviderOption{sdktrace.WithResource(res)}
	if Configured() {
		exp, err := otlptracehttp.New(ctx)
		if err != nil {
			return nil, err
		}
		opts = append(opts, sdktrace.WithBatcher(exp))
	}
	return &Provider{sdk: sdktrace.NewTracerProvider(opts...)}, nil
}

func must(r *resource.Resource, err error) *resource.Resource {
	if err != nil && r == nil {
		return resource.Empty()
	}
	return r // a partial resource (an unparsable attribute) keeps what parsed
}

// Tracer is the provider's tracer.
func (p *Provider) Tracer() trace.Tracer { return p.sdk.Tracer(scope) }

// Shutdown exports the spans still buffered and stops the provider.
func (p *Provider) Shutdown(ctx context.Context) error { return p.sdk.Shutdown(ctx) }

// Install makes p the server's provider: Start and Child make spans with it
// until the returned function uninstalls it, flushes and shuts it down.
func Install(p *Provider) (shutdown func(ctx context.Context) error) {
	t := p.Tracer()
	tracer.Store(&t)
	otel.SetTracerProvider(p.sdk)
	otel.SetTextMapPropagator(Propagator)
	return func(ctx context.Context) error {
		tracer.Store(nil)
		otel.SetTracerProvider(noop.NewTracerProvider())
		return errors.Join(p.sdk.ForceFlush(ctx), p.Shutdown(ctx))
	}
}

// Enabled reports whether the server traces.
func Enabled() bool { return tracer.Load() != nil }

// Start starts a span whatever the context holds (a request's root, or the
// child of a remote parent the context carries). Off: ctx and a span that
// does nothing.
func Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	t := tracer.Load()
	if t == nil {
		return ctx, None
	}
	return (*t).Start(ctx, name, opts...)
}

// Child starts a span under ctx's span when that one records; otherwise ctx
// and a span that does nothing (tracing off, or work outside a traced
// request).
func Child(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	t := tracer.Load()
	if t == nil || !trace.SpanFromContext(ctx).IsRecording() {
		return ctx, None
	}
	return (*t).Start(ctx, name, opts...)
}

// Recording reports whether ctx's span records: a Child would be made.
func Recording(ctx context.Context) bool {
	return tracer.Load() != nil && trace.SpanFromContext(ctx).IsRecording()
}

// None is the span of work that is not traced: it records nothing.
var None = trace.SpanFromContext(context.Background())
