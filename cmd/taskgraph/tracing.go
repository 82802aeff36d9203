package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/taskgraph/taskgraph/internal/tracing"
)

// tracingFlushTimeout bounds the export of the spans still buffered when
// the server stops.
const tracingFlushTimeout = 5 * time.Second

// startTracing installs the server's tracer provider when the OTEL_*
// environment configures an OTLP endpoint (OTLP/HTTP, protobuf; the
// service named by OTEL_SERVICE_NAME, "taskgraph" by default). The
// returned function, deferred by serve, flushes and stops it.
func startTracing(ctx context.Context, log *slog.Logger) (stop func(), err error) {
	if !tracing.Configured() {
		return func() {}, nil
	}
	p, err := tracing.NewProvider(ctx, "taskgraph")
	if err != nil {
		return nil, fmt.Errorf("tracing: %w", err)
	}
	shutdown := tracing.Install(p)
	log.Info("exporting traces over OTLP/HTTP")
	return func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), tracingFlushTimeout)
		defer cancel()
		if err := shutdown(sctx); err != nil {
			log.Error("flushing traces failed", "err", err)
		}
	}, nil
}

// clientTracer is the tracer of `taskgraph agent` and `taskgraph worker`:
// a root span per task (per queue item) whose context goes with every
// request made for it (traceparent), so that the server's spans of its
// claim, heartbeats, logs and report join one trace. Its spans are
// exported when the OTEL_* environment configures an endpoint (the service
// named by OTEL_SERVICE_NAME, service by default); otherwise they are only
// propagated.
type clientTracer struct {
	p      *tracing.Provider
	tracer trace.Tracer
}

func newClientTracer(ctx context.Context, service string) (*clientTracer, error) {
	p, err := tracing.NewProvider(ctx, service)
	if err != nil {
		return nil, fmt.Errorf("tracing: %w", err)
	}
	return &clientTracer{p: p, tracer: p.Tracer()}, nil
}

// start starts a root span: the work it names does not belong to a trace
// the caller was in.
func (t *clientTracer) start(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	return t.tracer.Start(ctx, name, trace.WithNewRoot(), trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
}

// stop exports the spans still buffered.
func (t *clientTracer) stop(ctx context.Context) {
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), tracingFlushTimeout)
	defer cancel()
	_ = t.p.Shutdown(sctx)
}
