//go:build unix

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/client"
	"github.com/taskgraph/taskgraph/internal/events"
)

// ready reports whether the server's /readyz answers 200.
func (s *testServer) ready(t *testing.T) bool {
	t.Helper()
	resp, err := http.Get(s.URL + "/readyz")
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// streamFollower follows a project's events the way a client should: it
// remembers the cursor of each event and, when the stream ends with a
// cursor (UNAVAILABLE, LIMIT_EXCEEDED) or its connection drops, subscribes
// again from there. It stops after RUN_COMPLETED.
type streamFollower struct {
	s       *testServer
	token   string
	project string

	mu       sync.Mutex
	events   []ev
	resumes  int
	reasons  map[string]int // why it resubscribed
	err      error
	finished chan struct{}
}

func followProject(t *testing.T, s *testServer, token, project, after string) *streamFollower {
	f := &streamFollower{s: s, token: token, project: project, reasons: map[string]int{}, finished: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() {
		cancel()
		<-f.finished
	})
	go f.run(ctx, after)
	return f
}

func (f *streamFollower) run(ctx context.Context, after string) {
	defer close(f.finished)
	for ctx.Err() == nil {
		done, err := f.once(ctx, &after)
		if done {
			return
		}
		f.mu.Lock()
		f.resumes++
		if err != nil {
			key := err.Error()
			var es client.Errors
			if errors.As(err, &es) {
				key += fmt.Sprint(" at ", es[0].Path)
			}
			f.reasons[key]++
		}
		if f.resumes > 50 {
			f.err = fmt.Errorf("resubscribed more than 50 times; last: %w", err)
			f.mu.Unlock()
			return
		}
		f.mu.Unlock()
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// once follows one subscription; done: the run completed, or a failure that
// no resubscription helps (recorded in f.err).
func (f *streamFollower) once(ctx context.Context, after *string) (done bool, err error) {
	conn, err := client.New(f.s.URL, f.token).Dial(ctx)
	if err != nil {
		return false, err // the server may be unable to check the token now
	}
	defer conn.Close()
	sub, err := conn.Subscribe(ctx, subscribeEvents, M{"p": f.project, "after": *after})
	if err != nil {
		return false, err
	}
	for {
		e, err := tryNextEvent(sub)
		var es client.Errors
		switch {
		case errors.As(err, &es):
			cursor, _ := es[0].Extensions["cursor"].(string)
			if es.Code() == "UNAVAILABLE" || (cursor != "" && cursor == *after) {
				return false, err
			}
			if cursor != "" {
				*after = cursor
				return false, err
			}
			f.fail(err)
			return true, err
		case err != nil:
			return false, err // the connection dropped: resubscribe
		}
		f.mu.Lock()
		f.events = append(f.events, e)
		f.mu.Unlock()
		*after = e.Cursor
		if e.Type == "RUN_COMPLETED" {
			return true, nil
		}
	}
}

func (f *streamFollower) fail(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.err = err
}

// TestDatabaseRestartMidRun: a private PostgreSQL is stopped (fast, every
// connection closed, as a restart or failover does) and started again while
// three agents of the reference agent work through a run and three
// subscribers follow the project's events. Meanwhile requests answer the
// retryable UNAVAILABLE and /readyz 503; afterwards /readyz answers 200
// again, the run completes with every task executed exactly once (no lease
// was lost to the outage, nothing was redone), and each subscriber's stream
// is the project's whole event log, in order, without a gap or a repeat.
func TestDatabaseRestartMidRun(t *testing.T) {
	t.Parallel()
	pg := startPrivatePostgres(t)
	s, _ := startServerWith(t, pg.URL, serverOptions{
		events: events.Options{ReconnectMin: 20 * time.Millisecond, ReconnectMax: 200 * time.Millisecond},
		// A lease lasts 3 × 1 s: an outage longer than that must not cost
		// the agents their tasks.
		args: []string{"--heartbeat-interval", "1s", "--missed-heartbeats", "3"},
	})
	const tasks = 16
	e := newExecList(t, s, 3)
	for i := range tasks {
		e.add(t, fmt.Sprintf("T%02d", i), nil)
	}
	for i := 4; i < tasks; i++ { // four waves of four
		e.link(t, fmt.Sprintf("T%02d", i), fmt.Sprintf("T%02d", i-4), "DEPENDS_ON")
	}
	start := s.eventCursor(t, s.AdminToken, e.project)
	runID := e.start(t)
	followers := make([]*streamFollower, 3)
	for i := range followers {
		followers[i] = followProject(t, s, s.AdminToken, e.project, start)
	}

	var out strings.Builder
	ctx, cancel := context.WithTimeout(context.Background(), 2*waitLimit)
	defer cancel()
	agentDone := make(chan error, 1)
	go func() {
		agentDone <- run(ctx, []string{"agent", "--url", s.URL, "--token", e.agent, "--run", runID,
			"--simulate", "--parallel", "3", "--poll", "20ms", "--work", "80ms", "--heartbeat", "200ms", "--patience", "1m"},
			&syncWriter{w: &out}, io.Discard)
	}()

	eventually(t, "the agents completed some tasks", func() bool { return e.run(t, runID).N("tasksCompleted") >= 3 })
	require.True(t, s.ready(t))
	pg.Stop(t)
	eventually(t, "readiness went false", func() bool { return !s.ready(t) })
	eventually(t, "a request answered UNAVAILABLE", func() bool {
		r := s.do(t, e.token, `query($id: ID!) { executionRun(id: $id) { status } }`, M{"id": runID})
		return r.code() == "UNAVAILABLE"
	})
	// The outage outlasts a lease (3 s): the agents keep heartbeating into
	// UNAVAILABLE meanwhile.
	time.Sleep(3500 * time.Millisecond)
	pg.Start(t)
	eventually(t, "readiness came back", func() bool { return s.ready(t) })

	select {
	case err := <-agentDone:
		require.NoError(t, err, out.String())
	case <-time.After(2 * waitLimit):
		t.Fatalf("the agents did not finish the run:\n%s", out.String())
	}
	r := e.run(t, runID)
	require.Equal(t, "COMPLETED", r.S("status"), out.String())
	require.Equal(t, tasks, r.N("tasksCompleted"))
	ex := s.query(t, e.token, `query($id: ID!) { executionRun(id: $id) { executions { status attemptNumber task { id } } } }`,
		M{"id": runID}).L("executionRun.executions")
	perTask := map[string]int{}
	for _, x := range ex {
		require.Equal(t, "COMPLETED", x.S("status"), "no execution was interrupted by the outage:\n%s", out.String())
		require.Equal(t, 1, x.N("attemptNumber"))
		perTask[x.S("task.id")]++
	}
	require.Len(t, perTask, tasks)
	for id, n := range perTask {
		require.Equal(t, 1, n, "task %s executed %d times", id, n)
	}

	// The followers stop at the run's end (the list's status change may
	// follow it).
	all := s.pageEvents(t, s.AdminToken, e.project, start)
	end := slices.IndexFunc(all, func(x ev) bool { return x.Type == "RUN_COMPLETED" })
	require.Positive(t, end)
	all = all[:end+1]
	for i, f := range followers {
		select {
		case <-f.finished:
		case <-time.After(waitLimit):
			t.Fatalf("subscriber %d did not see the run complete", i)
		}
		f.mu.Lock()
		require.NoError(t, f.err, "subscriber %d", i)
		require.Equal(t, cursors(all), cursors(f.events), "subscriber %d's stream is the whole log, once, in order", i)
		t.Logf("subscriber %d: %d events, %d resubscriptions: %v", i, len(f.events), f.resumes, f.reasons)
		f.mu.Unlock()
	}
}
