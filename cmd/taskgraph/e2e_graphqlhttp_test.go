package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestGraphQLHTTPAudit runs graphql-http's own server audits (npm, the
// reference implementation of the GraphQL-over-HTTP spec) against the
// server: with a token every audit passes; without one, every MUST holds
// or is answered by the 401 (with WWW-Authenticate: Bearer): only a
// __typename query may go without a token, so the audits that introspect
// are refused as unauthenticated, not as bad requests.
func TestGraphQLHTTPAudit(t *testing.T) {
	t.Parallel()
	node := nodeClient(t)
	eachDB(t, func(t *testing.T, s *testServer) { graphqlHTTPAudit(t, node, s) })
}

func graphqlHTTPAudit(t *testing.T, node string, s *testServer) {
	audit := func(token string) []map[string]string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		cmd := exec.CommandContext(ctx, node, "audit.mjs")
		cmd.Dir = graphqlWSClientDir
		cmd.Env = append(os.Environ(), "URL="+s.URL+"/graphql", "TOKEN="+token)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		require.NoError(t, cmd.Run(), stderr.String())
		var out []map[string]string
		for _, line := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
			var r map[string]string
			require.NoError(t, json.Unmarshal([]byte(line), &r), line)
			out = append(out, r)
		}
		return out
	}
	with := audit(s.AdminToken)
	require.GreaterOrEqual(t, len(with), 61, "the audits ran")
	for _, r := range with {
		require.Equal(t, "ok", r["status"], "with a token: %s %s: %s", r["id"], r["name"], r["reason"])
	}
	t.Logf("with a token: %d of %d audits ok", len(with), len(with))
	ok, refused := 0, 0
	for _, r := range audit("") {
		if !strings.HasPrefix(r["name"], "MUST") {
			continue
		}
		if r["status"] == "ok" {
			ok++
			continue
		}
		require.Equal(t, "401", r["httpStatus"], "without a token: %s %s: %s", r["id"], r["name"], r["reason"])
		require.True(t, strings.HasPrefix(r["authenticate"], "Bearer"), "%s: WWW-Authenticate %q", r["id"], r["authenticate"])
		refused++
	}
	require.Positive(t, ok)
	t.Logf("without a token: %d MUST audits ok, %d answered 401 (they introspect)", ok, refused)
}
