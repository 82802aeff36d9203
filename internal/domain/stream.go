package domain

import "context"

// StreamTap is what a shared subscription's execution (internal/server's
// multiplexing) asks of the event stream it runs: the stream's context
// carries it, and the subscription resolvers that honour it report through
// it instead of through the transport of one connection.
type StreamTap struct {
	// Handed is called with each event's seq and cursor just before the
	// stream hands it to the executor, in order: the n-th call names the
	// n-th event the executor resolves.
	Handed func(seq int64, cursor string)
	// End receives the error that ends the stream early (already shaped for
	// the client).
	End func(error)
	// Tapped is set by the resolver once its stream started and reports
	// through Handed: a stream that did not start, or a resolver that does
	// not tap, is not shared.
	Tapped bool
}

type streamTapKey struct{}

// WithStreamTap returns ctx carrying t.
func WithStreamTap(ctx context.Context, t *StreamTap) context.Context {
	return context.WithValue(ctx, streamTapKey{}, t)
}

// StreamTapFrom returns the tap of ctx, or nil.
func StreamTapFrom(ctx context.Context) *StreamTap {
	t, _ := ctx.Value(streamTapKey{}).(*StreamTap)
	return t
}
