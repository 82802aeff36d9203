package main

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/testdb"
)

// TestCORS covers --allowed-origins on HTTP: a listed origin's preflight is
// answered 204 with the CORS headers and its POSTs carry
// Access-Control-Allow-Origin; another origin gets no CORS headers.
func TestCORS(t *testing.T) {
	t.Parallel()
	const app = "http://localhost:5173"
	s := startServer(t, testdb.SQLite(t), "--allowed-origins", app)

	preflight := func(t *testing.T, origin, headers string) *http.Response {
		t.Helper()
		req, err := http.NewRequest(http.MethodOptions, s.URL+"/graphql", nil)
		require.NoError(t, err)
		req.Header.Set("Origin", origin)
		req.Header.Set("Access-Control-Request-Method", "POST")
		req.Header.Set("Access-Control-Request-Headers", headers)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp
	}

	t.Run("preflight from an allowed origin", func(t *testing.T) {
		// Browsers send the header names lower-case and sorted (Fetch standard).
		resp := preflight(t, app, "apollo-require-preflight,apollographql-client-name,apollographql-client-version,authorization,content-type,x-apollo-operation-name")
		require.Equal(t, http.StatusNoContent, resp.StatusCode)
		require.Equal(t, app, resp.Header.Get("Access-Control-Allow-Origin"))
		// rs/cors names the requested method (of GET, POST, OPTIONS).
		require.Equal(t, "POST", resp.Header.Get("Access-Control-Allow-Methods"))
		allowed := strings.ToLower(resp.Header.Get("Access-Control-Allow-Headers"))
		for _, h := range []string{"authorization", "content-type", "apollo-require-preflight", "apollographql-client-name"} {
			require.Contains(t, allowed, h)
		}
		require.Equal(t, "600", resp.Header.Get("Access-Control-Max-Age"))
		require.Contains(t, strings.Join(resp.Header.Values("Vary"), ","), "Origin")
	})

	t.Run("preflight from another origin", func(t *testing.T) {
		resp := preflight(t, "https://evil.example", "authorization,content-type")
		require.Empty(t, resp.Header.Get("Access-Control-Allow-Origin"))
		require.Empty(t, resp.Header.Get("Access-Control-Allow-Headers"))
	})

	post := func(t *testing.T, origin string) *http.Response {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, s.URL+"/graphql", strings.NewReader(`{"query":"{ viewer { slug } }"}`))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+s.AdminToken)
		req.Header.Set("Origin", origin)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
		require.Contains(t, string(body), `"slug"`)
		return resp
	}
	t.Run("POST from an allowed origin", func(t *testing.T) {
		resp := post(t, app)
		require.Equal(t, app, resp.Header.Get("Access-Control-Allow-Origin"))
		require.Contains(t, strings.Join(resp.Header.Values("Vary"), ","), "Origin")
	})
	t.Run("POST from another origin", func(t *testing.T) {
		resp := post(t, "https://evil.example")
		require.Empty(t, resp.Header.Get("Access-Control-Allow-Origin"))
	})
}

// TestUnauthorizedStatus covers HTTP 401 with WWW-Authenticate for no or a
// bad token, under both response media types and on GET, with the GraphQL
// error body; and the anonymous __typename-only query that GraphQL-over-HTTP
// conformance checks send.
func TestUnauthorizedStatus(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		send := func(t *testing.T, method, token, accept, query string) (*http.Response, gqlResponse) {
			t.Helper()
			var req *http.Request
			var err error
			if method == http.MethodGet {
				req, err = http.NewRequest(method, s.URL+"/graphql?query="+strings.ReplaceAll(query, " ", "+"), nil)
			} else {
				req, err = http.NewRequest(method, s.URL+"/graphql", strings.NewReader(string(mustJSON(t, map[string]any{"query": query}))))
				req.Header.Set("Content-Type", "application/json")
			}
			require.NoError(t, err)
			if accept != "" {
				req.Header.Set("Accept", accept)
			}
			if token != "" {
				req.Header.Set("Authorization", "Bearer "+token)
			}
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			var out gqlResponse
			require.NoError(t, decodeJSON(resp.Body, &out))
			return resp, out
		}
		for _, accept := range []string{"application/json", "application/graphql-response+json", ""} {
			for _, method := range []string{http.MethodPost, http.MethodGet} {
				t.Run(method+" no token "+accept, func(t *testing.T) {
					resp, out := send(t, method, "", accept, `{ viewer { id } }`)
					require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
					require.Equal(t, `Bearer realm="taskgraph"`, resp.Header.Get("WWW-Authenticate"))
					require.Equal(t, "UNAUTHENTICATED", out.code())
				})
				t.Run(method+" bad token "+accept, func(t *testing.T) {
					resp, out := send(t, method, "tg_not-a-real-token", accept, `{ viewer { id } }`)
					require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
					require.Contains(t, resp.Header.Get("WWW-Authenticate"), `error="invalid_token"`)
					require.Equal(t, "UNAUTHENTICATED", out.code())
				})
			}
		}
		t.Run("anonymous __typename", func(t *testing.T) {
			resp, out := send(t, http.MethodPost, "", "application/graphql-response+json", `{ __typename }`)
			require.Equal(t, http.StatusOK, resp.StatusCode)
			require.Empty(t, out.Errors)
			require.JSONEq(t, `{"__typename":"Query"}`, string(out.Data))
			// Anything more is refused before parsing against the schema.
			for _, q := range []string{`{ __typename viewer { id } }`, `{ __schema { types { name } } }`, `mutation { __typename }`, `{ ...F } fragment F on Query { __typename }`} {
				resp, out := send(t, http.MethodPost, "", "", q)
				require.Equal(t, http.StatusUnauthorized, resp.StatusCode, q)
				require.Equal(t, "UNAUTHENTICATED", out.code(), q)
			}
		})
		t.Run("with a token", func(t *testing.T) {
			resp, out := send(t, http.MethodPost, s.AdminToken, "application/graphql-response+json", `{ viewer { slug } }`)
			require.Equal(t, http.StatusOK, resp.StatusCode)
			require.Empty(t, out.Errors)
			require.Empty(t, resp.Header.Get("WWW-Authenticate"))
		})
	})
}
