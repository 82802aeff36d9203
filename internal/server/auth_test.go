package server

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/stretchr/testify/require"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/taskgraph/taskgraph/internal/auth"
)

func TestAuthentication(t *testing.T) {
	tests := []struct {
		name          string
		authorization string
		query         string
		wantCode      string // "" means: success
		wantMessage   string
	}{
		{name: "valid token", authorization: "Bearer " + tokenGood, query: `{ viewer }`},
		{name: "scheme is case-insensitive", authorization: "bearer " + tokenGood, query: `{ viewer }`},
		{name: "no header", query: `{ viewer }`, wantCode: "UNAUTHENTICATED", wantMessage: unauthenticatedMessage},
		{name: "unknown token", authorization: "Bearer tg_nope", query: `{ viewer }`, wantCode: "UNAUTHENTICATED", wantMessage: unauthenticatedMessage},
		{name: "not a bearer token", authorization: "Basic dXNlcjpwYXNz", query: `{ viewer }`, wantCode: "UNAUTHENTICATED", wantMessage: unauthenticatedMessage},
		{
			name:  "checked before validation: anonymous clients learn nothing about the schema",
			query: `{ secretField }`, wantCode: "UNAUTHENTICATED", wantMessage: unauthenticatedMessage,
		},
		{
			name:  "introspection needs a token too",
			query: `{ __schema { queryType { name } } }`, wantCode: "UNAUTHENTICATED", wantMessage: unauthenticatedMessage,
		},
		{name: "authenticator failure", authorization: "Bearer " + tokenDBError, query: `{ viewer }`, wantCode: "INTERNAL", wantMessage: "internal error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := setup(t, func(c *Config) { c.Introspection = true })
			r := newPost(`{"query":`+quoteJSON(tt.query)+`}`, "")
			if tt.authorization != "" {
				r.Header.Set("Authorization", tt.authorization)
			}
			res, out := b.do(t, r)
			// No or a bad credential is HTTP 401 with WWW-Authenticate: Bearer,
			// so HTTP tooling sees it; anything else stays 200.
			if tt.wantCode == "UNAUTHENTICATED" {
				require.Equal(t, http.StatusUnauthorized, res.StatusCode)
				require.Contains(t, res.Header.Get("WWW-Authenticate"), "Bearer")
			} else {
				require.Equal(t, http.StatusOK, res.StatusCode)
			}
			if tt.wantCode == "" {
				require.Empty(t, out.Errors)
				require.JSONEq(t, `{"viewer":"user-1"}`, string(out.Data))
				return
			}
			require.Len(t, out.Errors, 1)
			require.Equal(t, tt.wantMessage, out.Errors[0].Message)
			require.Equal(t, tt.wantCode, out.Errors[0].Extensions["code"])
			require.Equal(t, "null", string(out.Data))
		})
	}
}

func TestAuthenticatorFailureIsLogged(t *testing.T) {
	b := setup(t)
	res, _ := b.post(t, tokenDBError, gqlRequest{Query: `{ viewer }`})
	logged := b.logs.find(t, "graphql internal error")
	require.Len(t, logged, 1)
	require.Contains(t, logged[0]["error"], "sql: database is closed")
	require.Equal(t, res.Header.Get(RequestIDHeader), logged[0]["request_id"])
}

func TestAuthenticationOverGET(t *testing.T) {
	b := setup(t)
	r := httptest.NewRequest(http.MethodGet, "/graphql?query="+url.QueryEscape(`{ viewer }`), nil)
	_, out := b.do(t, r)
	require.Equal(t, []string{"UNAUTHENTICATED"}, out.codes())

	r = httptest.NewRequest(http.MethodGet, "/graphql?query="+url.QueryEscape(`{ viewer }`), nil)
	r.Header.Set("Authorization", "Bearer "+tokenGood)
	_, out = b.do(t, r)
	require.Empty(t, out.Errors)
	require.JSONEq(t, `{"viewer":"user-1"}`, string(out.Data))
}

// The operation interceptor guards transports that do not pass through the
// parameter check first.
func TestRequireAuthInterceptsOperations(t *testing.T) {
	s := &server{log: setup(t).logger}
	ext := requireAuth{present: s.presentError}
	reached := false
	next := func(context.Context) graphql.ResponseHandler {
		reached = true
		return graphql.OneShot(&graphql.Response{Data: []byte(`{}`)})
	}

	resp := ext.InterceptOperation(context.Background(), next)(context.Background())
	require.False(t, reached)
	require.Equal(t, gqlerror.List{{
		Message:    unauthenticatedMessage,
		Extensions: map[string]any{"code": "UNAUTHENTICATED"},
		Err:        resp.Errors[0].Err,
	}}, resp.Errors)

	ctx := auth.WithPrincipal(context.Background(), &auth.Principal{UserID: "u"})
	resp = ext.InterceptOperation(ctx, next)(ctx)
	require.True(t, reached)
	require.Empty(t, resp.Errors)
}

func quoteJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
