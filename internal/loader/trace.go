package loader

import (
	"context"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/taskgraph/taskgraph/internal/tracing"
)

// startBatch starts the span of b's fetch — one batched read of a level of
// the request — under the span of the context that opened the batch, when
// that one records. closed tells what closed it (the tracker's quiescence,
// its safety timer, or, untracked, the idle window or the size limit).
func (l *Loader[K, V]) startBatch(b *batch[K, V], closed *atomic.Int64) (context.Context, trace.Span) {
	by := "window"
	if t := l.timing.Tracker; t != nil && closed == &t.quiescent {
		by = "level"
	} else if t != nil && closed == &t.timed {
		by = "timer"
	}
	return l.startRead(b.ctx, len(b.keys), by)
}

// startRead starts the span of a fetch of n keys, closed by by ("read": no
// batch, Read), under ctx's span when that one records.
func (l *Loader[K, V]) startRead(ctx context.Context, n int, by string) (context.Context, trace.Span) {
	if !tracing.Recording(ctx) {
		return ctx, tracing.None
	}
	return tracing.Child(ctx, "batched read", trace.WithAttributes(
		attribute.Int("taskgraph.batch.keys", n), attribute.String("taskgraph.batch.closed_by", by)))
}

// endBatch records err on span and ends it.
func endBatch(span trace.Span, err error) {
	if !span.IsRecording() {
		return
	}
	if err != nil {
		span.SetStatus(codes.Error, "batched read failed")
	}
	span.End()
}
