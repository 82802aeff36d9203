package tracing

import (
	"context"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// TestOffCostsNothing: without an installed provider the helpers make no
// span, leave the context as it is and allocate nothing.
func TestOffCostsNothing(t *testing.T) {
	ctx := context.Background()
	allocs := testing.AllocsPerRun(100, func() {
		c, span := Start(ctx, "request")
		c, child := Child(c, "statement")
		if c != ctx || span.IsRecording() || child.IsRecording() || Recording(c) {
			t.Fatal("a span while tracing is off")
		}
		child.End()
		span.End()
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per request while off", allocs)
	}
}

// TestInstall: an installed provider makes a request's span, children only
// under a recording parent, and uninstalling turns tracing off again.
func TestInstall(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	shutdown := Install(&Provider{sdk: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))})
	if !Enabled() {
		t.Fatal("not enabled after Install")
	}
	if _, orphan := Child(context.Background(), "orphan"); orphan.IsRecording() {
		t.Fatal("a child without a parent")
	}
	ctx, root := Start(context.Background(), "request")
	_, child := Child(ctx, "statement")
	child.End()
	root.End()
	if err := shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if Enabled() {
		t.Fatal("still enabled after shutdown")
	}
	ended := rec.Ended()
	if len(ended) != 2 || ended[0].Name() != "statement" || ended[0].Parent().SpanID() != ended[1].SpanContext().SpanID() {
		t.Fatalf("spans: %v", ended)
	}
}
