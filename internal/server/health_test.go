package server

import (
	"context"
	"database/sql"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestHealthz(t *testing.T) {
	b := setup(t, func(c *Config) {
		c.Ready = func(context.Context) error { return errors.New("down") }
	})
	status, body := b.get(t, "/healthz")
	require.Equal(t, http.StatusOK, status, "liveness does not depend on the database")
	require.Equal(t, "ok", body)
}

func TestReadyz(t *testing.T) {
	tests := []struct {
		name   string
		ready  func(context.Context) error
		status int
		body   string
	}{
		{name: "no probe configured", status: 200, body: "ok"},
		{name: "database answers", ready: func(context.Context) error { return nil }, status: 200, body: "ok"},
		{
			name:   "database fails",
			ready:  func(context.Context) error { return errors.New("dial tcp 10.1.2.3:5432: connection refused") },
			status: 503, body: "database unreachable",
		},
		{
			name:   "database too slow",
			ready:  func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() },
			status: 503, body: "database unreachable",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, func(c *Config) { c.Ready = tt.ready })
			start := time.Now()
			status, body := b.get(t, "/readyz")
			require.Less(t, time.Since(start), readyTimeout+time.Second)
			require.Equal(t, tt.status, status)
			require.Equal(t, tt.body, body)
			if tt.status != 200 {
				failed := b.logs.find(t, "readiness check failed")
				require.Len(t, failed, 1)
				require.NotEmpty(t, failed[0]["error"])
				require.NotEmpty(t, failed[0]["request_id"])
			}
		})
	}
}

func TestRoutes(t *testing.T) {
	b := setup(t)
	tests := []struct {
		method, path string
		status       int
		contains     string
	}{
		{"GET", "/", 200, "Taskgraph"},
		{"GET", "/healthz", 200, "ok"},
		{"GET", "/nope", 404, ""},
		{"PUT", "/graphql", 405, ""},
		{"DELETE", "/healthz", 405, ""},
	}
	for _, tt := range tests {
		rec := httptest.NewRecorder()
		b.handler.ServeHTTP(rec, httptest.NewRequest(tt.method, tt.path, nil))
		require.Equal(t, tt.status, rec.Code, "%s %s", tt.method, tt.path)
		require.Contains(t, rec.Body.String(), tt.contains)
	}
}

func TestMetrics(t *testing.T) {
	b := setup(t, func(c *Config) {
		c.DBStats = func() sql.DBStats {
			return sql.DBStats{MaxOpenConnections: 10, OpenConnections: 4, InUse: 3, Idle: 1, WaitCount: 5, WaitDuration: 1500 * time.Millisecond}
		}
	})
	b.post(t, tokenGood, gqlRequest{Query: `query Viewer { viewer }`})
	b.post(t, tokenGood, gqlRequest{Query: `query Viewer { viewer }`})
	b.post(t, tokenGood, gqlRequest{Query: `{ viewer }`})
	b.post(t, "", gqlRequest{Query: `query Viewer { viewer }`})
	b.post(t, tokenGood, gqlRequest{Query: `query Broken { broken boom }`})
	b.post(t, tokenGood, gqlRequest{Query: `query ` + strings.Repeat("Long", 20) + ` { viewer }`})
	b.post(t, tokenGood, gqlRequest{Query: `query Typo { viewr }`})
	b.post(t, tokenGood, gqlRequest{Query: `query Deep ` + nested(20)})
	b.get(t, "/healthz")
	b.get(t, "/nope")
	b.handler.ServeHTTP(httptest.NewRecorder(), newPost(`{"query":"`+strings.Repeat(" ", 2<<20)+`"}`, tokenGood))

	status, body := b.get(t, "/metrics")
	require.Equal(t, 200, status)
	for _, want := range []string{
		`taskgraph_graphql_requests_total{operation="Viewer",status="ok"} 2`,
		// Rejected before parsing (no token) or validation failed: the
		// name is only known when the client sends operationName.
		`taskgraph_graphql_requests_total{operation="anonymous",status="error"} 2`,
		`taskgraph_graphql_requests_total{operation="anonymous",status="ok"} 1`,
		`taskgraph_graphql_requests_total{operation="Broken",status="error"} 1`,
		`taskgraph_graphql_requests_total{operation="other",status="ok"} 1`,
		`taskgraph_graphql_requests_total{operation="Deep",status="error"} 1`,
		`taskgraph_graphql_request_duration_seconds_count{operation="Viewer"} 2`,
		`taskgraph_graphql_errors_total{code="UNAUTHENTICATED"} 1`,
		`taskgraph_graphql_errors_total{code="INTERNAL"} 2`,
		`taskgraph_graphql_errors_total{code="GRAPHQL_VALIDATION_FAILED"} 1`,
		`taskgraph_graphql_errors_total{code="LIMIT_EXCEEDED"} 2`,
		// Typo's validation failure is 200 over application/json.
		`taskgraph_http_requests_total{code="200",path="/graphql"} 7`,
		`taskgraph_http_requests_total{code="401",path="/graphql"} 1`, // the unauthenticated request
		`taskgraph_http_requests_total{code="413",path="/graphql"} 1`,
		`taskgraph_http_requests_total{code="200",path="/healthz"} 1`,
		`taskgraph_http_requests_total{code="404",path="other"} 1`,
		`taskgraph_db_max_open_connections 10`,
		`taskgraph_db_open_connections 4`,
		`taskgraph_db_in_use_connections 3`,
		`taskgraph_db_idle_connections 1`,
		`taskgraph_db_wait_count_total 5`,
		`taskgraph_db_wait_duration_seconds_total 1.5`,
	} {
		require.Contains(t, body, want+"\n")
	}
}

func TestNewTwiceOnOneRegistry(t *testing.T) {
	b := setup(t)
	require.NotPanics(t, func() {
		New(Config{Schema: stubSchema(t), Registry: b.registry, DBStats: func() sql.DBStats { return sql.DBStats{} }})
	})
}

func TestNewWithoutSchemaPanics(t *testing.T) {
	require.PanicsWithValue(t, "server: Config.Schema is nil", func() { New(Config{}) })
}
