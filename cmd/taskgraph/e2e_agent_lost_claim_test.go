package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAgentTakesUpALostClaim: the answer to a claim that handed out a task
// never reaches the agent (a proxy answers 502 in its place, as when the
// database goes away after the commit or the connection before the answer).
// The agent does not claim another task and leave that one to a lease
// nobody heartbeats: it finds the claim among the run's agents by its host
// and process id, and does the task — every task once, no execution
// interrupted.
func TestAgentTakesUpALostClaim(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		e := newExecList(t, s, 2)
		for i := range 4 {
			e.add(t, fmt.Sprintf("L%d", i), nil)
		}
		runID := e.start(t)

		target, err := url.Parse(s.URL)
		require.NoError(t, err)
		var dropped atomic.Int32
		front := interceptProxy(t, target, func(w http.ResponseWriter, r *http.Request, body []byte, forward http.Handler) {
			if !bytes.Contains(body, []byte("claimTask(")) || dropped.Load() > 0 {
				forward.ServeHTTP(w, r)
				return
			}
			rec := httptest.NewRecorder()
			forward.ServeHTTP(rec, r)
			if strings.Contains(rec.Body.String(), `"displayId"`) && dropped.CompareAndSwap(0, 1) {
				http.Error(w, "upstream went away", http.StatusBadGateway) // the claim was made; its answer is lost
				return
			}
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			w.WriteHeader(rec.Code)
			_, _ = w.Write(rec.Body.Bytes())
		})

		var out strings.Builder
		w := &syncWriter{w: &out}
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		require.NoError(t, run(ctx, []string{"agent", "--url", front, "--token", e.agent, "--run", runID,
			"--simulate", "--parallel", "2", "--poll", "20ms", "--work", "50ms", "--heartbeat", "200ms"}, w, w))
		require.EqualValues(t, 1, dropped.Load(), "a claim's answer was dropped")

		r := e.run(t, runID)
		require.Equal(t, "COMPLETED", r.S("status"), out.String())
		require.Equal(t, 4, r.N("tasksCompleted"))
		ex := s.query(t, e.token, `query($id: ID!) { executionRun(id: $id) { executions { status attemptNumber task { id } } } }`,
			M{"id": runID}).L("executionRun.executions")
		require.Len(t, ex, 4, "every task executed once:\n%s", out.String())
		for _, x := range ex {
			require.Equal(t, "COMPLETED", x.S("status"), out.String())
			require.Equal(t, 1, x.N("attemptNumber"), out.String())
		}
	})
}
