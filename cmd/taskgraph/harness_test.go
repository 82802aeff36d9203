package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/events"
	"github.com/taskgraph/taskgraph/internal/loader"
	"github.com/taskgraph/taskgraph/internal/server"
	"github.com/taskgraph/taskgraph/internal/store"
	"github.com/taskgraph/taskgraph/internal/testdb"
)

// testServer is the real `taskgraph serve` running in-process on 127.0.0.1:0.
type testServer struct {
	URL        string // http://127.0.0.1:port
	MetricsURL string // http://127.0.0.1:port/metrics of --metrics-addr, when given
	AdminToken string
	DB         *store.DB // the server's own handle: read Statements() from it
	Stdout     *bytes.Buffer
	registry   *prometheus.Registry
}

// checkBatches fails the test if a query or mutation of the server closed a
// batched read on its safety timer or gave up counting its work: the level
// dispatch's bookkeeping (internal/server/levels.go) missed a field. Every
// end-to-end test checks it as its server stops.
func (s *testServer) checkBatches(t testing.TB) {
	t.Helper()
	if s.registry == nil {
		return
	}
	families, err := s.registry.Gather()
	require.NoError(t, err)
	for _, f := range families {
		for _, m := range f.GetMetric() {
			v := m.GetCounter().GetValue()
			switch {
			case f.GetName() == "taskgraph_loader_abandoned_total" && v > 0:
				t.Errorf("%v operations gave up level dispatch", v)
			case f.GetName() == "taskgraph_loader_batches_total" && len(m.GetLabel()) == 1 &&
				m.GetLabel()[0].GetValue() == "timer" && v > 0:
				t.Errorf("%v batched reads closed on the safety timer", v)
			}
		}
	}
}

// eachDB runs f against a fresh server on every test database.
func eachDB(t *testing.T, f func(t *testing.T, s *testServer)) {
	testdb.Run(t, func(t *testing.T, url string) { f(t, startServer(t, url)) })
}

// startServer runs serve against dbURL until the test ends, then checks that it
// shut down cleanly.
func startServer(t testing.TB, dbURL string, extraArgs ...string) *testServer {
	t.Helper()
	return startServerWait(t, dbURL, testLoaderTiming, extraArgs...)
}

// testLoaderTiming keeps a batch open until its keys have stopped arriving for
// 20ms, so that batches never split on a loaded CI machine and statement counts
// are exact. A tracked batch's safety net waits 10s: on a starved machine under
// the race detector one statement can outlast the server's 500ms, and the
// harness counts every batch the net closes as a bookkeeping miss.
var testLoaderTiming = loader.Timing{Idle: 20 * time.Millisecond, MaxWait: 2 * time.Second, SafetyWait: testSafetyWait}

const testSafetyWait = 10 * time.Second

// startServerWait is startServer with the loaders' batch timing given.
func startServerWait(t testing.TB, dbURL string, timing loader.Timing, extraArgs ...string) *testServer {
	t.Helper()
	s, _ := startServerWith(t, dbURL, serverOptions{loaderTiming: timing, args: extraArgs})
	return s
}

// serverOptions are the knobs of startServerWith.
type serverOptions struct {
	loaderTiming loader.Timing          // default testLoaderTiming
	events       events.Options         // the event broker's (zero: defaults)
	websocket    server.WebsocketConfig // the websocket transport's (zero: defaults)
	args         []string               // more serve flags
	logs         io.Writer              // the server's log (JSON lines); nil: discarded
	// noGroupingBackground: suggestions only from suggestGroupings.
	noGroupingBackground bool
}

// startServerWith runs serve against dbURL until stop is called or the test
// ends, then checks that it shut down cleanly. stop may be called early and
// more than once.
func startServerWith(t testing.TB, dbURL string, o serverOptions) (s *testServer, stop func()) {
	t.Helper()
	if o.loaderTiming == (loader.Timing{}) {
		o.loaderTiming = testLoaderTiming
	}
	if o.loaderTiming.SafetyWait == 0 {
		o.loaderTiming.SafetyWait = testSafetyWait
	}
	ctx, cancel := context.WithCancel(context.Background())
	s = &testServer{AdminToken: "admin-" + t.Name(), Stdout: &bytes.Buffer{}}
	type ready struct {
		addr net.Addr
		db   *store.DB
	}
	readyc := make(chan ready, 1)
	done := make(chan error, 1)
	hooks := &testHooks{
		onListen:             func(addr net.Addr, db *store.DB) { readyc <- ready{addr, db} },
		loaderTiming:         o.loaderTiming,
		events:               o.events,
		websocket:            o.websocket,
		onMetricsListen:      func(addr net.Addr) { s.MetricsURL = "http://" + addr.String() + "/metrics" },
		noGroupingBackground: o.noGroupingBackground,
		onRegistry:           func(r *prometheus.Registry) { s.registry = r },
	}
	// The question expiry and queue rescue sweeps would add their statements
	// to those the statement-count tests measure: they wait an hour unless a
	// test asks.
	args := append([]string{"--addr", "127.0.0.1:0", "--database", dbURL, "--admin-token", s.AdminToken, "--log-format", "json",
		"--question-sweep-interval", "1h", "--queue-sweep-interval", "1h"}, o.args...)
	logs := o.logs
	if logs == nil {
		logs = io.Discard
	}
	go func() { done <- runServe(ctx, args, s.Stdout, logs, hooks) }()
	select {
	case r := <-readyc:
		s.URL, s.DB = "http://"+r.addr.String(), r.db
	case err := <-done:
		cancel()
		t.Fatalf("serve exited before listening: %v", err)
	case <-time.After(30 * time.Second):
		cancel()
		t.Fatal("serve did not start listening within 30s")
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			s.checkBatches(t)
			cancel()
			select {
			case err := <-done:
				require.NoError(t, err, "serve returned an error on shutdown")
			case <-time.After(30 * time.Second):
				t.Error("serve did not shut down within 30s")
			}
		})
	}
	t.Cleanup(stop)
	return s, stop
}

// gqlError is one entry of a GraphQL response's errors.
type gqlError struct {
	Message    string         `json:"message"`
	Path       []any          `json:"path"`
	Extensions map[string]any `json:"extensions"`
}

// gqlResponse is a GraphQL response with its HTTP status.
type gqlResponse struct {
	Status int
	Data   json.RawMessage `json:"data"`
	Errors []gqlError      `json:"errors"`
}

// code returns the extensions.code of the first error, or "".
func (r gqlResponse) code() string {
	if len(r.Errors) == 0 {
		return ""
	}
	c, _ := r.Errors[0].Extensions["code"].(string)
	return c
}

// do posts a GraphQL request with a bearer token ("" for none).
func (s *testServer) do(t testing.TB, token, query string, vars map[string]any) gqlResponse {
	t.Helper()
	body, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPost, s.URL+"/graphql", bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	out := gqlResponse{Status: resp.StatusCode}
	require.NoError(t, json.Unmarshal(raw, &out), "response: %s", raw)
	return out
}

// mustDo runs a request that must succeed and decodes its data into dst.
func (s *testServer) mustDo(t testing.TB, token, query string, vars map[string]any, dst any) {
	t.Helper()
	r := s.do(t, token, query, vars)
	require.Empty(t, r.Errors, "query failed: %s", query)
	if dst != nil {
		require.NoError(t, json.Unmarshal(r.Data, dst))
	}
}

// requireCode asserts that a request fails with the given extensions.code.
func (s *testServer) requireCode(t testing.TB, token, query string, vars map[string]any, code string) gqlResponse {
	t.Helper()
	r := s.do(t, token, query, vars)
	require.NotEmpty(t, r.Errors, "expected %s, got data %s", code, r.Data)
	require.Equal(t, code, r.code(), "errors: %+v", r.Errors)
	return r
}

// createProject creates a project as token and returns its id.
func (s *testServer) createProject(t testing.TB, token, slug string) string {
	t.Helper()
	var out struct {
		CreateProject struct{ Project struct{ ID string } }
	}
	s.mustDo(t, token, `mutation($slug: String!) { createProject(input: {name: $slug, slug: $slug}) { project { id } } }`,
		map[string]any{"slug": slug}, &out)
	return out.CreateProject.Project.ID
}

// createTask creates a task with extra input fields and returns its id.
func (s *testServer) createTask(t testing.TB, token, projectID, title string, extra map[string]any) string {
	t.Helper()
	input := map[string]any{"projectId": projectID, "title": title}
	for k, v := range extra {
		input[k] = v
	}
	var out struct {
		CreateTask struct{ Task struct{ ID string } }
	}
	s.mustDo(t, token, `mutation($input: CreateTaskInput!) { createTask(input: $input) { task { id } } }`,
		map[string]any{"input": input}, &out)
	return out.CreateTask.Task.ID
}

// userWithToken creates a user and a token of role for it, returning the user id
// and the token.
func (s *testServer) userWithToken(t testing.TB, slug, role, projectID string) (string, string) {
	t.Helper()
	var u struct {
		CreateUser struct{ User struct{ ID string } }
	}
	s.mustDo(t, s.AdminToken, `mutation($slug: String!, $email: String!) { createUser(input: {name: $slug, email: $email, slug: $slug}) { user { id } } }`,
		map[string]any{"slug": slug, "email": slug + "@example.com"}, &u)
	input := map[string]any{"userId": u.CreateUser.User.ID, "name": slug + "-token", "role": role}
	if projectID != "" {
		input["projectId"] = projectID
	}
	var tok struct {
		CreateAPIToken struct{ Token string }
	}
	s.mustDo(t, s.AdminToken, `mutation($input: CreateApiTokenInput!) { createApiToken(input: $input) { token } }`,
		map[string]any{"input": input}, &tok)
	return u.CreateUser.User.ID, tok.CreateAPIToken.Token
}

func (s *testServer) String() string { return fmt.Sprintf("taskgraph at %s", s.URL) }

// M is a JSON object: GraphQL variables and inputs.
type M = map[string]any

// jv is decoded JSON data read by dotted paths: "createTask.task.id",
// "tasks.nodes.0.displayId". A path that does not resolve fails the test.
type jv struct {
	t testing.TB
	v any
}

// query runs a request that must succeed and returns its data.
func (s *testServer) query(t testing.TB, token, query string, vars map[string]any) jv {
	t.Helper()
	var v any
	s.mustDo(t, token, query, vars, &v)
	return jv{t: t, v: v}
}

// at returns the value at path.
func (j jv) at(path string) jv {
	j.t.Helper()
	v := j.v
	if path == "" {
		return j
	}
	for _, part := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			got, ok := x[part]
			require.True(j.t, ok, "no key %q in %v (path %s)", part, x, path)
			v = got
		case []any:
			i, err := strconv.Atoi(part)
			require.NoError(j.t, err, "path %s: %q indexes a list", path, part)
			require.Less(j.t, i, len(x), "path %s: index %d out of range", path, i)
			v = x[i]
		default:
			j.t.Fatalf("path %s: cannot descend into %T at %q", path, v, part)
		}
	}
	return jv{t: j.t, v: v}
}

// S is the string at path.
func (j jv) S(path string) string {
	j.t.Helper()
	s, ok := j.at(path).v.(string)
	require.True(j.t, ok, "%s is %T (%v), not a string", path, j.at(path).v, j.at(path).v)
	return s
}

// N is the integer at path.
func (j jv) N(path string) int {
	j.t.Helper()
	f, ok := j.at(path).v.(float64)
	require.True(j.t, ok, "%s is %T (%v), not a number", path, j.at(path).v, j.at(path).v)
	return int(f)
}

// F is the number at path.
func (j jv) F(path string) float64 {
	j.t.Helper()
	f, ok := j.at(path).v.(float64)
	require.True(j.t, ok, "%s is %T, not a number", path, j.at(path).v)
	return f
}

// B is the boolean at path.
func (j jv) B(path string) bool {
	j.t.Helper()
	b, ok := j.at(path).v.(bool)
	require.True(j.t, ok, "%s is %T (%v), not a boolean", path, j.at(path).v, j.at(path).v)
	return b
}

// Null reports whether the value at path is null.
func (j jv) Null(path string) bool {
	j.t.Helper()
	return j.at(path).v == nil
}

// L is the list at path.
func (j jv) L(path string) []jv {
	j.t.Helper()
	l, ok := j.at(path).v.([]any)
	require.True(j.t, ok, "%s is %T (%v), not a list", path, j.at(path).v, j.at(path).v)
	out := make([]jv, len(l))
	for i, v := range l {
		out[i] = jv{t: j.t, v: v}
	}
	return out
}

// Strs is the list of strings at path.
func (j jv) Strs(path string) []string {
	j.t.Helper()
	var out []string
	for _, e := range j.L(path) {
		out = append(out, e.S(""))
	}
	return out
}

// Col is field of every object in the list at path.
func (j jv) Col(path, field string) []string {
	j.t.Helper()
	out := []string{}
	for _, e := range j.L(path) {
		out = append(out, e.S(field))
	}
	return out
}

// ext returns extensions[key] of the first error.
func (r gqlResponse) ext(key string) any {
	if len(r.Errors) == 0 {
		return nil
	}
	return r.Errors[0].Extensions[key]
}

// member creates a MEMBER user with a token.
func (s *testServer) member(t testing.TB, slug string) (string, string) {
	t.Helper()
	return s.userWithToken(t, slug, "MEMBER", "")
}

// transition moves a task to status `to` and returns the payload.
func (s *testServer) transition(t testing.TB, token, taskID, to string) jv {
	t.Helper()
	return s.query(t, token, `mutation($id: ID!, $to: TaskStatus!) { transitionTask(input: {id: $id, to: $to, reason: "test"}) {
		task { id status } stateChange { fromStatus toStatus reason changedBy } } }`, M{"id": taskID, "to": to})
}

// link adds a relationship and returns its id.
func (s *testServer) link(t testing.TB, token, source, target, typ string) string {
	t.Helper()
	d := s.query(t, token, `mutation($s: ID!, $t: ID!, $type: RelationshipType!) {
		addTaskRelationship(input: {sourceTaskId: $s, targetTaskId: $t, type: $type}) { relationship { id } } }`,
		M{"s": source, "t": target, "type": typ})
	return d.S("addTaskRelationship.relationship.id")
}

// createList creates a task list with tasks and returns its id.
func (s *testServer) createList(t testing.TB, token, projectID, name string, taskIDs ...string) string {
	t.Helper()
	input := M{"projectId": projectID, "name": name}
	if len(taskIDs) > 0 {
		input["taskIds"] = taskIDs
	}
	d := s.query(t, token, `mutation($input: CreateTaskListInput!) { createTaskList(input: $input) { taskList { id } } }`,
		M{"input": input})
	return d.S("createTaskList.taskList.id")
}

// get sends an HTTP request to path and returns the response with its body read.
func (s *testServer) get(t testing.TB, path string) (*http.Response, string) {
	t.Helper()
	resp, err := http.Get(s.URL + path)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, string(b)
}

// dataIsNull reports whether the response carries no data.
func (r gqlResponse) dataIsNull() bool {
	return len(r.Data) == 0 || string(r.Data) == "null"
}

func decodeJSON(r io.Reader, dst any) error { return json.NewDecoder(r).Decode(dst) }

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

// post is do without testing.TB, for goroutines: it returns transport and
// decoding failures as errors.
func (s *testServer) post(token, query string, vars map[string]any) (gqlResponse, error) {
	body, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	if err != nil {
		return gqlResponse{}, err
	}
	req, err := http.NewRequest(http.MethodPost, s.URL+"/graphql", bytes.NewReader(body))
	if err != nil {
		return gqlResponse{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return gqlResponse{}, err
	}
	defer resp.Body.Close()
	out := gqlResponse{Status: resp.StatusCode}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return out, fmt.Errorf("decode response (HTTP %d): %w", resp.StatusCode, err)
	}
	return out, nil
}

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }

// missingID is a well-formed global id of kind that names nothing.
func missingID(kind string) string {
	return domain.GlobalID(domain.Kind(kind), "00000000-0000-4000-8000-000000000001")
}

// concurrently runs f(0..n-1) in parallel goroutines, released together, and
// requires every call to succeed without GraphQL errors.
func concurrently(t testing.TB, n int, f func(i int) (gqlResponse, error)) []gqlResponse {
	t.Helper()
	out := make([]gqlResponse, n)
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			out[i], errs[i] = f(i)
		}()
	}
	close(start)
	wg.Wait()
	for i := range n {
		require.NoError(t, errs[i], "call %d", i)
		require.Empty(t, out[i].Errors, "call %d", i)
	}
	return out
}
