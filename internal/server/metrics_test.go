package server

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// operationLabelValues lists the operation labels of
// taskgraph_graphql_requests_total.
func operationLabelValues(t *testing.T, body string) []string {
	t.Helper()
	var out []string
	for _, m := range regexp.MustCompile(`taskgraph_graphql_requests_total\{operation="([^"]*)"`).FindAllStringSubmatch(body, -1) {
		if !slices.Contains(out, m[1]) {
			out = append(out, m[1])
		}
	}
	slices.Sort(out)
	return out
}

// TestOperationLabelsAreBounded: callers choose operation names; only the
// first MaxOperationLabels names of validated operations become labels, the
// rest and names sent with documents that never became an operation are
// "other".
func TestOperationLabelsAreBounded(t *testing.T) {
	b := setup(t, func(c *Config) { c.MaxOperationLabels = 3 })
	for i := range 50 {
		b.post(t, tokenGood, gqlRequest{Query: fmt.Sprintf(`query Op%d { viewer }`, i)})
	}
	b.post(t, tokenGood, gqlRequest{Query: `query Op1 { viewer }`}) // seen: keeps its label
	// Names of documents that do not parse or validate are not trusted.
	b.post(t, tokenGood, gqlRequest{Query: `query Bogus { viewr }`, OperationName: "Bogus"})
	b.post(t, tokenGood, gqlRequest{Query: `query Unparsable {`, OperationName: "Unparsable"})
	b.post(t, "", gqlRequest{Query: `query Anon { viewer }`, OperationName: "Anon"})
	b.post(t, tokenGood, gqlRequest{Query: `{ viewer }`})

	status, body := b.get(t, "/metrics")
	require.Equal(t, 200, status)
	require.Equal(t, []string{"Op0", "Op1", "Op2", "anonymous", "other"}, operationLabelValues(t, body))
	require.Contains(t, body, `taskgraph_graphql_requests_total{operation="Op1",status="ok"} 2`+"\n")
	require.Contains(t, body, `taskgraph_graphql_requests_total{operation="other",status="ok"} 47`+"\n")
	require.Contains(t, body, `taskgraph_graphql_requests_total{operation="other",status="error"} 2`+"\n")
	// Refused before its parameters are read.
	require.Contains(t, body, `taskgraph_graphql_requests_total{operation="anonymous",status="error"} 1`+"\n")
}

func TestMetricsToken(t *testing.T) {
	b := setup(t, func(c *Config) { c.MetricsToken = "s3cret" })
	for _, tc := range []struct {
		header string
		status int
	}{
		{"", http.StatusUnauthorized},
		{"Bearer wrong", http.StatusUnauthorized},
		{"Bearer " + tokenGood, http.StatusUnauthorized}, // an API token is not the metrics token
		{"Bearer s3cret", http.StatusOK},
	} {
		r := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		if tc.header != "" {
			r.Header.Set("Authorization", tc.header)
		}
		rec := httptest.NewRecorder()
		b.handler.ServeHTTP(rec, r)
		require.Equal(t, tc.status, rec.Code, "Authorization: %q", tc.header)
		if tc.status == http.StatusOK {
			require.Contains(t, rec.Body.String(), "taskgraph_http_requests_total")
		} else {
			require.NotContains(t, rec.Body.String(), "taskgraph_")
		}
	}
}

// TestSeparateMetrics: with SeparateMetrics the API handler has no /metrics;
// MetricsHandler serves the same registry (behind the token when set).
func TestSeparateMetrics(t *testing.T) {
	var cfg Config
	b := setup(t, func(c *Config) { c.SeparateMetrics = true; c.MetricsToken = "s3cret"; cfg = *c })
	b.post(t, tokenGood, gqlRequest{Query: `query Seen { viewer }`})
	status, _ := b.get(t, "/metrics")
	require.Equal(t, http.StatusNotFound, status)

	m := MetricsHandler(cfg)
	rec := httptest.NewRecorder()
	m.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	require.Equal(t, http.StatusUnauthorized, rec.Code)
	r := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	r.Header.Set("Authorization", "Bearer s3cret")
	rec = httptest.NewRecorder()
	m.ServeHTTP(rec, r)
	require.Equal(t, http.StatusOK, rec.Code)
	require.Contains(t, rec.Body.String(), `taskgraph_graphql_requests_total{operation="Seen",status="ok"} 1`)
	rec = httptest.NewRecorder()
	m.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/graphql", nil))
	require.Equal(t, http.StatusNotFound, rec.Code, "only /metrics there")
}
