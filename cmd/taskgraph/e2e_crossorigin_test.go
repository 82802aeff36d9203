package main

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/testdb"
)

// TestCrossOriginPage: a small front-end served from another origin runs,
// in Chromium, a query and a mutation with fetch and a subscription with
// the graphql-ws client against a server started with --allowed-origins
// naming that origin; the same page from an origin not listed is blocked by
// the browser (no CORS headers) and its websocket refused
// (test/dashboard/crossorigin.test.mjs).
func TestCrossOriginPage(t *testing.T) {
	t.Parallel()
	node, chromium := dashboardBrowser(t)
	bundle, err := filepath.Abs("../../test/graphql-ws-client/node_modules/graphql-ws/umd/graphql-ws.js")
	require.NoError(t, err)
	if _, err := os.Stat(bundle); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("graphql-ws is not installed: run npm ci in test/graphql-ws-client")
		}
		t.Skip("graphql-ws is not installed: run npm ci in test/graphql-ws-client")
	}
	pageDir, err := filepath.Abs(filepath.Join(dashboardTestDir, "crossorigin"))
	require.NoError(t, err)

	// The page's server: one listener, reached by two names that are two
	// origins to the browser.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /graphql-ws.js", func(w http.ResponseWriter, r *http.Request) { http.ServeFile(w, r, bundle) })
	mux.Handle("GET /", http.FileServer(http.Dir(pageDir)))
	pages := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = pages.Serve(l) }()
	t.Cleanup(func() { _ = pages.Close() })
	port := l.Addr().(*net.TCPAddr).Port
	allowed := "http://localhost:" + strconv.Itoa(port)
	other := "http://127.0.0.1:" + strconv.Itoa(port)

	testdb.Run(t, func(t *testing.T, dbURL string) {
		s := startServer(t, dbURL, "--allowed-origins", allowed)
		_, token := s.member(t, "frontend")
		project := s.createProject(t, token, "frontend-app")
		fragment := "#" + url.Values{"api": {s.URL}, "token": {token}, "project": {project}}.Encode()

		out, err := filepath.Abs(filepath.Join(dashboardTestDir, "output", strings.ReplaceAll(t.Name(), "/", "_")))
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, node, "crossorigin.test.mjs")
		cmd.Dir = dashboardTestDir
		cmd.Env = append(os.Environ(), "ALLOWED_URL="+allowed+"/"+fragment, "OTHER_URL="+other+"/"+fragment,
			"PROJECT=frontend-app", "CHROMIUM="+chromium, "OUT_DIR="+out)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err = cmd.Run()
		lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
		for _, l := range lines {
			t.Log("browser:", l)
		}
		if err != nil || lines[len(lines)-1] != "DONE" {
			t.Fatalf("browser test failed: %v\n%s", err, stderr.String())
		}
	})
}
