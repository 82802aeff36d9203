package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestAgentObeysPause: the reference agent suspends its command while the
// run is paused (heartbeating all along, so it is not swept), resumes it
// when the run resumes, and reports the command's progress lines.
func TestAgentObeysPause(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		e := newExecList(t, s, 1)
		e.add(t, "slow", nil)
		runID := e.start(t)
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		agentDone := make(chan error, 1)
		// The command prints two steps, then waits for go (a file the test
		// makes once the run is paused), so that however slow the machine
		// it cannot finish before the pause: only a command that was not
		// suspended would see go and print the rest while paused.
		goFile := filepath.Join(t.TempDir(), "go")
		go func() {
			agentDone <- run(ctx, []string{"agent", "--url", s.URL, "--token", e.agent, "--run", runID,
				"--heartbeat", "40ms", "--poll", "20ms", "--exec",
				`for i in 1 2 3 4 5 6 7 8 9 10; do echo "::progress $((i*10)) step$i"; if [ $i = 2 ]; then while [ ! -f ` + goFile +
					` ]; do sleep 0.02; done; fi; done`}, io.Discard, io.Discard)
		}()

		const agentQuery = `query($id: ID!) { executionRun(id: $id) { status agents { heartbeatCount progressPercent currentStep
			execution { status logLines } } } }`
		agent := func() (jv, bool) {
			agents := s.query(t, e.token, agentQuery, M{"id": runID}).L("executionRun.agents")
			if len(agents) == 0 {
				return jv{}, false
			}
			return agents[0], true
		}
		waitFor := func(what string, ok func(a jv) bool) jv {
			t.Helper()
			var last jv
			require.Eventually(t, func() bool {
				a, found := agent()
				last = a
				return found && ok(a)
			}, waitLimit, 10*time.Millisecond, what)
			return last
		}
		waitFor("some output", func(a jv) bool { return a.N("execution.logLines") >= 2 })
		e.action(t, "pauseExecutionRun", runID)
		paused := waitFor("the agent reports the pause", func(a jv) bool { return !a.Null("currentStep") && a.S("currentStep") == "paused" })
		require.Positive(t, paused.N("progressPercent"))
		require.NoError(t, os.WriteFile(goFile, nil, 0o644))
		// Output printed before the stop may still be on its way: settle first.
		beats := paused.N("heartbeatCount")
		settled := waitFor("three more heartbeats", func(a jv) bool { return a.N("heartbeatCount") >= beats+3 })
		// 25 heartbeats of 40 ms: time enough for a running command to print the rest.
		later := waitFor("25 more heartbeats", func(a jv) bool { return a.N("heartbeatCount") >= settled.N("heartbeatCount")+25 })
		require.Equal(t, "RUNNING", later.S("execution.status"))
		require.Equal(t, settled.N("execution.logLines"), later.N("execution.logLines"), "the command ran while paused")

		e.action(t, "resumeExecutionRun", runID)
		require.NoError(t, <-agentDone)
		ex := s.query(t, e.token, `query($id: ID!) { executionRun(id: $id) { status executions { status log } } }`,
			M{"id": runID}).at("executionRun")
		require.Equal(t, "COMPLETED", ex.S("status"))
		log := ex.Strs("executions.0.log")
		require.Len(t, log, 10)
		require.True(t, strings.HasPrefix(log[9], "::progress 100 step10"), log[9])
	})
}
