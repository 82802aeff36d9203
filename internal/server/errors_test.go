package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator"

	"github.com/taskgraph/taskgraph/internal/domain"
)

// gqlgenErrors produces the errors gqlgen's executor hands the presenter, by
// running the same gqlparser calls and setting the same codes.
type gqlgenErrors struct {
	t      *testing.T
	schema *ast.Schema
}

func (g gqlgenErrors) validation(query string) *gqlerror.Error {
	doc, err := parser.ParseQuery(&ast.Source{Input: query})
	require.NoError(g.t, err)
	errs := validator.Validate(g.schema, doc)
	require.NotEmpty(g.t, errs, query)
	errcode.Set(errs[0], errcode.ValidationFailed)
	return errs[0]
}

func (g gqlgenErrors) variables(query string, vars map[string]any) *gqlerror.Error {
	doc, err := parser.ParseQuery(&ast.Source{Input: query})
	require.NoError(g.t, err)
	require.Empty(g.t, validator.Validate(g.schema, doc))
	_, verr := validator.VariableValues(g.schema, doc.Operations[0], vars)
	require.Error(g.t, verr)
	gqlErr, ok := verr.(*gqlerror.Error)
	require.True(g.t, ok)
	errcode.Set(gqlErr, errcode.ValidationFailed)
	return gqlErr
}

func (g gqlgenErrors) parse(query string, tokenLimit int) *gqlerror.Error {
	_, err := parser.ParseQueryWithTokenLimit(&ast.Source{Input: query}, tokenLimit)
	gqlErr, ok := err.(*gqlerror.Error)
	require.True(g.t, ok, "parse error expected, got %v", err)
	errcode.Set(gqlErr, errcode.ParseFailed)
	return gqlErr
}

// fieldContext returns ctx inside root field name of the test schema.
func fieldContext(t *testing.T, ctx context.Context, schema *ast.Schema, name string) context.Context {
	t.Helper()
	def := schema.Query.Fields.ForName(name)
	require.NotNil(t, def)
	return graphql.WithFieldContext(ctx, &graphql.FieldContext{
		Object: "Query",
		Field:  graphql.CollectedField{Field: &ast.Field{Name: name, Alias: name, Definition: def}},
	})
}

func TestPresentError(t *testing.T) {
	schema := testSchema(t)
	gen := gqlgenErrors{t: t, schema: schema}

	tests := []struct {
		name        string
		inField     string // root field whose context the error arrives in
		err         func() error
		message     string
		code        string
		ext         map[string]any // further extensions expected
		path        ast.Path
		loggedErr   string // text of the "graphql internal error" log line
		loggedDebug string // text of the "graphql operation canceled" debug line
	}{
		{
			name:    "domain error",
			err:     func() error { return domain.NotFound("task") },
			message: "task not found",
			code:    "NOT_FOUND",
		},
		{
			name:    "domain error from a resolver keeps path, field and details",
			inField: "task",
			err: func() error {
				return gqlerror.WrapPath(ast.Path{ast.PathName("task")}, fmt.Errorf("update: %w", &domain.Error{
					Code: domain.CodeVersionConflict, Message: "task changed", Field: "expectedVersion",
					Details: map[string]any{"currentVersion": 7, "code": "must not win"},
				}))
			},
			message: "task changed",
			code:    "VERSION_CONFLICT",
			ext:     map[string]any{"field": "expectedVersion", "currentVersion": 7},
			path:    ast.Path{ast.PathName("task")},
		},
		{
			name: "bad enum in a variable",
			err: func() error {
				return gen.variables(`query($p: Priority!) { priority(p: $p) }`, map[string]any{"p": "P9"})
			},
			message: "P9 is not a valid Priority",
			code:    "BAD_USER_INPUT",
			ext:     map[string]any{"field": "p"},
			path:    ast.Path{ast.PathName("variable"), ast.PathName("p")},
		},
		{
			name: "missing required input field in a variable",
			err: func() error {
				return gen.variables(`query($f: TaskFilter) { tasks(filter: $f) { totalCount } }`,
					map[string]any{"f": map[string]any{"priority": []any{"P1"}}})
			},
			message: "must be defined",
			code:    "BAD_USER_INPUT",
			ext:     map[string]any{"field": "f.name"},
			path:    ast.Path{ast.PathName("variable"), ast.PathName("f"), ast.PathName("name")},
		},
		{
			name: "wrong type in a variable",
			err: func() error {
				return gen.variables(`query($n: Int) { tasks(first: $n) { totalCount } }`, map[string]any{"n": "ten"})
			},
			message: "cannot use string as Int",
			code:    "BAD_USER_INPUT",
			ext:     map[string]any{"field": "n"},
			path:    ast.Path{ast.PathName("variable"), ast.PathName("n")},
		},
		{
			name:    "bad enum literal",
			err:     func() error { return gen.validation(`{ priority(p: P9) }`) },
			message: `Value "P9" does not exist in "Priority!" enum.`,
			code:    "BAD_USER_INPUT",
		},
		{
			name:    "argument the generated code cannot unmarshal",
			inField: "tasks",
			err: func() error {
				return gqlerror.WrapPath(ast.Path{ast.PathName("tasks"), ast.PathName("filter"), ast.PathName("priority"), ast.PathIndex(0)},
					errors.New("p1 is not a valid Priority"))
			},
			message: "p1 is not a valid Priority",
			code:    "BAD_USER_INPUT",
			ext:     map[string]any{"field": "filter.priority[0]"},
			path:    ast.Path{ast.PathName("tasks"), ast.PathName("filter"), ast.PathName("priority"), ast.PathIndex(0)},
		},
		{
			name:    "unknown field keeps gqlgen's message and code",
			err:     func() error { return gen.validation(`{ nope }`) },
			message: `Cannot query field "nope" on type "Query".`,
			code:    "GRAPHQL_VALIDATION_FAILED",
		},
		{
			name:    "syntax error keeps gqlgen's message and code",
			err:     func() error { return gen.parse(`{ viewer`, 0) },
			message: "Expected Name, found <EOF>",
			code:    "GRAPHQL_PARSE_FAILED",
		},
		{
			name:    "parser token limit",
			err:     func() error { return gen.parse(`{ a b c d e f }`, 3) },
			message: "exceeded token limit of 3",
			code:    "LIMIT_EXCEEDED",
		},
		{
			name: "complexity limit",
			err: func() error {
				err := gqlerror.Errorf("operation has complexity 60000, which exceeds the limit of 50000")
				errcode.Set(err, "COMPLEXITY_LIMIT_EXCEEDED")
				return err
			},
			message: "operation has complexity 60000, which exceeds the limit of 50000",
			code:    "LIMIT_EXCEEDED",
		},
		{
			name:    "depth limit",
			err:     func() error { return limitError("operation has depth %d, which exceeds the limit of %d", 20, 15) },
			message: "operation has depth 20, which exceeds the limit of 15",
			code:    "LIMIT_EXCEEDED",
		},
		{
			name: "undecodable body is not echoed",
			err: func() error {
				return gqlerror.Errorf("json request body could not be decoded: invalid character body:{secret}")
			},
			message: "json request body could not be decoded",
			code:    "BAD_USER_INPUT",
		},
		{
			name:    "plain error from a resolver",
			inField: "broken",
			err: func() error {
				return gqlerror.WrapPath(ast.Path{ast.PathName("broken")}, errors.New("pq: password authentication failed"))
			},
			message:   "internal error",
			code:      "INTERNAL",
			path:      ast.Path{ast.PathName("broken")},
			loggedErr: "pq: password authentication failed",
		},
		{
			name:      "plain error outside a field",
			err:       func() error { return errors.New("boom") },
			message:   "internal error",
			code:      "INTERNAL",
			loggedErr: "boom",
		},
		{
			name:    "resolver canceled with its operation",
			inField: "broken",
			err: func() error {
				return gqlerror.WrapPath(ast.Path{ast.PathName("broken")}, fmt.Errorf("load tasks: %w", context.Canceled))
			},
			message:     "internal error",
			code:        "INTERNAL",
			path:        ast.Path{ast.PathName("broken")},
			loggedDebug: "load tasks: context canceled",
		},
		{
			name:    "recovered panic",
			inField: "boom",
			err:     func() error { return gqlerror.WrapPath(ast.Path{ast.PathName("boom")}, &panicError{value: "kaboom"}) },
			message: "internal error",
			code:    "INTERNAL",
			path:    ast.Path{ast.PathName("boom")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logs := &syncBuffer{}
			logger := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})).With("request_id", "req-1")
			s := &server{log: logger, metrics: newMetrics(prometheus.NewRegistry(), nil)}
			ctx := context.WithValue(context.Background(), loggerKey, logger)
			if tt.inField != "" {
				ctx = fieldContext(t, ctx, schema, tt.inField)
			}

			in := tt.err()
			got := s.presentError(ctx, in)

			require.Equal(t, tt.message, got.Message)
			require.Equal(t, tt.code, got.Extensions["code"])
			for k, v := range tt.ext {
				require.Equal(t, v, got.Extensions[k], "extension %s", k)
			}
			if _, ok := tt.ext["field"]; !ok {
				require.NotContains(t, got.Extensions, "field")
			}
			require.Equal(t, tt.path, got.Path)
			require.ErrorIs(t, got, in, "the original error stays reachable")

			canceled := logs.find(t, "graphql operation canceled")
			if tt.loggedDebug != "" {
				require.Len(t, canceled, 1)
				require.Equal(t, "DEBUG", canceled[0]["level"])
				require.Equal(t, tt.loggedDebug, canceled[0]["error"])
			} else {
				require.Empty(t, canceled)
			}
			logged := logs.find(t, "graphql internal error")
			if tt.loggedErr == "" {
				require.Empty(t, logged)
				return
			}
			require.Len(t, logged, 1)
			require.Equal(t, tt.loggedErr, logged[0]["error"])
			require.Equal(t, "req-1", logged[0]["request_id"])
			require.Equal(t, tt.path.String(), logged[0]["path"])
		})
	}
}

func TestGraphQLErrorsEndToEnd(t *testing.T) {
	tests := []struct {
		name    string
		req     gqlRequest
		status  int
		message string
		code    string
		field   string
		path    []any
	}{
		{
			name:    "domain error keeps the resolver path",
			req:     gqlRequest{Query: `{ fail(code: "NOT_FOUND") }`},
			status:  200,
			message: "stub failure",
			code:    "NOT_FOUND",
			path:    []any{"fail"},
		},
		{
			name:    "domain input error names the field",
			req:     gqlRequest{Query: `{ x: fail(code: "BAD_USER_INPUT", field: "title") }`},
			status:  200,
			message: "stub failure",
			code:    "BAD_USER_INPUT",
			field:   "title",
			path:    []any{"x"},
		},
		{
			name:    "panic",
			req:     gqlRequest{Query: `{ boom }`},
			status:  200,
			message: "internal error",
			code:    "INTERNAL",
			path:    []any{"boom"},
		},
		{
			name:    "unexpected error",
			req:     gqlRequest{Query: `{ broken }`},
			status:  200,
			message: "internal error",
			code:    "INTERNAL",
			path:    []any{"broken"},
		},
		{
			name:    "bad variable value",
			req:     gqlRequest{Query: `query($p: Priority!) { priority(p: $p) }`, Variables: map[string]any{"p": "P7"}},
			status:  200, // a request error, over application/json
			message: "P7 is not a valid Priority",
			code:    "BAD_USER_INPUT",
			field:   "p",
			path:    []any{"variable", "p"},
		},
		{
			name:    "argument rejected by the resolver's unmarshaller",
			req:     gqlRequest{Query: `query($p: Priority!) { priority(p: $p) }`, Variables: map[string]any{"p": "p1"}},
			status:  200,
			message: "p1 is not a valid Priority",
			code:    "BAD_USER_INPUT",
			field:   "p",
			path:    []any{"priority", "p"},
		},
		{
			name:    "validation error",
			req:     gqlRequest{Query: `{ viewr }`},
			status:  200, // a request error, over application/json
			message: `Cannot query field "viewr" on type "Query".`,
			code:    "GRAPHQL_VALIDATION_FAILED",
		},
		{
			name:    "introspection disabled",
			req:     gqlRequest{Query: `{ __schema { queryType { name } } }`},
			status:  200,
			message: "introspection is disabled on this server",
			code:    "FORBIDDEN",
			path:    []any{"__schema"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := setup(t)
			res, out := b.post(t, tokenGood, tt.req)
			require.Equal(t, tt.status, res.StatusCode)
			require.Len(t, out.Errors, 1, "%+v", out.Errors)
			e := out.Errors[0]
			require.Equal(t, tt.message, e.Message)
			require.Equal(t, tt.code, e.Extensions["code"])
			if tt.field != "" {
				require.Equal(t, tt.field, e.Extensions["field"])
			} else {
				require.NotContains(t, e.Extensions, "field")
			}
			require.Equal(t, tt.path, e.Path)
		})
	}
}

func TestPanicIsLoggedWithStack(t *testing.T) {
	b := setup(t)
	res, _ := b.post(t, tokenGood, gqlRequest{Query: `query Explode { boom }`})
	requestID := res.Header.Get(RequestIDHeader)

	logged := b.logs.find(t, "panic in graphql resolver")
	require.Len(t, logged, 1)
	require.Equal(t, "kaboom", logged[0]["panic"])
	require.Equal(t, "boom", logged[0]["path"])
	require.Equal(t, "Explode", logged[0]["operation"])
	require.Equal(t, requestID, logged[0]["request_id"])
	require.Contains(t, logged[0]["stack"], "runtime/debug.Stack")
}

func TestUndecodableBodyIsNotEchoed(t *testing.T) {
	b := setup(t)
	r := newPost(`{"query": "{ viewer }", "secret": "hunter2"`, tokenGood)
	res, out := b.do(t, r)
	require.Equal(t, 400, res.StatusCode)
	require.Equal(t, []string{"BAD_USER_INPUT"}, out.codes())
	require.Equal(t, "json request body could not be decoded", out.Errors[0].Message)
}

func TestSuggestionsOnlyWhenEnabled(t *testing.T) {
	tests := []struct {
		name        string
		suggestions bool
		query       string
		want        string
	}{
		{"field, off", false, `{ viewr }`, `Cannot query field "viewr" on type "Query".`},
		{"field, on", true, `{ viewr }`, `Cannot query field "viewr" on type "Query". Did you mean "viewer"?`},
		{"enum value, off", false, `{ priority(p: P9) }`, `Value "P9" does not exist in "Priority!" enum.`},
		{"enum value, on", true, `{ priority(p: P9) }`,
			`Value "P9" does not exist in "Priority!" enum. Did you mean the enum value "P1", "P2", "P3", or "P4"?`},
		{"argument, off", false, `{ tasks(frist: 1) { totalCount } }`, `Unknown argument "frist" on field "Query.tasks".`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := setup(t, func(c *Config) { c.FieldSuggestions = tt.suggestions })
			_, out := b.post(t, tokenGood, gqlRequest{Query: tt.query})
			require.Len(t, out.Errors, 1)
			require.Equal(t, tt.want, out.Errors[0].Message)
		})
	}
}
