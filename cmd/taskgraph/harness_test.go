package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/store"
	"github.com/taskgraph/taskgraph/internal/testdb"
)

// testServer is the real `taskgraph serve` running in-process on 127.0.0.1:0.
type testServer struct {
	URL        string // http://127.0.0.1:port
	AdminToken string
	DB         *store.DB // the server's own handle: read Statements() from it
	Stdout     *bytes.Buffer
}

// eachDB runs f against a fresh server on every test database.
func eachDB(t *testing.T, f func(t *testing.T, s *testServer)) {
	testdb.Run(t, func(t *testing.T, url string) { f(t, startServer(t, url)) })
}

// startServer runs serve against dbURL until the test ends, then checks that it
// shut down cleanly.
func startServer(t testing.TB, dbURL string, extraArgs ...string) *testServer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &testServer{AdminToken: "admin-" + t.Name(), Stdout: &bytes.Buffer{}}
	type ready struct {
		addr net.Addr
		db   *store.DB
	}
	readyc := make(chan ready, 1)
	done := make(chan error, 1)
	hooks := &testHooks{
		onListen:   func(addr net.Addr, db *store.DB) { readyc <- ready{addr, db} },
		loaderWait: 20 * time.Millisecond, // generous, so batches never split on a slow CI machine
	}
	args := append([]string{"--addr", "127.0.0.1:0", "--database", dbURL, "--admin-token", s.AdminToken, "--log-format", "json"}, extraArgs...)
	go func() { done <- runServe(ctx, args, s.Stdout, io.Discard, hooks) }()
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
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			require.NoError(t, err, "serve returned an error on shutdown")
		case <-time.After(30 * time.Second):
			t.Error("serve did not shut down within 30s")
		}
	})
	return s
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
