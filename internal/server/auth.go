package server

import (
	"context"
	"fmt"
	"net/http"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/taskgraph/taskgraph/internal/auth"
	"github.com/taskgraph/taskgraph/internal/domain"
)

// unauthenticatedMessage tells a client what to send; the API fixes the code.
const unauthenticatedMessage = "authentication required: send Authorization: Bearer <token>"

// authenticate resolves the bearer token into a Principal in the context. A
// missing or unknown token leaves none; the GraphQL layer (requireAuth) turns
// that into UNAUTHENTICATED per operation. A failing Authenticate (database
// down) is remembered in the context and answered as INTERNAL there, so that
// every failure reaches the client in the same GraphQL shape.
func (s *server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token := auth.BearerToken(r.Header.Get("Authorization"))
		ctx, err := s.authenticateToken(r.Context(), token)
		if err != nil {
			ctx = context.WithValue(ctx, authErrorKey, err)
		}
		ch := &challenge{badToken: err == nil && token != "" && auth.FromContext(ctx) == nil}
		ctx = context.WithValue(ctx, challengeKey{}, ch)
		next.ServeHTTP(&challengeWriter{ResponseWriter: w, ctx: ctx}, r.WithContext(ctx))
	})
}

// authenticateToken returns ctx carrying the token's Principal when the token
// is valid. The websocket transport's InitFunc (a later issue) calls it with the
// token from connection_init.
func (s *server) authenticateToken(ctx context.Context, token string) (context.Context, error) {
	if token == "" || s.cfg.Authenticate == nil {
		return ctx, nil
	}
	p, err := s.cfg.Authenticate(ctx, token)
	if err != nil {
		return ctx, fmt.Errorf("authenticate bearer token: %w", err)
	}
	if p == nil {
		return ctx, nil
	}
	return auth.WithPrincipal(ctx, p), nil
}

func authErrorFrom(ctx context.Context) error {
	err, _ := ctx.Value(authErrorKey).(error)
	return err
}

// requireAuth rejects every GraphQL operation without a Principal. It checks
// twice on purpose: as a parameter mutator, before the query is parsed or
// validated, so anonymous clients learn nothing about the schema and cannot
// fill the caches; and as an operation interceptor, the hook every transport
// (HTTP now, websocket later) passes through before execution.
type requireAuth struct {
	present graphql.ErrorPresenterFunc
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationParameterMutator
	graphql.OperationInterceptor
} = requireAuth{}

func (requireAuth) ExtensionName() string                   { return "RequireAuthentication" }
func (requireAuth) Validate(graphql.ExecutableSchema) error { return nil }

func (requireAuth) MutateOperationParameters(ctx context.Context, p *graphql.RawParams) *gqlerror.Error {
	if anonymousAllowedRaw(ctx, p) {
		return nil
	}
	return authCheck(ctx)
}

func (a requireAuth) InterceptOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	if anonymousAllowedOp(ctx) {
		return next(ctx)
	}
	if err := authCheck(ctx); err != nil {
		// A short-circuited response bypasses the executor's presenter.
		return graphql.OneShot(&graphql.Response{Errors: gqlerror.List{a.present(ctx, err)}})
	}
	return next(ctx)
}

// authCheck returns the error for a context without a usable Principal.
func authCheck(ctx context.Context) *gqlerror.Error {
	if err := authErrorFrom(ctx); err != nil {
		// No code of its own: the presenter answers UNAVAILABLE when the
		// database could not be reached, else logs it and answers INTERNAL.
		return gqlerror.Wrap(err)
	}
	if auth.FromContext(ctx) != nil {
		return nil
	}
	markRefused(ctx)
	derr := &domain.Error{Code: domain.CodeUnauthenticated, Message: unauthenticatedMessage}
	return &gqlerror.Error{
		Err:        derr,
		Message:    derr.Message,
		Extensions: map[string]any{"code": string(derr.Code)},
	}
}
