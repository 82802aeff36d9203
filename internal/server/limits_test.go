package server

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql/introspection"
	"github.com/stretchr/testify/require"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
)

func graphiqlIntrospectionQuery(t testing.TB) string {
	t.Helper()
	b, err := os.ReadFile("testdata/graphiql_introspection.graphql")
	require.NoError(t, err)
	return string(b)
}

// nested returns `{ task(id: 1) { parent { … { id } } } }` with n parents:
// depth n+2.
func nested(n int) string {
	return "{ task(id: 1) { " + strings.Repeat("parent { ", n) + "id" + strings.Repeat(" }", n) + " } }"
}

func TestMeasureOperation(t *testing.T) {
	schema := testSchema(t)
	tests := []struct {
		name   string
		query  string
		depth  int
		fields int
	}{
		{"one field", `{ viewer }`, 1, 1},
		{"nested fields", `{ task(id: 1) { id parent { id } } }`, 3, 4},
		{"deep", nested(10), 12, 12},
		{"fragment spread", `{ task(id: 1) { ...T } } fragment T on Task { parent { parent { id } } }`, 4, 4},
		{"inline fragment", `{ task(id: 1) { ... on Task { parent { id } } } }`, 3, 3},
		{
			"fragment spread at two depths",
			`{ task(id: 1) { ...T parent { ...T } } } fragment T on Task { id parent { id } }`,
			4, 8,
		},
		{"__typename counts", `{ __typename task(id: 1) { __typename } }`, 2, 3},
		{"__schema adds no fields", `{ viewer __schema { queryType { name } } }`, 3, 1},
		{"gqlgen's introspection query", introspection.Query, 13, 0},
		{"GraphiQL's introspection query", graphiqlIntrospectionQuery(t), 15, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, errs := gqlparser.LoadQuery(schema, tt.query)
			require.Empty(t, errs)
			got := measureOperation(doc, doc.Operations[0])
			require.Equal(t, shape{depth: tt.depth, fields: tt.fields}, got)
		})
	}
}

func TestMeasureOperationSurvivesFragmentCycles(t *testing.T) {
	// Validation rejects cycles before the limits run; the walk must still end.
	doc, err := parser.ParseQuery(&ast.Source{Input: `
		{ task(id: 1) { ...A } }
		fragment A on Task { parent { ...B } }
		fragment B on Task { parent { ...A } }
		fragment C on Task { ...C }
	`})
	require.NoError(t, err)
	got := measureOperation(doc, doc.Operations[0])
	require.Equal(t, shape{depth: 3, fields: 3}, got)
}

func TestMeasureOperationFragmentBomb(t *testing.T) {
	schema := testSchema(t)
	doc, errs := gqlparser.LoadQuery(schema, fragmentBomb(70))
	require.Empty(t, errs)
	got := measureOperation(doc, doc.Operations[0])
	require.Equal(t, shape{depth: 1, fields: maxInt}, got, "2^70 fields saturate")
}

// fragmentBomb returns a query whose fragments spread the next one twice,
// n times: 2^n viewer selections in a few hundred bytes.
func fragmentBomb(n int) string {
	var sb strings.Builder
	sb.WriteString("query Bomb { ...F0 }\n")
	for i := range n {
		fmt.Fprintf(&sb, "fragment F%d on Query { ...F%d ...F%d }\n", i, i+1, i+1)
	}
	fmt.Fprintf(&sb, "fragment F%d on Query { viewer }\n", n)
	return sb.String()
}

func TestQueryLimitsEndToEnd(t *testing.T) {
	tests := []struct {
		name    string
		adjust  func(*Config)
		query   string
		status  int
		message string // "" means: no LIMIT_EXCEEDED error
	}{
		{name: "depth at the limit", query: nested(13), status: 200},
		{
			name:    "depth over the limit",
			query:   nested(14),
			status:  200,
			message: "operation has depth 16, which exceeds the limit of 15",
		},
		{
			name:    "configured depth",
			adjust:  func(c *Config) { c.MaxDepth = 3 },
			query:   nested(2),
			status:  200,
			message: "operation has depth 4, which exceeds the limit of 3",
		},
		{name: "pages within the complexity limit", query: `{ tasks(first: 100) { nodes { children(first: 100) { nodes { id title } } } } }`, status: 200},
		{name: "default page size", query: `{ tasks { nodes { children { nodes { id } } } } }`, status: 200},
		{
			name:    "pages over the complexity limit",
			query:   `{ tasks(first: 100) { nodes { children(first: 100) { nodes { children(first: 10) { totalCount } } } } } }`,
			status:  200,
			message: "operation has complexity 120201, which exceeds the limit of 50000",
		},
		{
			name:    "configured complexity",
			adjust:  func(c *Config) { c.MaxComplexity = 100 },
			query:   `{ tasks(first: 40) { nodes { id title } } }`,
			status:  200,
			message: "operation has complexity 121, which exceeds the limit of 100",
		},
		{
			name:    "fragment bomb is refused before the complexity walk",
			query:   fragmentBomb(40),
			status:  200,
			message: "operation selects 1099511627776 fields once its fragments are expanded, which exceeds the complexity limit of 50000",
		},
		{
			name:    "parser token limit",
			query:   "{ " + strings.Repeat("viewer ", 15001) + "}",
			status:  200, // a parse failure, over application/json
			message: "exceeded token limit of 15000",
		},
		{
			name:    "configured parser token limit",
			adjust:  func(c *Config) { c.ParserTokenLimit = 10 },
			query:   `{ task(id: 1) { id title parent { id } } }`,
			status:  200,
			message: "exceeded token limit of 10",
		},
		{
			name:   "GraphiQL introspection passes the default limits",
			adjust: func(c *Config) { c.Introspection = true },
			query:  graphiqlIntrospectionQuery(t),
			status: 200,
		},
		{
			name:   "gqlgen introspection passes the default limits",
			adjust: func(c *Config) { c.Introspection = true },
			query:  introspection.Query,
			status: 200,
		},
		{
			name:    "introspection counts towards depth",
			adjust:  func(c *Config) { c.Introspection = true },
			query:   `{ __type(name: "Task") { ofType { ofType { ofType { ofType { ofType { ofType { ofType { ofType { ofType { ofType { ofType { ofType { ofType { ofType { name } } } } } } } } } } } } } } } }`,
			status:  200,
			message: "operation has depth 16, which exceeds the limit of 15",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var adjust []func(*Config)
			if tt.adjust != nil {
				adjust = append(adjust, tt.adjust)
			}
			b := setup(t, adjust...)
			start := time.Now()
			res, out := b.post(t, tokenGood, gqlRequest{Query: tt.query})
			require.Less(t, time.Since(start), 5*time.Second)
			require.Equal(t, tt.status, res.StatusCode, "%+v", out.Errors)
			if tt.message == "" {
				require.NotContains(t, out.codes(), "LIMIT_EXCEEDED", "%+v", out.Errors)
				require.NotEqual(t, "null", string(out.Data), "the operation ran")
				return
			}
			require.Len(t, out.Errors, 1)
			require.Equal(t, tt.message, out.Errors[0].Message)
			require.Equal(t, "LIMIT_EXCEEDED", out.Errors[0].Extensions["code"])
		})
	}
}

const tooLargeBody = `{"errors":[{"message":"request body too large (limit 1048576 bytes)","extensions":{"code":"LIMIT_EXCEEDED"}}]}`

// chunked hides the length of r from the server, as a chunked upload does.
type chunked struct{ io.Reader }

func TestBodyLimit(t *testing.T) {
	const limit = 1 << 20
	query := `{"query":"{ viewer }"}`
	padded := func(n int) string { // a valid request of exactly n bytes
		return `{"query":"{ viewer }","x":"` + strings.Repeat("a", n-len(query)-7) + `"}`
	}
	require.Len(t, padded(limit), limit)

	tests := []struct {
		name      string
		body      string
		hideLen   bool
		wantLimit bool
	}{
		{name: "small", body: query},
		{name: "exactly the limit", body: padded(limit)},
		{name: "declared length over the limit", body: padded(limit + 1), wantLimit: true},
		{name: "chunked, small", body: query, hideLen: true},
		{name: "chunked, exactly the limit", body: padded(limit), hideLen: true},
		{name: "chunked, over the limit", body: padded(limit + 1), hideLen: true, wantLimit: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := setup(t)
			var body io.Reader = strings.NewReader(tt.body)
			if tt.hideLen {
				body = chunked{body}
			}
			r := httptest.NewRequest(http.MethodPost, "/graphql", body)
			if tt.hideLen {
				r.ContentLength = -1
			}
			r.Header.Set("Content-Type", "application/json")
			r.Header.Set("Authorization", "Bearer "+tokenGood)
			rec := httptest.NewRecorder()
			b.handler.ServeHTTP(rec, r)

			if tt.wantLimit {
				require.Equal(t, http.StatusRequestEntityTooLarge, rec.Code)
				require.Equal(t, "application/json", rec.Header().Get("Content-Type"))
				require.JSONEq(t, tooLargeBody, rec.Body.String())
				require.NotContains(t, rec.Body.String(), "aaaa")
				return
			}
			require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
			require.JSONEq(t, `{"data":{"viewer":"user-1"}}`, rec.Body.String())
		})
	}
}

func TestBodyLimitConfigured(t *testing.T) {
	b := setup(t, func(c *Config) { c.MaxBodyBytes = 10 })
	rec := httptest.NewRecorder()
	b.handler.ServeHTTP(rec, newPost(`{"query":"{ viewer }"}`, tokenGood))
	require.Equal(t, http.StatusRequestEntityTooLarge, rec.Code)
	require.JSONEq(t, `{"errors":[{"message":"request body too large (limit 10 bytes)","extensions":{"code":"LIMIT_EXCEEDED"}}]}`, rec.Body.String())
}
