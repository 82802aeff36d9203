package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/testdb"
)

// childServer is `taskgraph serve` in a process of its own (this test
// binary re-executed as main, see TestMain), so that it can be SIGKILLed.
type childServer struct {
	cmd    *exec.Cmd
	addr   string // host:port it listens on
	stderr *syncBuffer
	exited chan struct{}
	err    error // Wait's result, once exited is closed
}

// startChildServer runs serve on addr ("127.0.0.1:0" for any port) and waits
// until it listens.
func startChildServer(t testing.TB, addr, dbURL, adminToken string, args ...string) *childServer {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"serve", "--addr", addr, "--database", dbURL,
		"--admin-token", adminToken, "--log-format", "json", "--data-dir", t.TempDir()}, args...)...)
	cmd.Env = append(os.Environ(), envExecMain+"=1")
	p := &childServer{cmd: cmd, stderr: &syncBuffer{}, exited: make(chan struct{})}
	cmd.Stderr = p.stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	listening := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			// "Taskgraph on http://127.0.0.1:PORT (playground at /, …)"
			if rest, ok := strings.CutPrefix(sc.Text(), "Taskgraph on http://"); ok {
				listening <- strings.Fields(rest)[0]
			}
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.exited
		if t.Failed() {
			t.Logf("server log (%s):\n%s", addr, strings.Join(p.stderr.lines(), "\n"))
		}
	})
	select {
	case p.addr = <-listening:
		return p
	case <-p.exited:
		t.Fatalf("serve exited before listening: %v\n%s", p.err, strings.Join(p.stderr.lines(), "\n"))
	case <-time.After(waitLimit):
		t.Fatal("serve did not listen in time")
	}
	return nil
}

// kill SIGKILLs the server and waits until it is gone.
func (p *childServer) kill(t *testing.T) {
	t.Helper()
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGKILL))
	<-p.exited
}

// stop interrupts the server and requires a clean exit (a data race found by
// the race detector would make it exit non-zero).
func (p *childServer) stop(t *testing.T) {
	t.Helper()
	require.NoError(t, p.cmd.Process.Signal(os.Interrupt))
	select {
	case <-p.exited:
		require.NoError(t, p.err, "serve exited badly:\n%s", strings.Join(p.stderr.lines(), "\n"))
	case <-time.After(waitLimit):
		t.Fatal("serve did not stop in time")
	}
}

// TestServerKilledMidRun: the server is SIGKILLed while agents hold tasks,
// and restarted on the same database and address. Agents that keep
// heartbeating carry on (or learn they lost their lease, if the sweep was
// quicker), the agent that went silent is swept and its task claimed again
// as attempt 2, and the run completes with every task completed exactly
// once and no task ever run by two executions at once.
func TestServerKilledMidRun(t *testing.T) {
	t.Parallel()
	testdb.Run(t, func(t *testing.T, dbURL string) {
		admin := "admin-" + strings.ReplaceAll(t.Name(), "/", "-")
		// The first server sweeps slowly, so that the tasks are certainly
		// IN_PROGRESS when it dies; the second sweeps as the test needs (a
		// silent agent is dead after 2 × 500ms by the database clock: with
		// 200ms, agents heartbeating every 50ms were swept on SQLite under
		// the race detector on a loaded 2-core machine, their heartbeats
		// queued behind the single writer; max-attempts 5 leaves room for
		// such a spurious sweep, which costs an attempt, not correctness).
		first := startChildServer(t, "127.0.0.1:0", dbURL, admin, "--heartbeat-interval=10s", "--missed-heartbeats=2")
		s := &testServer{URL: "http://" + first.addr, AdminToken: admin}

		// 12 tasks in 3 waves of 4: Wn-i depends on W(n-1)-i.
		e := newExecList(t, s, 4)
		for w := 1; w <= 3; w++ {
			for i := 1; i <= 4; i++ {
				name := fmt.Sprintf("W%d-%d", w, i)
				e.add(t, name, nil)
				if w > 1 {
					e.link(t, name, fmt.Sprintf("W%d-%d", w-1, i), "DEPENDS_ON")
				}
			}
		}
		runID := e.start(t)
		require.Equal(t, 3, e.run(t, runID).N("wavesTotal"))

		// Wave 1 done; of wave 2, one task done, two held by agents that keep
		// heartbeating, one held by an agent that goes silent at the crash.
		for range 4 {
			e.complete(t, e.claim(t, runID).S("agent.id"))
		}
		var held []jv
		for range 4 {
			c := e.claim(t, runID)
			require.Equal(t, 2, c.N("wave.waveNumber"))
			held = append(held, c)
		}
		e.complete(t, held[0].S("agent.id"))
		survivors, silent := held[1:3], held[3]

		client := fastClient(8)
		var (
			hbWG     sync.WaitGroup
			stopHB   = make(chan struct{})
			stopOnce sync.Once
		)
		stopHeartbeats := func() {
			stopOnce.Do(func() { close(stopHB) })
			hbWG.Wait()
		}
		defer stopHeartbeats()
		// hbResult is each survivor's first answer from the restarted server.
		type hbResult struct {
			directive string
			err       error
		}
		restarted := make(chan struct{})
		results := make([]chan hbResult, len(survivors))
		for i, sv := range survivors {
			results[i] = make(chan hbResult, 1)
			hbWG.Go(func() {
				reported := false
				for {
					// Sent after the restart, a request can only reach the
					// second server.
					after := false
					select {
					case <-restarted:
						after = true
					default:
					}
					var d struct{ Heartbeat struct{ Directive string } }
					err := s.call(client, e.agent, heartbeatMutation, M{"in": M{"agentId": sv.S("agent.id")}}, &d)
					// Transport errors (the dead server, a connection of the
					// dead server's) are retried; a GraphQL error is an answer.
					if after && !reported && (err == nil || errCode(err) != "") {
						results[i] <- hbResult{d.Heartbeat.Directive, err}
						reported = true
					}
					select {
					case <-stopHB:
						return
					case <-time.After(50 * time.Millisecond):
					}
				}
			})
		}

		assignments := func() map[string]string {
			st := map[string]string{}
			for _, w := range e.run(t, runID).L("waves") {
				for _, a := range w.L("assignments") {
					st[e.names[a.S("task.id")]] = a.S("taskStatus")
				}
			}
			return st
		}
		before := assignments()
		for _, c := range append(slices.Clone(survivors), silent) {
			require.Equal(t, "IN_PROGRESS", before[e.names[c.S("task.id")]])
		}

		first.kill(t)
		second := startChildServer(t, first.addr, dbURL, admin, "--heartbeat-interval=500ms", "--missed-heartbeats=2",
			"--max-attempts=5")
		close(restarted)

		// Survivors: whoever still holds its lease completes its task; one
		// swept meanwhile is told LEASE_LOST and drops it.
		for i, sv := range survivors {
			r := <-results[i]
			if r.err != nil {
				require.Equal(t, "LEASE_LOST", errCode(r.err), "%v", r.err)
				t.Logf("survivor %s: lease lost across the restart", e.names[sv.S("task.id")])
				continue
			}
			require.Equal(t, "CONTINUE", r.directive)
			var d struct {
				CompleteTask struct{ Task struct{ Status string } }
			}
			err := s.call(client, e.agent, completeMutation, M{"in": M{"agentId": sv.S("agent.id"), "filesModified": []string{}}}, &d)
			if err != nil {
				require.Equal(t, "LEASE_LOST", errCode(err), "%v", err)
				continue
			}
			require.Equal(t, "COMPLETED", d.CompleteTask.Task.Status)
		}

		// Fresh agents (the reference agent) finish the run.
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		var out syncBuffer
		require.NoError(t, run(ctx, []string{"agent", "--url", s.URL, "--token", e.agent, "--run", runID,
			"--simulate", "--parallel", "3", "--heartbeat", "50ms", "--poll", "20ms"}, &out, io.Discard),
			strings.Join(out.lines(), "\n"))

		d := s.query(t, e.token, `query($id: ID!) { executionRun(id: $id) { status tasksTotal tasksCompleted tasksFailed
			tasksSkipped wavesTotal wavesCompleted agentsActive
			executions { task { id } attemptNumber status startedAt endedAt }
			waves { assignments { taskStatus task { id status stateHistory { toStatus } } } } } }`,
			M{"id": runID}).at("executionRun")
		require.Equal(t, "COMPLETED", d.S("status"))
		require.Equal(t, 12, d.N("tasksTotal"))
		require.Equal(t, 12, d.N("tasksCompleted"))
		require.Equal(t, 0, d.N("tasksFailed"))
		require.Equal(t, 0, d.N("tasksSkipped"))
		require.Equal(t, 3, d.N("wavesTotal"))
		require.Equal(t, 3, d.N("wavesCompleted"))
		require.Equal(t, 0, d.N("agentsActive"))
		tasks := 0
		for _, w := range d.L("waves") {
			for _, a := range w.L("assignments") {
				tasks++
				name := e.names[a.S("task.id")]
				require.Equal(t, "COMPLETED", a.S("taskStatus"), name)
				require.Equal(t, "COMPLETED", a.S("task.status"), name)
				into := 0
				for _, h := range a.L("task.stateHistory") {
					if h.S("toStatus") == "COMPLETED" {
						into++
					}
				}
				require.Equal(t, 1, into, "%s entered COMPLETED %d times", name, into)
			}
		}
		require.Equal(t, 12, tasks)

		// Per task: attempts numbered 1..n, one after the other (an attempt
		// ends before the next starts: never two running at once), exactly
		// one COMPLETED, the others INTERRUPTED.
		byTask := map[string][]jv{}
		for _, x := range d.L("executions") {
			byTask[x.S("task.id")] = append(byTask[x.S("task.id")], x)
		}
		require.Len(t, byTask, 12)
		for id, xs := range byTask {
			name := e.names[id]
			slices.SortFunc(xs, func(a, b jv) int { return a.N("attemptNumber") - b.N("attemptNumber") })
			completed := 0
			for i, x := range xs {
				require.Equal(t, i+1, x.N("attemptNumber"), name)
				require.False(t, x.Null("endedAt"), "%s attempt %d still running", name, i+1)
				switch x.S("status") {
				case "COMPLETED":
					completed++
				case "INTERRUPTED":
				default:
					t.Fatalf("%s attempt %d ended %s", name, i+1, x.S("status"))
				}
				if i > 0 {
					prevEnd, err := time.Parse(time.RFC3339Nano, xs[i-1].S("endedAt"))
					require.NoError(t, err)
					start, err := time.Parse(time.RFC3339Nano, x.S("startedAt"))
					require.NoError(t, err)
					require.False(t, start.Before(prevEnd), "%s: attempt %d started before attempt %d ended", name, i+1, i)
				}
			}
			require.Equal(t, 1, completed, "%s completed by %d executions", name, completed)
		}
		// The silent agent's task was swept and done again (attempt 2, or
		// later after a spurious sweep).
		sx := byTask[silent.S("task.id")]
		require.GreaterOrEqual(t, len(sx), 2)
		require.Equal(t, "INTERRUPTED", sx[0].S("status"))

		stopHeartbeats()
		second.stop(t)
	})
}
