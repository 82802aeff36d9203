package main

import (
	"fmt"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/testdb"
)

// heapPeak samples the heap's live and unswept objects every millisecond
// until stop is called, and returns how far it rose above where it stood.
func heapPeak() (stop func() uint64) {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	runtime.GC()
	base := read()
	var peak atomic.Uint64
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for {
			if v := read(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	return func() uint64 {
		close(done)
		<-finished
		if p := peak.Load(); p > base {
			return p - base
		}
		return 0
	}
}

// One query cannot make the server hold more than its read budget (twice
// --max-response-size): 30 ReAct steps of 300 KB observations, then 20
// aliases of the session's first 100 steps. Before the budget every answer
// was LIMIT_EXCEEDED too, but only after the whole result was built (with
// 900 KB observations the heap rose 3.4 GB; the issue saw RSS reach 5.56 GB).
// Not parallel: the figure is this process's heap.
func TestReadBudgetBoundsMemory(t *testing.T) {
	testdb.Run(t, func(t *testing.T, url string) {
		s, _ := startServerWith(t, url, serverOptions{args: []string{"--max-response-size", "1MiB"}})
		f := newSessionFixture(t, s, nil)
		observation := strings.Repeat("x", 300_000)
		steps := 30
		if raceEnabled {
			steps = 10 // the race detector slows the drivers tenfold; 3 MB still passes the 2 MB budget
		}
		for i := range steps {
			s.query(t, f.agent, recordStepMutation, M{"in": M{"sessionId": f.session, "thought": fmt.Sprintf("t%d", i),
				"action": "read", "actionType": "TOOL_CALL", "observation": observation, "success": true}})
		}
		var q strings.Builder
		q.WriteString("query($id: ID!) {")
		for i := range 20 {
			fmt.Fprintf(&q, " a%d: agentSession(id: $id) { steps(first: 100) { nodes { observation } } }", i)
		}
		q.WriteString(" }")

		stop := heapPeak()
		r := s.do(t, f.agent, q.String(), M{"id": f.session})
		grew := stop()
		require.NotEmpty(t, r.Errors)
		require.Equal(t, "LIMIT_EXCEEDED", r.code(), "%+v", r.Errors)
		t.Logf("20 aliases × 100 steps of 300 KB (9 MB stored, 180 MB asked): heap rose %d MB with a 2 MB read budget", grew>>20)
		// The budget is 2 MB; the driver's buffers and the request around it
		// come on top. Without the budget the rise is near a gigabyte.
		require.Less(t, grew, uint64(100<<20), "the request's memory stays near its budget")

		// One alias under the budget still answers.
		ok := s.query(t, f.agent, `query($id: ID!) { agentSession(id: $id) { steps(first: 3) { nodes { stepId } } } }`, M{"id": f.session})
		require.Len(t, ok.L("agentSession.steps.nodes"), 3)
	})
}
