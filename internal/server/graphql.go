package server

import (
	"context"
	"net/http"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/tracing"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// Cache sizes, as gqlgen's NewDefaultServer chooses them.
const (
	queryCacheSize = 1000 // parsed and validated documents
	apqCacheSize   = 100  // persisted query texts by hash
)

// graphQLHandler builds the gqlgen server. Extension order matters: gqlgen
// runs parameter and context mutators in the order they are added, and the
// first interceptor added is the outermost.
func (s *server) graphQLHandler() http.Handler {
	srv := handler.New(withPagedComplexity(s.cfg.Schema))

	// Transports: the first whose Supports matches handles the request.
	// The websocket (graphql-transport-ws and graphql-ws) goes first: its
	// InitFunc authenticates the connection_init payload, after which
	// requireAuth sees the principal in the operation context as for HTTP.
	srv.AddTransport(s.newWebsocketTransport())
	srv.AddTransport(transport.GET{})
	srv.AddTransport(postJSON{})
	// File uploads (graphql-multipart-request-spec); guardUpload has checked
	// the request's headers and length before it gets here.
	srv.AddTransport(transport.MultipartForm{MaxUploadSize: s.cfg.MaxUploadBytes + s.cfg.MaxBodyBytes, MaxMemory: uploadMemory})

	queryCache := lru.New[*ast.QueryDocument](queryCacheSize)
	srv.SetQueryCache(queryCache)
	srv.SetParserTokenLimit(s.cfg.ParserTokenLimit)
	srv.SetDisableSuggestion(!s.cfg.FieldSuggestions)
	srv.SetErrorPresenter(s.presentError)
	srv.SetRecoverFunc(s.recoverPanic)

	// Outermost, so that it sees every response, short-circuited ones too.
	srv.Use(observeGraphQL{m: s.metrics})
	if tracing.Enabled() {
		// Next, so that their spans hold every other interceptor's work
		// and see the responses they short-circuit.
		srv.Use(traceOperations{})
		srv.Use(traceDeliveries{})
	}
	// Before persisted queries: anonymous clients must not fill the APQ cache.
	srv.Use(requireAuth{present: s.presentError})
	srv.Use(tokenStillLive{s: s.sockets})
	// Every query and subscription event reads from the database under a budget
	// (domain.WithReadBudget): its loaders and resolvers stop with
	// LIMIT_EXCEEDED once they have read readBudget bytes, so the memory of
	// one request stays near the response limit however it is shaped. Outer
	// to the operation context, whose loaders capture it.
	readBudget := s.readBudget()
	srv.AroundOperations(func(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
		// Mutations are left out: what their rules read (a run's tasks, a
		// plan's input) is bounded by the data, not shaped by the client.
		if op := graphql.GetOperationContext(ctx).Operation; op != nil && op.Operation == ast.Mutation {
			return next(ctx)
		}
		return next(domain.WithReadBudget(ctx, readBudget))
	})
	if oc := s.cfg.OperationContext; oc != nil {
		srv.AroundOperations(func(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
			return next(oc(ctx))
		})
		// A subscription is one operation that lives for hours: each of its
		// events is resolved with a fresh context of its own, so that nested
		// fields see current data and nothing accumulates.
		srv.AroundResponses(func(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
			if graphql.HasOperationContext(ctx) {
				if op := graphql.GetOperationContext(ctx).Operation; op != nil && op.Operation == ast.Subscription {
					ctx = oc(domain.WithReadBudget(ctx, readBudget))
				}
			}
			return next(ctx)
		})
	}
	// Last around the responses: a response whose data came out larger than
	// the limit is not sent.
	srv.AroundResponses(func(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
		resp := next(ctx)
		if resp != nil && len(resp.Data) > s.cfg.MaxResponseBytes {
			s.metrics.countError(string(domain.CodeLimitExceeded))
			e := gqlerror.Errorf("the response is larger than %d bytes; ask for fewer fields or smaller pages", s.cfg.MaxResponseBytes)
			e.Extensions = map[string]any{"code": string(domain.CodeLimitExceeded), "max": s.cfg.MaxResponseBytes}
			return &graphql.Response{Errors: gqlerror.List{e}, Extensions: resp.Extensions}
		}
		return resp
	})
	// Inside the operation context, which gives the request its loaders.
	if s.cfg.TrackLevels != nil && s.cfg.ConcurrentFields != nil {
		srv.Use(newLevelDispatch(s.cfg.TrackLevels, s.cfg.Schema.Schema(), s.cfg.ConcurrentFields, s.metrics))
	}
	srv.Use(subscriptionsOnWebsocket{})
	if s.cfg.Introspection {
		srv.Use(extension.Introspection{})
	}
	srv.Use(extension.AutomaticPersistedQuery{Cache: lru.New[string](apqCacheSize)})
	// After persisted queries, which fill in the query text; before the
	// executor parses and validates it.
	srv.Use(documentLimits{maxSelections: s.cfg.MaxSelections, maxSetSize: s.cfg.MaxSelectionSetSize,
		tokenLimit: s.cfg.ParserTokenLimit, cache: queryCache})
	// The Float numbers of the variables as float64, before the executor
	// coerces them (a vector of floats is then not parsed three times).
	srv.Use(newFloatVariables(s.cfg.Schema.Schema(), queryCache))
	// Before the complexity limit: it bounds the work of the complexity walk.
	srv.Use(queryLimits{maxDepth: s.cfg.MaxDepth, maxFields: s.cfg.MaxComplexity})
	// Int range and NUL characters in every argument, variables substituted.
	srv.Use(inputChecks{schema: s.cfg.Schema.Schema()})
	srv.Use(extension.FixedComplexityLimit(s.cfg.MaxComplexity))
	return srv
}

// readBudget is the bytes one operation (or one subscription event) may read
// from the database: twice the response limit, for what is read but not
// shown (keys, cursors, columns of rows a filter drops).
func (s *server) readBudget() int64 {
	return 2 * int64(s.cfg.MaxResponseBytes)
}
