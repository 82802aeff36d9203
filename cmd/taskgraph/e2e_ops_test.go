package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/store"
	"github.com/taskgraph/taskgraph/internal/testdb"
)

var assetRE = regexp.MustCompile(`(?:src|href)="(/[^"]+)"`)

// TestOps covers the operational endpoints: health, readiness, metrics, the
// playground and request ids.
func TestOps(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		t.Run("health", func(t *testing.T) {
			for _, path := range []string{"/healthz", "/readyz"} {
				resp, body := s.get(t, path)
				require.Equal(t, http.StatusOK, resp.StatusCode, path)
				require.Equal(t, "ok", body)
			}
		})

		t.Run("playground", func(t *testing.T) {
			resp, body := s.get(t, "/")
			require.Equal(t, http.StatusOK, resp.StatusCode)
			require.Contains(t, resp.Header.Get("Content-Type"), "text/html")
			require.Contains(t, strings.ToLower(body), "<html")
			require.Contains(t, strings.ToLower(body), "graphiql")
			// Every script and stylesheet it references is served here, and one
			// of them points the editor at /graphql.
			var js strings.Builder
			for _, m := range assetRE.FindAllStringSubmatch(body, -1) {
				resp, asset := s.get(t, m[1])
				require.Equal(t, http.StatusOK, resp.StatusCode, m[1])
				require.NotEmpty(t, asset, m[1])
				js.WriteString(asset)
			}
			require.Contains(t, js.String(), "/graphql")
		})

		t.Run("metrics", func(t *testing.T) {
			s.query(t, s.AdminToken, `query MetricsProbe { viewer { id } }`, nil)
			s.requireCode(t, "", `query MetricsProbe { viewer { id } }`, nil, "UNAUTHENTICATED")
			s.requireCode(t, s.AdminToken, `query MetricsMissing($id: ID!) { tasks(projectId: $id) { totalCount } }`, M{"id": missingID("Project")}, "NOT_FOUND")
			resp, body := s.get(t, "/metrics")
			require.Equal(t, http.StatusOK, resp.StatusCode)
			for _, want := range []string{
				`taskgraph_graphql_requests_total{operation="MetricsProbe",status="ok"} 1`,
				`taskgraph_graphql_requests_total{operation="MetricsMissing",status="error"} 1`,
				`taskgraph_graphql_request_duration_seconds_bucket{operation="MetricsProbe"`,
				`taskgraph_graphql_request_duration_seconds_count{operation="MetricsProbe"}`,
				`taskgraph_graphql_errors_total{code="UNAUTHENTICATED"}`,
				`taskgraph_graphql_errors_total{code="NOT_FOUND"} 1`,
				"taskgraph_db_max_open_connections ",
				"taskgraph_db_open_connections ",
				"taskgraph_db_in_use_connections ",
				"taskgraph_db_idle_connections ",
				"taskgraph_db_wait_count_total ",
				"taskgraph_db_wait_duration_seconds_total ",
			} {
				require.Contains(t, body, want)
			}
		})

		t.Run("request ids", func(t *testing.T) {
			seen := map[string]bool{}
			for _, path := range []string{"/healthz", "/readyz", "/metrics", "/", "/no-such-page"} {
				resp, _ := s.get(t, path)
				id := resp.Header.Get("X-Request-Id")
				require.NotEmpty(t, id, path)
				require.False(t, seen[id], "ids differ per request")
				seen[id] = true
			}
			for _, tc := range []struct {
				name, token, body string
				status            int
			}{
				{"ok", s.AdminToken, `{"query": "{ viewer { id } }"}`, http.StatusOK},
				{"unauthenticated", "", `{"query": "{ viewer { id } }"}`, http.StatusOK},
				{"bad json", s.AdminToken, `{`, http.StatusBadRequest},
				{"too large", s.AdminToken, `{"query": "` + strings.Repeat(" ", 1<<20) + `"}`, http.StatusRequestEntityTooLarge},
			} {
				req, err := http.NewRequest(http.MethodPost, s.URL+"/graphql", strings.NewReader(tc.body))
				require.NoError(t, err)
				req.Header.Set("Content-Type", "application/json")
				if tc.token != "" {
					req.Header.Set("Authorization", "Bearer "+tc.token)
				}
				resp, err := http.DefaultClient.Do(req)
				require.NoError(t, err)
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				require.NotEmpty(t, resp.Header.Get("X-Request-Id"), tc.name)
				if tc.status != http.StatusOK {
					require.Equal(t, tc.status, resp.StatusCode, tc.name)
				}
			}
			// A client's own request id is kept.
			req, err := http.NewRequest(http.MethodGet, s.URL+"/healthz", nil)
			require.NoError(t, err)
			req.Header.Set("X-Request-Id", "client-chosen-42")
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			resp.Body.Close()
			require.Equal(t, "client-chosen-42", resp.Header.Get("X-Request-Id"))
		})

		t.Run("introspection", func(t *testing.T) {
			d := s.query(t, s.AdminToken, `{ __schema { queryType { name } } __type(name: "Task") { fields { name } } }`, nil)
			require.Equal(t, "Query", d.S("__schema.queryType.name"))
			require.Contains(t, d.Col("__type.fields", "name"), "displayId")
		})
	})
}

// serveProcess is a runServe started by a test with arguments of its own.
type serveProcess struct {
	base   string
	stdout *lineSignal
	cancel context.CancelFunc
	done   chan error
}

// serve starts runServe with args (plus --addr 127.0.0.1:0) and stops it when
// the test ends, unless the test stopped it first.
func serve(t *testing.T, args ...string) *serveProcess {
	t.Helper()
	addrc := make(chan net.Addr, 1)
	hooks := &testHooks{onListen: func(addr net.Addr, _ *store.DB) { addrc <- addr }}
	ctx, cancel := context.WithCancel(context.Background())
	p := &serveProcess{stdout: newLineSignal(), cancel: cancel, done: make(chan error, 1)}
	go func() {
		p.done <- runServe(ctx, append([]string{"--addr", "127.0.0.1:0", "--log-format", "json"}, args...), p.stdout, io.Discard, hooks)
	}()
	select {
	case addr := <-addrc:
		p.base = "http://" + addr.String()
	case err := <-p.done:
		cancel()
		t.Fatalf("serve exited early: %v", err)
	}
	t.Cleanup(func() { _ = p.stop(t) })
	return p
}

// stop cancels serve and returns its result (nil after a clean shutdown).
func (p *serveProcess) stop(t *testing.T) error {
	t.Helper()
	if p.cancel == nil {
		return nil
	}
	p.cancel()
	p.cancel = nil
	select {
	case err := <-p.done:
		return err
	case <-time.After(30 * time.Second):
		t.Error("serve did not stop")
		return nil
	}
}

func (p *serveProcess) server() *testServer { return &testServer{URL: p.base} }

// TestBootstrapAdmin covers the first start without --admin-token (a token is
// printed once) and --admin-token on a database that has an admin already.
func TestBootstrapAdmin(t *testing.T) {
	t.Parallel()
	testdb.Run(t, func(t *testing.T, url string) {
		first := serve(t, "--database", url)
		out := first.stdout.String()
		require.Contains(t, out, "shown this once")
		m := regexp.MustCompile(`(?m)^\s+(\S+)\s*$`).FindStringSubmatch(out)
		require.NotNil(t, m, "a token line in:\n%s", out)
		printed := m[1]
		require.Equal(t, "admin", first.server().query(t, printed, `{ viewer { slug } }`, nil).S("viewer.slug"))
		require.NoError(t, first.stop(t))

		// Later starts print nothing and the printed token keeps working.
		second := serve(t, "--database", url)
		require.NotContains(t, second.stdout.String(), "shown this once")
		require.Equal(t, "admin", second.server().query(t, printed, `{ viewer { slug } }`, nil).S("viewer.slug"))
		require.NoError(t, second.stop(t))

		// --admin-token is honoured exactly, for the existing admin.
		third := serve(t, "--database", url, "--admin-token", "exactly-this-token")
		require.NotContains(t, third.stdout.String(), "shown this once")
		s := third.server()
		d := s.query(t, "exactly-this-token", `{ viewer { slug apiTokens { role } } }`, nil)
		require.Equal(t, "admin", d.S("viewer.slug"))
		require.Equal(t, []string{"ADMIN", "ADMIN"}, d.Col("viewer.apiTokens", "role"))
		s.requireCode(t, "exactly-this-token-not", `{ viewer { slug } }`, nil, "UNAUTHENTICATED")
		require.Equal(t, "admin", s.query(t, printed, `{ viewer { slug } }`, nil).S("viewer.slug"))

		// Revoked, it stops working; given again at the next start, it works again.
		var revoke string
		for _, tk := range s.query(t, printed, `{ viewer { apiTokens { id revokedAt } } }`, nil).L("viewer.apiTokens") {
			revoke = tk.S("id") // the newest: exactly-this-token
		}
		s.query(t, printed, `mutation($id: ID!) { revokeApiToken(input: {id: $id}) { apiToken { id } } }`, M{"id": revoke})
		s.requireCode(t, "exactly-this-token", `{ viewer { slug } }`, nil, "UNAUTHENTICATED")
		require.NoError(t, third.stop(t))
		fourth := serve(t, "--database", url, "--admin-token", "exactly-this-token")
		require.Equal(t, "admin", fourth.server().query(t, "exactly-this-token", `{ viewer { slug } }`, nil).S("viewer.slug"))
		require.NoError(t, fourth.stop(t))
	})
}

// TestProductionMode covers --production: no introspection, no suggestions.
func TestProductionMode(t *testing.T) {
	t.Parallel()
	testdb.Run(t, func(t *testing.T, url string) {
		s := serve(t, "--database", url, "--admin-token", "prod-admin", "--production").server()
		r := s.do(t, "prod-admin", `{ __schema { queryType { name } } }`, nil)
		require.NotEmpty(t, r.Errors)
		require.Equal(t, "FORBIDDEN", r.code())
		r = s.do(t, "prod-admin", `{ viewer { slg } }`, nil)
		require.Equal(t, "GRAPHQL_VALIDATION_FAILED", r.code())
		require.NotContains(t, r.Errors[0].Message, "Did you mean")
		require.Equal(t, "admin", s.query(t, "prod-admin", `{ viewer { slug } }`, nil).S("viewer.slug"))
		// Without --production the same typo gets a suggestion.
		dev := serve(t, "--database", url, "--admin-token", "prod-admin").server()
		r = dev.do(t, "prod-admin", `{ viewer { slg } }`, nil)
		require.Contains(t, r.Errors[0].Message, "Did you mean")
	})
}

// TestCLI runs the operator subcommands through run, as main does.
func TestCLI(t *testing.T) {
	t.Parallel()
	testdb.RunEmpty(t, func(t *testing.T, url string) {
		ctx := context.Background()
		var out, errOut bytes.Buffer

		// migrate status on an empty database lists pending migrations.
		require.NoError(t, run(ctx, []string{"migrate", "status", "--database", url}, &out, &errOut), errOut.String())
		require.Contains(t, out.String(), "VERSION")
		require.Contains(t, out.String(), "pending")
		require.NotContains(t, out.String(), "applied")

		out.Reset()
		require.NoError(t, run(ctx, []string{"migrate", "up", "--database", url}, &out, &errOut), errOut.String())
		require.NotContains(t, out.String(), "pending")
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		require.GreaterOrEqual(t, len(lines), 3, "a header and one line per migration:\n%s", out.String())
		for _, line := range lines[1:] {
			require.Contains(t, line, "applied")
		}
		out.Reset()
		require.NoError(t, run(ctx, []string{"migrate", "status", "--database", url}, &out, &errOut))
		require.Equal(t, len(lines), len(strings.Split(strings.TrimSpace(out.String()), "\n")))
		require.NotContains(t, out.String(), "pending")
		// migrate up again is a no-op.
		require.NoError(t, run(ctx, []string{"migrate", "up", "--database", url}, io.Discard, &errOut))

		require.ErrorIs(t, run(ctx, []string{"migrate", "sideways", "--database", url}, io.Discard, io.Discard), errUsage)
		require.ErrorIs(t, run(ctx, nil, io.Discard, io.Discard), errUsage)
		require.ErrorIs(t, run(ctx, []string{"frobnicate"}, io.Discard, io.Discard), errUsage)

		// The server on the same database, with two projects.
		s := startServer(t, url)
		p1 := s.createProject(t, s.AdminToken, "cli-one")
		p2 := s.createProject(t, s.AdminToken, "cli-two")
		s.createTask(t, s.AdminToken, p1, "in one", nil)
		s.createTask(t, s.AdminToken, p2, "in two", nil)

		out.Reset()
		errOut.Reset()
		require.NoError(t, run(ctx, []string{"token", "create", "--role", "AGENT", "--user", "admin", "--project", "cli-one", "--database", url}, &out, &errOut), errOut.String())
		token := strings.TrimSpace(out.String())
		require.NotEmpty(t, token)
		require.NotContains(t, token, "\n", "stdout holds the token only")
		require.Contains(t, errOut.String(), "AGENT")

		d := s.query(t, token, `query($p1: ID!, $p2: ID!) { viewer { slug apiTokens { role project { slug } } }
			one: project(id: $p1) { slug } two: project(id: $p2) { slug } tasks { nodes { title } } }`, M{"p1": p1, "p2": p2})
		require.Equal(t, "admin", d.S("viewer.slug"))
		require.Equal(t, "cli-one", d.S("one.slug"))
		require.True(t, d.Null("two"), "the token is bound to cli-one")
		require.Equal(t, []string{"in one"}, d.Col("tasks.nodes", "title"))
		s.requireCode(t, token, `mutation($p: ID!) { createTask(input: {projectId: $p, title: "x"}) { task { id } } }`, M{"p": p1}, "FORBIDDEN")

		// A MEMBER token for the admin user, and errors.
		out.Reset()
		require.NoError(t, run(ctx, []string{"token", "create", "--role", "member", "--database", url}, &out, &errOut))
		member := strings.TrimSpace(out.String())
		require.Equal(t, "admin", s.query(t, member, `{ viewer { slug } }`, nil).S("viewer.slug"))
		require.Error(t, run(ctx, []string{"token", "create", "--role", "AGENT", "--project", "no-such-project", "--database", url}, io.Discard, io.Discard))
		require.Error(t, run(ctx, []string{"token", "create", "--role", "AGENT", "--database", url}, io.Discard, io.Discard))
		require.Error(t, run(ctx, []string{"token", "create", "--role", "KING", "--database", url}, io.Discard, io.Discard))
		require.Error(t, run(ctx, []string{"token", "create", "--user", "nobody", "--database", url}, io.Discard, io.Discard))

		// schema prints the SDL.
		out.Reset()
		require.NoError(t, run(ctx, []string{"schema"}, &out, io.Discard))
		sdl := out.String()
		for _, want := range []string{"type Query", "type Mutation", "interface Node", "createTask(input: CreateTaskInput!): CreateTaskPayload!",
			"enum TaskStatus", "scalar Time"} {
			require.Contains(t, sdl, want)
		}
	})
}

// lineSignal is a goroutine-safe log writer that signals the first line
// containing each watched text.
type lineSignal struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	watches map[string]chan struct{}
}

func newLineSignal(texts ...string) *lineSignal {
	l := &lineSignal{watches: map[string]chan struct{}{}}
	for _, s := range texts {
		l.watches[s] = make(chan struct{})
	}
	return l
}

func (l *lineSignal) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	for text, ch := range l.watches {
		if ch != nil && bytes.Contains(p, []byte(text)) {
			close(ch)
			l.watches[text] = nil
		}
	}
	return len(p), nil
}

func (l *lineSignal) wait(t *testing.T, text string, ch chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(30 * time.Second):
		t.Fatalf("no log line %q", text)
	}
}

func (l *lineSignal) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// TestGracefulShutdown cancels serve's context while a request is in flight:
// the listener closes at once, the request still completes, and serve returns
// nil after closing the database.
func TestGracefulShutdown(t *testing.T) {
	t.Parallel()
	testdb.Run(t, func(t *testing.T, url string) {
		entered, release := make(chan struct{}), make(chan struct{})
		logs := newLineSignal("shutting down", "database closed")
		shuttingDown, dbClosed := logs.watches["shutting down"], logs.watches["database closed"]
		addrc := make(chan net.Addr, 1)
		hooks := &testHooks{
			onListen: func(addr net.Addr, _ *store.DB) { addrc <- addr },
			wrapHandler: func(h http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.Header.Get("X-Test-Hold") != "" {
						close(entered)
						<-release
					}
					h.ServeHTTP(w, r)
				})
			},
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		done := make(chan error, 1)
		go func() {
			done <- runServe(ctx, []string{"--addr", "127.0.0.1:0", "--database", url, "--admin-token", "shutdown-admin", "--log-format", "json"},
				io.Discard, logs, hooks)
		}()
		var addr net.Addr
		select {
		case addr = <-addrc:
		case err := <-done:
			t.Fatalf("serve exited early: %v", err)
		}
		base := "http://" + addr.String()

		type result struct {
			status int
			body   string
			err    error
		}
		resc := make(chan result, 1)
		go func() {
			req, _ := http.NewRequest(http.MethodPost, base+"/graphql", strings.NewReader(`{"query": "{ viewer { slug } }"}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer shutdown-admin")
			req.Header.Set("X-Test-Hold", "1")
			client := &http.Client{Transport: &http.Transport{}}
			resp, err := client.Do(req)
			if err != nil {
				resc <- result{err: err}
				return
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			resc <- result{status: resp.StatusCode, body: string(b), err: err}
		}()
		select {
		case <-entered:
		case r := <-resc:
			t.Fatalf("request finished before it was held: %+v", r)
		}

		cancel()
		logs.wait(t, "shutting down", shuttingDown)
		// New connections are refused while the held request drains.
		require.Eventually(t, func() bool {
			c, err := net.Dial("tcp", addr.String())
			if err != nil {
				return true
			}
			c.Close()
			return false
		}, 10*time.Second, 5*time.Millisecond, "the listener closes on shutdown")
		select {
		case err := <-done:
			t.Fatalf("serve returned while a request was in flight: %v", err)
		default:
		}

		close(release)
		r := <-resc
		require.NoError(t, r.err)
		require.Equal(t, http.StatusOK, r.status)
		require.JSONEq(t, `{"data": {"viewer": {"slug": "admin"}}}`, r.body)
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(30 * time.Second):
			t.Fatal("serve did not return after the drain")
		}
		logs.wait(t, "database closed", dbClosed)
		_, err := http.Get(base + "/healthz")
		require.Error(t, err)
		var opErr *net.OpError
		require.True(t, errors.As(err, &opErr), "connection refused: %v", err)
		require.NotContains(t, logs.String(), `"level":"ERROR"`)
	})
}
