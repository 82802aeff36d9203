package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/testdb"
)

// dashboardTestDir holds the browser test of the dashboard (playwright-core
// driving Debian's chromium); .ci/run installs chromium and runs npm ci there.
const dashboardTestDir = "../../test/dashboard"

// dashboardBrowser returns node and the chromium binary, skipping the test
// when one of them or playwright-core is missing — except under CI=true,
// where that fails.
func dashboardBrowser(t *testing.T) (node, chromium string) {
	t.Helper()
	node = nodeWith(t, "the dashboard browser test", dashboardTestDir, "playwright-core")
	chromium = os.Getenv("TASKGRAPH_CHROMIUM")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	if _, err := os.Stat(chromium); err != nil {
		missing(t, "no browser at %s: apt-get install -y chromium (or set TASKGRAPH_CHROMIUM)", chromium)
	}
	return node, chromium
}

// freeAddr returns a loopback address nobody listens on, so that a restarted
// server can come back where the browser's page expects it.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

// claimGate is the agents' way to the server (a reverse proxy to addr, so
// the agents follow the server through its restart): once `completions`
// tasks are completed it holds their claims until open. The run then cannot
// end before the page has watched the server restart, however slow the
// browser is next to the agents (in a loaded make test, the 9 tasks were
// once done before the page got to the restart, and the page waited in vain
// for a task to complete after it).
type claimGate struct {
	url      string
	opened   chan struct{}
	openOnce sync.Once
	done     atomic.Int32
}

func newClaimGate(t *testing.T, addr string, completions int32) *claimGate {
	t.Helper()
	g := &claimGate{opened: make(chan struct{})}
	g.url = interceptProxy(t, &url.URL{Scheme: "http", Host: addr}, func(w http.ResponseWriter, r *http.Request, body []byte, forward http.Handler) {
		if bytes.Contains(body, []byte("claimTask(")) && g.done.Load() >= completions {
			select {
			case <-g.opened:
			case <-r.Context().Done():
				return
			}
		}
		forward.ServeHTTP(w, r)
		if bytes.Contains(body, []byte("completeTask(")) {
			g.done.Add(1)
		}
	})
	t.Cleanup(g.open) // runs before the proxy's close, which waits for held claims
	return g
}

// open lets every claim through from now on.
func (g *claimGate) open() { g.openOnce.Do(func() { close(g.opened) }) }

// TestDashboardBrowser: in a real browser, a person signs in with a token,
// goes through a project, a task and a list's wave plan to the run the demo
// started, and watches `taskgraph agent --simulate` work it: cards change
// state without a reload, the followed log fills, and when the server
// restarts (same address, same database) the page says it is reconnecting and
// resumes from its last event until the run completes. Screenshots go to
// test/dashboard/output/; with TASKGRAPH_DASHBOARD_README_PNG=1 the test also
// writes docs/img/dashboard-run.png.
func TestDashboardBrowser(t *testing.T) {
	t.Parallel()
	node, chromium := dashboardBrowser(t)
	testdb.Run(t, func(t *testing.T, dbURL string) {
		addr := freeAddr(t)
		s, stop := startServerWith(t, dbURL, serverOptions{args: []string{"--addr", addr}})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()

		var demoOut bytes.Buffer
		require.NoError(t, run(ctx, []string{"demo", "--url", s.URL, "--token", s.AdminToken, "--agents", "2"}, &demoOut, io.Discard))
		m := regexp.MustCompile(`--run (\S+)`).FindStringSubmatch(demoOut.String())
		require.NotNil(t, m, "demo output: %s", demoOut.String())
		runID := m[1]

		out, err := filepath.Abs(filepath.Join(dashboardTestDir, "output", strings.ReplaceAll(t.Name(), "/", "_")))
		require.NoError(t, err)
		env := []string{"BASE_URL=" + s.URL, "TOKEN=" + s.AdminToken, "RUN_ID=" + runID, "CHROMIUM=" + chromium, "OUT_DIR=" + out}
		if os.Getenv("TASKGRAPH_DASHBOARD_README_PNG") == "1" && strings.HasSuffix(t.Name(), "sqlite") {
			png, err := filepath.Abs("../../docs/img/dashboard-run.png")
			require.NoError(t, err)
			require.NoError(t, os.MkdirAll(filepath.Dir(png), 0o755))
			env = append(env, "README_PNG="+png)
		}

		bctx, bcancel := context.WithTimeout(ctx, 5*time.Minute)
		defer bcancel()
		cmd := exec.CommandContext(bctx, node, "dashboard.test.mjs")
		cmd.Dir = dashboardTestDir
		cmd.Env = append(os.Environ(), env...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		stdout, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())

		// The script says when to start the agents, when to stop the server
		// and when to start it again (once the page has shown that it is
		// reconnecting: a state that lasts only until the server is back);
		// the agents keep going through the restart (they retry while the
		// server cannot be reached).
		agentOut := &syncBuffer{}
		agentDone := make(chan error, 1)
		gate := newClaimGate(t, addr, 4)
		var lines []string
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			lines = append(lines, line)
			t.Log("browser:", line)
			switch line {
			case "READY":
				go func() {
					agentDone <- run(ctx, []string{"agent", "--run", runID, "--simulate", "--work", "1500ms", "--parallel", "2",
						"--patience", "5m", "--url", gate.url, "--token", s.AdminToken}, agentOut, agentOut)
				}()
			case "STOP":
				stop()
			case "START":
				s, stop = startServerWith(t, dbURL, serverOptions{args: []string{"--addr", addr}})
				gate.open()
			}
		}
		werr := cmd.Wait()
		if werr != nil || len(lines) == 0 || lines[len(lines)-1] != "DONE" {
			// The browser's error goes last: a summary of a failed run
			// keeps the tail of the output.
			t.Fatalf("browser test failed: %v\nagent:\n%s\nlast steps:\n%s\nbrowser:\n%s", werr,
				strings.Join(agentOut.lines(), "\n"), strings.Join(lastLines(lines, 5), "\n"), stderr.String())
		}
		select {
		case err := <-agentDone:
			require.NoError(t, err, "agent: %s", strings.Join(agentOut.lines(), "\n"))
		case <-time.After(waitLimit):
			t.Fatalf("the agent did not stop after the run completed:\n%s", strings.Join(agentOut.lines(), "\n"))
		}
		got := s.query(t, s.AdminToken, `query($id: ID!) { executionRun(id: $id) { status tasksCompleted } }`, M{"id": runID})
		require.Equal(t, "COMPLETED", got.S("executionRun.status"))
	})
}

// lastLines returns up to n of lines' last lines.
func lastLines(lines []string, n int) []string {
	if len(lines) > n {
		return lines[len(lines)-n:]
	}
	return lines
}
