package main

import (
	"context"
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDemoCommand: `taskgraph demo` plans the login feature in six waves
// (the two API tasks share api/router.go, so they are split) and simulated
// agents finish the run.
func TestDemoCommand(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		var out strings.Builder
		require.NoError(t, run(ctx, []string{"demo", "--url", s.URL, "--token", s.AdminToken}, &out, io.Discard))
		require.Contains(t, out.String(), "wave 3: TU-LOGIN-FEA-005 Login API\n", out.String())
		require.Contains(t, out.String(), "wave 4: TU-LOGIN-FEA-006 Profile API, TU-LOGIN-FEA-007 Login page\n")
		require.Contains(t, out.String(), " watch --project login --after ", "the printed command names the demo's own project")
		runID := regexp.MustCompile(`Started run (\S+) `).FindStringSubmatch(out.String())[1]

		require.NoError(t, run(ctx, []string{"agent", "--url", s.URL, "--token", s.AdminToken, "--run", runID,
			"--simulate", "--work", "5ms", "--parallel", "3", "--poll", "10ms"}, io.Discard, io.Discard))
		r := s.query(t, s.AdminToken, runQuery, M{"id": runID}).at("executionRun")
		require.Equal(t, "COMPLETED", r.S("status"))
		require.Equal(t, 9, r.N("tasksCompleted"))
		require.Equal(t, 6, r.N("wavesCompleted"), out.String())
	})
}
