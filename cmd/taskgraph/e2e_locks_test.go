package main

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/store"
	"github.com/taskgraph/taskgraph/internal/testdb"
)

// TestStartRunAnswersStoredCounters: startExecutionRun answers with the run
// as stored, its counters recounted (it used to answer tasksTotal 0 and
// wavesTotal 0).
func TestStartRunAnswersStoredCounters(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		e := newExecList(t, s, 3)
		e.fiveTasks(t)
		got := s.query(t, e.token, `mutation($in: StartExecutionRunInput!) {
			startExecutionRun(input: $in) { run { id tasksTotal wavesTotal agentsActive } } }`,
			M{"in": M{"taskListId": e.list}}).at("startExecutionRun.run")
		stored := e.run(t, got.S("id"))
		require.Equal(t, stored.N("tasksTotal"), got.N("tasksTotal"))
		require.Equal(t, stored.N("wavesTotal"), got.N("wavesTotal"))
		require.Positive(t, got.N("tasksTotal"))
		require.Positive(t, got.N("wavesTotal"))
	})
}

// postgresServer starts a server on PostgreSQL, or skips: these tests are of
// row locks SQLite does not have (its single writer serialises everything).
func postgresServer(t *testing.T, args ...string) *testServer {
	t.Helper()
	return startServer(t, testdb.Postgres(t), args...)
}

// TestClaimsDoNotWaitForTheRunLock: claims and completions of a run never
// lock its row — they take a slot and their task — so while a transaction
// holds the run's row the way advancing a run or the sweep does, 40 agents
// still claim and complete a task each (had they queued on the row, they
// would wait for a release that comes only after they answered; the wave
// keeps open tasks, so no completion has to advance the run). Their leases
// are stamped by the database clock once they hold their slot: the run's
// agents' working intervals never overlap more than maxParallelAgents deep.
func TestClaimsDoNotWaitForTheRunLock(t *testing.T) {
	t.Parallel()
	const claimers = 40
	s := postgresServer(t)
	e := newExecList(t, s, 20)
	inputs := make([]M, 2*claimers)
	for i := range inputs {
		inputs[i] = M{"title": fmt.Sprintf("T%03d", i), "taskListId": e.list}
	}
	bulkTasks(t, s, e.token, e.project, inputs)
	run := e.start(t)
	_, runID, ok := domain.ParseGlobalID(run)
	require.True(t, ok)

	held, release := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- s.DB.InTx(context.Background(), func(q *store.Q) error {
			if _, err := q.Runs.RunForUpdate(context.Background(), runID); err != nil {
				return err
			}
			close(held)
			<-release
			return nil
		})
	}()
	<-held
	client := fastClient(claimers)
	client.Timeout = 20 * time.Second
	start := make(chan struct{})
	var wg sync.WaitGroup
	errs := make([]error, claimers)
	got := make([]int, claimers)
	for i := range claimers {
		wg.Go(func() {
			<-start
			var r claimResult
			if errs[i] = s.call(client, e.agent, claimMutation, M{"in": M{"runId": run}}, &r); errs[i] != nil {
				return
			}
			if r.ClaimTask.Agent == nil {
				return // CONCURRENCY_LIMIT: 20 slots for 40 claimers at once
			}
			got[i]++
			errs[i] = s.call(client, e.agent, completeMutation, M{"in": M{"agentId": r.ClaimTask.Agent.ID}}, nil)
		})
	}
	close(start)
	wg.Wait()
	close(release)
	require.NoError(t, <-done)
	total := 0
	for i, err := range errs {
		require.NoError(t, err, "claimer %d", i)
		total += got[i]
	}
	require.Positive(t, total, "tasks were claimed and completed while the run's row was locked")
	agents := s.query(t, e.token, `query($id: ID!) { executionRun(id: $id) { agents { spawnedAt terminatedAt } } }`,
		M{"id": run}).L("executionRun.agents")
	require.Len(t, agents, total)
	type edge struct {
		at    time.Time
		delta int
	}
	var edges []edge
	for _, a := range agents {
		from, err := time.Parse(time.RFC3339Nano, a.S("spawnedAt"))
		require.NoError(t, err)
		to, err := time.Parse(time.RFC3339Nano, a.S("terminatedAt"))
		require.NoError(t, err)
		edges = append(edges, edge{from, 1}, edge{to, -1})
	}
	slices.SortFunc(edges, func(x, y edge) int { return cmp.Or(x.at.Compare(y.at), cmp.Compare(x.delta, y.delta)) })
	live, most := 0, 0
	for _, x := range edges {
		live += x.delta
		most = max(most, live)
	}
	require.LessOrEqual(t, most, 20, "agents' working intervals, by the database clock")
}

// TestHeartbeatDoesNotWaitForTheRunLock: while a transaction holds a run's
// row the way a claim or a completion does, an agent of that run still
// heartbeats (its heartbeat row refers to the run, which needs a key-share
// lock a FOR UPDATE would block).
func TestHeartbeatDoesNotWaitForTheRunLock(t *testing.T) {
	t.Parallel()
	s := postgresServer(t)
	e := newExecList(t, s, 3)
	e.fiveTasks(t)
	run := e.start(t)
	agent := e.claim(t, run).S("agent.id")
	_, runID, ok := domain.ParseGlobalID(run)
	require.True(t, ok)

	held, release := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- s.DB.InTx(context.Background(), func(q *store.Q) error {
			if _, err := q.Runs.RunForUpdate(context.Background(), runID); err != nil {
				return err
			}
			close(held)
			<-release
			return nil
		})
	}()
	<-held
	client := fastClient(1)
	client.Timeout = 20 * time.Second
	err := s.call(client, e.agent, `mutation($in: HeartbeatInput!) { heartbeat(input: $in) { directive } }`,
		M{"in": M{"agentId": agent, "progressPercent": 10}}, nil)
	close(release)
	require.NoError(t, err, "the heartbeat went through while the run was locked")
	require.NoError(t, <-done)
}

// TestCancelWhileAgentsSettle: a cancel, completions and failures of the
// same run, all at once, on one lock order: PostgreSQL aborts no transaction
// as a deadlock, and the run ends CANCELLED with every agent terminated.
func TestCancelWhileAgentsSettle(t *testing.T) {
	t.Parallel()
	const agents = 8
	s := postgresServer(t, "--heartbeat-interval=100ms", "--missed-heartbeats=50")
	for round := range 4 {
		e := newExecList(t, s, agents)
		inputs := make([]M, agents)
		for i := range inputs {
			inputs[i] = M{"title": fmt.Sprintf("R%dT%d", round, i), "taskListId": e.list}
		}
		bulkTasks(t, s, e.token, e.project, inputs)
		run := e.start(t)
		ids := make([]string, agents)
		for i := range ids {
			ids[i] = e.claim(t, run).S("agent.id")
		}
		before := s.DB.Aborts()
		client := fastClient(agents + 1)
		start := make(chan struct{})
		var wg sync.WaitGroup
		errs := make([]error, agents+1)
		for i, id := range ids {
			wg.Go(func() {
				<-start
				if i%2 == 0 {
					errs[i] = s.call(client, e.agent, `mutation($in: CompleteTaskInput!) { completeTask(input: $in) { task { id } } }`,
						M{"in": M{"agentId": id, "filesModified": []string{}}}, nil)
				} else {
					errs[i] = s.call(client, e.agent, `mutation($in: FailTaskInput!) { failTask(input: $in) { task { id } } }`,
						M{"in": M{"agentId": id, "error": "boom", "retryable": true}}, nil)
				}
			})
		}
		wg.Go(func() {
			<-start
			errs[agents] = s.call(client, e.token, `mutation($in: RunActionInput!) { cancelExecutionRun(input: $in) { run { id } } }`,
				M{"in": M{"runId": run}}, nil)
		})
		close(start)
		wg.Wait()
		for i, err := range errs {
			// An agent call that lost the race to the cancel is fenced.
			if err != nil && i < agents && strings.Contains(err.Error(), "LEASE_LOST") {
				continue
			}
			require.NoError(t, err, "call %d", i)
		}
		require.Zero(t, s.DB.Aborts()-before, "no transaction was aborted as a deadlock")
		r := e.run(t, run)
		require.Equal(t, "CANCELLED", r.S("status"))
		require.Zero(t, r.N("agentsActive"))
	}
}
