//go:build unix

package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/events"
	"github.com/taskgraph/taskgraph/internal/testdb"
)

// pooledServer starts a server whose --database is PgBouncer in transaction
// mode (--db-pooler transaction) and whose --listen-database is the direct
// URL of the same database.
func pooledServer(t *testing.T, pooled, direct string, o serverOptions) *testServer {
	t.Helper()
	o.args = append([]string{"--db-pooler", "transaction", "--listen-database", direct}, o.args...)
	s, _ := startServerWith(t, pooled, o)
	return s
}

// TestExecutionThroughPgBouncer: the core execution scenario behind
// PgBouncer in transaction mode — a run whose tasks two agents of the
// reference agent claim, heartbeat and complete — with every statement
// through the pooler (no prepared statements, no session state).
func TestExecutionThroughPgBouncer(t *testing.T) {
	t.Parallel()
	direct := testdb.Postgres(t)
	pooled := startPgBouncer(t, direct)
	s := pooledServer(t, pooled, direct, serverOptions{})

	e := newExecList(t, s, 2)
	e.fiveTasks(t)
	e.add(t, "T6", M{"codebaseTests": []string{"go test"}})
	from := s.eventCursor(t, s.AdminToken, e.project)
	runID := e.start(t)
	sub := s.subscribe(t, s.AdminToken, e.project, from, "TASK_CLAIMED", "RUN_COMPLETED")
	var out strings.Builder
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	require.NoError(t, run(ctx, []string{"agent", "--url", s.URL, "--token", e.agent, "--run", runID,
		"--simulate", "--parallel", "2", "--poll", "20ms", "--work", "60ms", "--heartbeat", "20ms"}, &syncWriter{w: &out}, io.Discard))
	r := e.run(t, runID)
	require.Equal(t, "COMPLETED", r.S("status"), out.String())
	require.Equal(t, 6, r.N("tasksCompleted"))
	require.LessOrEqual(t, r.N("maxParallelReached"), 2)
	// The subscriber heard every claim, then the run's end.
	for range 6 {
		require.Equal(t, "TASK_CLAIMED", nextEvent(t, sub).Type)
	}
	require.Equal(t, "RUN_COMPLETED", nextEvent(t, sub).Type)
	// Heartbeats went through the pooler too: each execution logged its
	// simulated progress and ended COMPLETED, once.
	ex := s.query(t, e.token, `query($id: ID!) { executionRun(id: $id) { executions { status attemptNumber task { id } } } }`,
		M{"id": runID}).L("executionRun.executions")
	require.Len(t, ex, 6)
	for _, x := range ex {
		require.Equal(t, "COMPLETED", x.S("status"))
		require.Equal(t, 1, x.N("attemptNumber"))
	}
}

// TestReplicasThroughPgBouncer: two replicas, each behind PgBouncer in
// transaction mode and listening on the direct URL, keep the multi-replica
// guarantees: claims released together on both hand each task out once,
// events written through one reach the other's subscribers by LISTEN (the
// poll is far too slow to be what delivers), and silent agents are
// terminated by exactly one of the two sweeps.
func TestReplicasThroughPgBouncer(t *testing.T) {
	t.Parallel()
	direct := testdb.Postgres(t)
	pooled := startPgBouncer(t, direct)
	o := serverOptions{events: events.Options{PollInterval: time.Hour},
		args: []string{"--heartbeat-interval", "200ms", "--missed-heartbeats", "2"}}
	a := pooledServer(t, pooled, direct, o)
	b := pooledServer(t, pooled, direct, o)
	b.AdminToken = a.AdminToken // one database, one admin

	t.Run("claims across replicas", func(t *testing.T) {
		const tasks, limit, claimers = 12, 8, 24
		e := newExecList(t, a, limit)
		inputs := make([]M, tasks)
		for i := range inputs {
			inputs[i] = M{"title": fmt.Sprintf("T%02d", i), "taskListId": e.list}
		}
		bulkTasks(t, a, e.token, e.project, inputs)
		run := e.start(t)
		type claim struct {
			ClaimTask struct {
				Task       *struct{ ID string }
				WaitReason *string
			}
		}
		got := make([]claim, claimers)
		errs := make([]error, claimers)
		client := fastClient(claimers)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range claimers {
			replica := a
			if i%2 == 1 {
				replica = b
			}
			wg.Go(func() {
				<-start
				errs[i] = replica.call(client, e.agent, claimMutation,
					M{"in": M{"runId": run, "hostname": "h", "processId": fmt.Sprint(i)}}, &got[i])
			})
		}
		close(start)
		wg.Wait()
		seen := map[string]int{}
		for i := range claimers {
			require.NoError(t, errs[i], "claimer %d", i)
			if c := got[i].ClaimTask; c.Task != nil {
				seen[c.Task.ID]++
			} else {
				require.Equal(t, "CONCURRENCY_LIMIT", *c.WaitReason, "claimer %d", i)
			}
		}
		require.Len(t, seen, limit, "as many claims as slots")
		for id, n := range seen {
			require.Equal(t, 1, n, "task %s claimed %d times", id, n)
		}
		require.Equal(t, limit, e.run(t, run).N("agentsActive"))

		// Nobody heartbeats: both replicas sweep, each agent is
		// terminated once.
		eventually(t, "the sweeps terminated the silent agents", func() bool {
			return e.run(t, run).N("agentsActive") == 0
		})
		terminated := 0
		for _, typ := range e.eventTypes(t) {
			if typ == "AGENT_TERMINATED" {
				terminated++
			}
		}
		require.Equal(t, limit, terminated, "one AGENT_TERMINATED per silent agent")
		ex := a.query(t, e.token, `query($id: ID!) { executionRun(id: $id) { executions { status } } }`,
			M{"id": run}).L("executionRun.executions")
		require.Len(t, ex, limit, "no execution started twice")
	})

	t.Run("events across replicas", func(t *testing.T) {
		eventsAcrossReplicas(t, a, b, "pooled-replicas")
	})
}
