package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/taskgraph/taskgraph/internal/auth"
	"github.com/taskgraph/taskgraph/internal/domain"
)

// testSDL is a small schema with the shapes the server cares about:
// connections with first/last, nesting, enum and input arguments.
const testSDL = `
enum Priority { P1 P2 P3 P4 }
input TaskFilter { priority: [Priority!] name: String! }
type Task {
  id: ID!
  title: String!
  parent: Task
  children(first: Int, last: Int): TaskConnection!
  tags: [String!]!
}
type TaskConnection { nodes: [Task!]! totalCount: Int! }
type Query {
  viewer: String
  tasks(first: Int, last: Int, filter: TaskFilter): TaskConnection!
  task(id: ID!): Task
  fail(code: String!, field: String): String
  boom: String
  broken: String
  priority(p: Priority!): String
}
type Mutation { noop: String }
`

// Tokens the test Authenticate understands.
const (
	tokenGood    = "tg_good"
	tokenDBError = "tg_db_down"
)

func testSchema(t testing.TB) *ast.Schema {
	t.Helper()
	s, err := gqlparser.LoadSchema(&ast.Source{Name: "test.graphqls", Input: testSDL})
	require.NoError(t, err)
	return s
}

// stubSchema is a hand-written ExecutableSchema. Its root fields behave as
// gqlgen's generated code does for the cases the server must handle: resolver
// errors through graphql.AddError, panics through graphql.Recover, argument
// unmarshalling through graphql.ProcessArgField and graphql.ErrorOnPath, and
// introspection refused with "introspection disabled".
func stubSchema(t testing.TB) *graphql.ExecutableSchemaMock {
	schema := testSchema(t)
	return &graphql.ExecutableSchemaMock{
		SchemaFunc: func() *ast.Schema { return schema },
		ComplexityFunc: func(context.Context, string, string, int, map[string]any) (int, bool) {
			return 0, false
		},
		ExecFunc: func(ctx context.Context) graphql.ResponseHandler {
			opCtx := graphql.GetOperationContext(ctx)
			if opCtx.Operation.Operation != ast.Query {
				return graphql.OneShot(graphql.ErrorResponse(ctx, "only queries are stubbed"))
			}
			ran := false
			return func(ctx context.Context) *graphql.Response {
				if ran {
					return nil
				}
				ran = true
				var buf bytes.Buffer
				buf.WriteByte('{')
				for i, f := range graphql.CollectFields(opCtx, opCtx.Operation.SelectionSet, []string{"Query"}) {
					if i > 0 {
						buf.WriteByte(',')
					}
					fmt.Fprintf(&buf, "%q:%s", f.Alias, resolveStubField(ctx, opCtx, f))
				}
				buf.WriteByte('}')
				return &graphql.Response{Data: buf.Bytes()}
			}
		},
	}
}

func resolveStubField(ctx context.Context, opCtx *graphql.OperationContext, f graphql.CollectedField) string {
	ctx = graphql.WithFieldContext(ctx, &graphql.FieldContext{Object: "Query", Field: f, IsResolver: true})
	args := f.ArgumentMap(opCtx.Variables)
	switch f.Name {
	case "__typename":
		return `"Query"`
	case "__schema", "__type":
		if opCtx.DisableIntrospection {
			graphql.AddError(ctx, errors.New("introspection disabled"))
			return "null"
		}
		return "{}"
	case "viewer":
		return strconv.Quote(auth.FromContext(ctx).UserID)
	case "fail":
		field, _ := args["field"].(string)
		code, _ := args["code"].(string)
		graphql.AddError(ctx, &domain.Error{
			Code:    domain.Code(code),
			Message: "stub failure",
			Field:   field,
			Details: map[string]any{"currentVersion": 3},
		})
		return "null"
	case "boom":
		func() {
			defer func() {
				if r := recover(); r != nil {
					graphql.AddError(ctx, graphql.Recover(ctx, r))
				}
			}()
			panic("kaboom")
		}()
		return "null"
	case "broken":
		graphql.AddError(ctx, errors.New("pq: connection refused to 10.0.0.7"))
		return "null"
	case "priority":
		p, err := graphql.ProcessArgField(ctx, args, "p", func(ctx context.Context, v any) (string, error) {
			s, _ := v.(string)
			if s != strings.ToUpper(s) {
				return "", graphql.ErrorOnPath(ctx, fmt.Errorf("%s is not a valid Priority", s))
			}
			return s, nil
		})
		if err != nil {
			graphql.AddError(ctx, err)
			return "null"
		}
		return strconv.Quote(p)
	default:
		return "null"
	}
}

// syncBuffer collects log output written from handler goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// logLines decodes the JSON log lines.
func (b *syncBuffer) logLines(t testing.TB) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m), line)
		out = append(out, m)
	}
	return out
}

func (b *syncBuffer) find(t testing.TB, msg string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range b.logLines(t) {
		if l["msg"] == msg {
			out = append(out, l)
		}
	}
	return out
}

type bundle struct {
	handler  http.Handler
	registry *prometheus.Registry
	logs     *syncBuffer
	logger   *slog.Logger
}

// setup builds the server over the stub schema; adjust tweaks the Config.
func setup(t testing.TB, adjust ...func(*Config)) *bundle {
	t.Helper()
	logs := &syncBuffer{}
	logger := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	reg := prometheus.NewRegistry()
	cfg := Config{
		Schema: stubSchema(t),
		Authenticate: func(_ context.Context, token string) (*auth.Principal, error) {
			switch token {
			case tokenGood:
				return &auth.Principal{UserID: "user-1", Role: domain.RoleAdmin}, nil
			case tokenDBError:
				return nil, errors.New("sql: database is closed")
			}
			return nil, nil
		},
		Ready:    func(context.Context) error { return nil },
		Logger:   logger,
		Registry: reg,
	}
	for _, f := range adjust {
		f(&cfg)
	}
	return &bundle{handler: New(cfg), registry: reg, logs: logs, logger: logger}
}

type gqlError struct {
	Message    string         `json:"message"`
	Path       []any          `json:"path"`
	Extensions map[string]any `json:"extensions"`
}

type gqlResponse struct {
	Data   json.RawMessage `json:"data"`
	Errors []gqlError      `json:"errors"`
}

// codes lists the errors' extensions.code.
func (r gqlResponse) codes() []string {
	var out []string
	for _, e := range r.Errors {
		c, _ := e.Extensions["code"].(string)
		out = append(out, c)
	}
	return out
}

type gqlRequest struct {
	Query         string         `json:"query"`
	OperationName string         `json:"operationName,omitempty"`
	Variables     map[string]any `json:"variables,omitempty"`
}

// post sends a GraphQL request with token (none when "") and decodes the answer.
func (b *bundle) post(t testing.TB, token string, req gqlRequest) (*http.Response, gqlResponse) {
	t.Helper()
	body, err := json.Marshal(req)
	require.NoError(t, err)
	r := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	return b.do(t, r)
}

func (b *bundle) do(t testing.TB, r *http.Request) (*http.Response, gqlResponse) {
	t.Helper()
	rec := httptest.NewRecorder()
	b.handler.ServeHTTP(rec, r)
	res := rec.Result()
	raw, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	var out gqlResponse
	require.NoError(t, json.Unmarshal(raw, &out), string(raw))
	return res, out
}

// get performs a plain GET and returns status and body.
func (b *bundle) get(t testing.TB, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	b.handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec.Code, rec.Body.String()
}

// newPost builds a raw POST /graphql request.
func newPost(body, token string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	return r
}
