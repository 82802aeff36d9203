package graph

import (
	"context"
	"maps"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/taskgraph/taskgraph/internal/domain"
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
	defer func() {
		// Only the websocket transport carries subscriptions (the server
		// refuses them elsewhere) and gives ctx a place for this error;
		// without one there is nobody left to tell.
		_ = recover()
	}()
	transport.AddSubscriptionError(ctx, out)
}
