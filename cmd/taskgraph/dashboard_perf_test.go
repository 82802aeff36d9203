package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptrace"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/loader"
	"github.com/taskgraph/taskgraph/internal/testdb"
	"github.com/taskgraph/taskgraph/internal/ui"
)

// serverTime posts one GraphQL request and returns the time from the request
// written to the first byte of the answer (the server's time, loopback
// included: gqlgen answers once the whole result is resolved) and the decoded
// answer's data.
func serverTime(tb testing.TB, s *testServer, token, query string, vars M) (time.Duration, map[string]any) {
	tb.Helper()
	body, err := json.Marshal(M{"query": query, "variables": vars})
	require.NoError(tb, err)
	var wrote, first time.Time
	trace := &httptrace.ClientTrace{
		WroteRequest:         func(httptrace.WroteRequestInfo) { wrote = time.Now() },
		GotFirstResponseByte: func() { first = time.Now() },
	}
	req, err := http.NewRequest(http.MethodPost, s.URL+"/graphql", bytes.NewReader(body))
	require.NoError(tb, err)
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), trace))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	require.NoError(tb, err)
	defer res.Body.Close()
	var out struct {
		Data   map[string]any
		Errors []gqlError
	}
	require.NoError(tb, json.NewDecoder(res.Body).Decode(&out))
	require.Empty(tb, out.Errors)
	return first.Sub(wrote), out.Data
}

// TestDashboardRunPage500 measures what opening the dashboard's run page
// costs the server for a run of 500 tasks: the page's own query
// (internal/ui/assets/queries/run.graphql, the run's tree and the last 100
// events of its feed) against a run where 50 agents claimed tasks,
// heartbeated and logged and 25 completed. It logs the median and worst
// server time of 10 reads and the SQL statements of one read; it asserts only
// what the page gets, not times. Under the race detector (make test) it reads
// a 100-task run instead; run it without -race for the figure:
// go test -run TestDashboardRunPage500 -v ./cmd/taskgraph/.
func TestDashboardRunPage500(t *testing.T) {
	t.Parallel()
	tasks, claimed, completed := 500, 50, 25
	if raceEnabled {
		// make test runs with -race: check the page's content on a smaller
		// run; the figure comes from a run without it.
		tasks, claimed, completed = 100, 10, 5
	}
	runQuery, err := ui.Query("run")
	require.NoError(t, err)
	viewerQuery, err := ui.Query("viewer")
	require.NoError(t, err)
	testdb.Run(t, func(t *testing.T, dbURL string) {
		s := startServerWait(t, dbURL, loader.DefaultTiming)
		e := benchList(t, s, 100)
		e.flatTasks(t, e.list, tasks)
		run := e.startList(t, e.list)
		agents := e.claimN(t, http.DefaultClient, run, claimed)
		for i, a := range agents {
			require.NoError(t, s.call(http.DefaultClient, e.agent, heartbeatMutation, M{"in": M{"agentId": a, "progressPercent": 40, "currentStep": "building"}}, nil))
			require.NoError(t, s.call(http.DefaultClient, e.agent, `mutation($in: AppendExecutionLogInput!) { appendExecutionLog(input: $in) { execution { id } } }`,
				M{"in": M{"agentId": a, "lines": []string{"step 1", "step 2", fmt.Sprintf("agent %d", i)}}}, nil))
			if i < completed {
				require.NoError(t, s.call(http.DefaultClient, e.agent, completeMutation, M{"in": M{"agentId": a}}, nil))
			}
		}

		vars := M{"id": run, "feed": 100}
		serverTime(t, s, s.AdminToken, viewerQuery, nil) // the token's last-used mark, once per session
		serverTime(t, s, s.AdminToken, runQuery, vars)   // warm the connection pool and the statement cache
		var times []time.Duration
		var data map[string]any
		var stmts int64
		for i := range 10 {
			before := s.DB.Statements()
			d, got := serverTime(t, s, s.AdminToken, runQuery, vars)
			if i == 0 {
				stmts, data = s.DB.Statements()-before, got
			}
			times = append(times, d)
		}
		slices.Sort(times)

		r := jv{t: t, v: data}.at("executionRun")
		n := 0
		for _, w := range r.at("waves").v.([]any) {
			n += len(w.(map[string]any)["assignments"].([]any))
		}
		require.Equal(t, tasks, n, "every task of the run is on the page")
		require.Len(t, r.at("agents").v, claimed)
		require.Len(t, r.at("executions").v, claimed)
		if feed := len(r.at("events.nodes").v.([]any)); raceEnabled {
			require.NotZero(t, feed, "the feed's events")
		} else {
			require.Equal(t, 100, feed, "the feed's last 100 events")
		}
		t.Logf("run page of a %d-task run (%d agents, %d completed): server time median %v, worst %v of 10 reads; %d SQL statements per read",
			tasks, claimed, completed, times[len(times)/2].Round(100*time.Microsecond), times[len(times)-1].Round(100*time.Microsecond), stmts)
	})
}
