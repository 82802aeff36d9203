package main

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/testdb"
)

// TestPlaygroundBrowser: in a real browser, at desktop and phone width, a
// person opens the bundled playground, enters a token in the Headers tab and
// gets the schema in the docs without a manual re-fetch, then runs a
// subscription, which goes over the websocket and shows an event. The page is
// the same whatever the database, so it runs on SQLite only.
func TestPlaygroundBrowser(t *testing.T) {
	t.Parallel()
	node, chromium := dashboardBrowser(t)
	s := startServer(t, testdb.SQLite(t))
	for _, width := range []int{1440, 390} {
		t.Run(strconv.Itoa(width), func(t *testing.T) {
			out, err := filepath.Abs(filepath.Join(dashboardTestDir, "output", strings.ReplaceAll(t.Name(), "/", "_")))
			require.NoError(t, err)
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, node, "playground.test.mjs")
			cmd.Dir = dashboardTestDir
			cmd.Env = append(cmd.Environ(), "BASE_URL="+s.URL, "TOKEN="+s.AdminToken, "CHROMIUM="+chromium,
				"OUT_DIR="+out, "WIDTH="+strconv.Itoa(width))
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err = cmd.Run()
			require.NoError(t, err, "stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
			require.Contains(t, stdout.String(), "DONE", stderr.String())
		})
	}
}
