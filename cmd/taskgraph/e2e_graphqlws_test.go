package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// graphqlWSClientDir holds the Node script that drives the reference
// graphql-ws client; .ci/run installs its packages with npm ci.
const graphqlWSClientDir = "../../test/graphql-ws-client"

// nodeClient returns the path of node, skipping the test when node or the
// client's packages are missing — except under CI=true, where that fails.
func nodeClient(t *testing.T) string {
	t.Helper()
	return nodeWith(t, "the graphql-ws client test", graphqlWSClientDir, "graphql-ws")
}

// runGraphQLWS runs the graphql-ws client script and returns its output lines.
func runGraphQLWS(node string, env ...string) ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "subscribe.mjs")
	cmd.Dir = graphqlWSClientDir
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("graphql-ws client: %w: %s", err, stderr.String())
	}
	return strings.Split(strings.TrimSpace(stdout.String()), "\n"), nil
}

// TestGraphQLWSReferenceClient: the reference graphql-ws client (npm) gets
// every event after its cursor — from the table, then live — in order, and
// is refused with 4403 for a bad token.
func TestGraphQLWSReferenceClient(t *testing.T) {
	t.Parallel()
	node := nodeClient(t)
	eachDB(t, func(t *testing.T, s *testServer) {
		p := s.createProject(t, s.AdminToken, "npm")
		after := s.eventCursor(t, s.AdminToken, p)
		for i := 1; i <= 3; i++ {
			s.createTask(t, s.AdminToken, p, fmt.Sprint(i), nil)
		}
		env := []string{"TASKGRAPH_URL=" + s.URL, "TASKGRAPH_TOKEN=" + s.AdminToken, "PROJECT_ID=" + p, "AFTER=" + after, "COUNT=8"}
		type result struct {
			lines []string
			err   error
		}
		out := make(chan result, 1)
		go func() {
			lines, err := runGraphQLWS(node, env...)
			out <- result{lines, err}
		}()
		// Written while the client connects and reads the first three.
		for i := 4; i <= 6; i++ {
			id := s.createTask(t, s.AdminToken, p, fmt.Sprint(i), nil)
			if i == 6 {
				s.transition(t, s.AdminToken, id, "PENDING")
				s.transition(t, s.AdminToken, id, "BLOCKED")
			}
		}
		r := <-out
		require.NoError(t, r.err)
		lines := r.lines
		require.Len(t, lines, 8)
		var got []string
		seen := map[string]bool{}
		for _, l := range lines {
			var e struct{ Cursor, Type, Title, Status, From, To string }
			require.NoError(t, json.Unmarshal([]byte(l), &e), l)
			require.False(t, seen[e.Cursor], "cursor %s twice", e.Cursor)
			seen[e.Cursor] = true
			if e.Type == "TASK_CREATED" {
				got = append(got, e.Title+" "+e.Status)
			} else {
				got = append(got, e.From+">"+e.To)
			}
		}
		require.Equal(t, []string{"1 DRAFT", "2 DRAFT", "3 DRAFT", "4 DRAFT", "5 DRAFT", "6 DRAFT", "DRAFT>PENDING", "PENDING>BLOCKED"}, got)

		refused, err := runGraphQLWS(node, append(env, "MODE=bad-token")...)
		require.NoError(t, err)
		require.JSONEq(t, `{"closed": 4403, "reason": "Forbidden: invalid token"}`, refused[0])
	})
}
