package graph

import (
	"context"
	"maps"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/service"
	"github.com/taskgraph/taskgraph/internal/sessions"
)

// endSubscription hands the error that ends a subscription early to the
// websocket transport, which sends it as the subscription's error message
// once the events handed over before it are written. It is shaped as the
// server's error presenter shapes domain errors: message, extensions.code and
// the details (extensions.cursor: where to resubscribe from).
func endSubscription(ctx context.Context, err error) {
	out := &gqlerror.Error{Message: "internal error", Path: graphql.GetPath(ctx),
		Extensions: map[string]any{"code": string(domain.CodeInternal)}}
	if de, ok := domain.AsError(err); ok {
		out.Message = de.Message
		out.Extensions = make(map[string]any, len(de.Details)+1)
		maps.Copy(out.Extensions, de.Details)
		out.Extensions["code"] = string(de.Code)
	}
	if tap := domain.StreamTapFrom(ctx); tap != nil && tap.End != nil {
		tap.End(out) // a shared execution: its members are told
		return
	}
	defer func() {
		// Only the websocket transport carries subscriptions (the server
		// refuses them elsewhere) and gives ctx a place for this error;
		// without one there is nobody left to tell.
		_ = recover()
	}()
	transport.AddSubscriptionError(ctx, out)
}

// tapStream hands a shared execution (ctx carries a domain.StreamTap) the
// seq and cursor of each event, just before the executor receives it; without
// a tap the stream is returned as it is.
func tapStream(ctx context.Context, events <-chan domain.ExecutionEvent, err error) (<-chan domain.ExecutionEvent, error) {
	tap := domain.StreamTapFrom(ctx)
	if err != nil || tap == nil || tap.Handed == nil {
		return events, err
	}
	tap.Tapped = true
	out := make(chan domain.ExecutionEvent)
	go func() {
		defer close(out)
		for ev := range events {
			r := ev.Record()
			tap.Handed(r.Seq, domain.EventCursor(r.ProjectID, r.Seq))
			select {
			case out <- ev:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, nil
}

// SharedSubscriptions tells the server's multiplexing which subscriptions
// stream "from now on", so that subscribers of the same selection, arguments
// and visibility may share one execution, and where such a stream stands
// when one more subscriber joins it.
type SharedSubscriptions struct {
	Svc      *service.Service
	Sessions *sessions.Service
}

// sharedStreams are the subscription fields that stream from now on when
// asked without a cursor, each with the argument naming what it streams.
// Not runEvents, which replays the run from its first event.
var sharedStreams = map[string]string{"projectEvents": "projectId", "sessionEvents": "sessionId"}

// Shares reports whether field with args streams from now on: one of
// sharedStreams without after (a replay from a cursor of its own).
func (SharedSubscriptions) Shares(field string, args map[string]any) bool {
	arg, ok := sharedStreams[field]
	_, isString := args[arg].(string)
	return ok && isString && args["after"] == nil
}

// Join checks that the caller of ctx may subscribe to field with args and
// returns the stream's position now: a subscriber joining a running shared
// execution is handed only the events after it.
func (s SharedSubscriptions) Join(ctx context.Context, field string, args map[string]any) (int64, string, error) {
	id, _ := args[sharedStreams[field]].(string)
	if field == "sessionEvents" {
		return s.Sessions.SessionStreamHead(ctx, id)
	}
	return s.Svc.Events.ProjectStreamHead(ctx, id)
}
