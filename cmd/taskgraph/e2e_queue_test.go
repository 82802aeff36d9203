package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/testdb"
)

var queueSlugs atomic.Int64

// queueFixture is a project with a planner and a worker to enqueue items for.
type queueFixture struct {
	s         *testServer
	token     string // the project owner's (MEMBER)
	project   string
	planner   string
	worker    string
	functions map[string]bool
}

func newQueueFixture(t *testing.T, s *testServer) *queueFixture {
	t.Helper()
	n := queueSlugs.Add(1)
	_, token := s.member(t, fmt.Sprintf("qowner%04d", n))
	f := &queueFixture{s: s, token: token, project: s.createProject(t, token, fmt.Sprintf("q%05d-queue", n)), functions: map[string]bool{}}
	f.planner = s.query(t, token, `mutation($p: ID!) { createPlanner(input: {projectId: $p, userQuestion: "why?", model: "m"}) { planner { id } } }`,
		M{"p": f.project}).S("createPlanner.planner.id")
	f.worker = s.query(t, token, `mutation($p: ID!) { createWorker(input: {plannerId: $p, taskDescription: "do it"}) { worker { id } } }`,
		M{"p": f.planner}).S("createWorker.worker.id")
	return f
}

// function registers a queue function (as admin).
func (f *queueFixture) function(t *testing.T, name string, maxAttempts, leaseSeconds int) {
	t.Helper()
	f.s.query(t, f.s.AdminToken, `mutation($in: RegisterQueueFunctionInput!) { registerQueueFunction(input: $in) { function { id name } } }`,
		M{"in": M{"name": name, "maxAttempts": maxAttempts, "leaseSeconds": leaseSeconds}})
}

const queueItemFields = `id status attempt maxAttempts priority uniqueKey scheduledAt errorMessage errors { attempt message at }
	result claimedBy leaseExpiresAt finishedAt functionName entityType entityId payload updatedAt createdAt`

// enqueue adds an item for the fixture's worker; extra input fields override.
func (f *queueFixture) enqueue(t *testing.T, function string, extra M) jv {
	t.Helper()
	in := M{"entityType": "WORKER", "entityId": f.worker, "functionName": function, "payload": M{"n": 1}}
	for k, v := range extra {
		in[k] = v
	}
	return f.s.query(t, f.token, `mutation($in: EnqueueFunctionInput!) { enqueueFunction(input: $in) { deduplicated item { `+queueItemFields+` } } }`,
		M{"in": in}).at("enqueueFunction")
}

func (f *queueFixture) claim(t *testing.T, token string, limit int, functions ...string) []jv {
	t.Helper()
	return f.s.query(t, token, `mutation($in: ClaimQueueItemsInput!) { claimQueueItems(input: $in) { items { `+queueItemFields+` } } }`,
		M{"in": M{"functionNames": functions, "workerName": "w", "limit": limit}}).L("claimQueueItems.items")
}

func (f *queueFixture) item(t *testing.T, id string) jv {
	t.Helper()
	return f.s.query(t, f.token, `query($id: ID!) { node(id: $id) { ... on QueueItem { `+queueItemFields+` } } }`, M{"id": id}).at("node")
}

// shift moves a column of an item's row (scheduled_at, lease_expires_at) by
// d on the server's database: the tests' way of letting time pass.
func (f *queueFixture) shift(t *testing.T, column, gid string, to time.Time) {
	t.Helper()
	_, id, ok := domain.ParseGlobalID(gid)
	require.True(t, ok)
	q := `UPDATE queue_items SET ` + column + ` = ? WHERE id = ?`
	if f.s.DB.Dialect() == "postgres" {
		q = `UPDATE queue_items SET ` + column + ` = $1 WHERE id = $2`
	}
	_, err := f.s.DB.SQL().ExecContext(context.Background(), q, to.UTC(), id)
	require.NoError(t, err)
}

func parseTime(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339Nano, s)
	require.NoError(t, err)
	return v
}

// TestQueueEnqueueRules: functions must be registered (ADMIN only), the
// entity must exist in a project the caller may change, inputs are bounded,
// and priorities and due times order the claims.
func TestQueueEnqueueRules(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		f := newQueueFixture(t, s)
		s.requireCode(t, f.token, `mutation { registerQueueFunction(input: {name: "x"}) { function { id } } }`, nil, "FORBIDDEN")
		r := s.do(t, f.token, `mutation($in: EnqueueFunctionInput!) { enqueueFunction(input: $in) { item { id } } }`,
			M{"in": M{"entityType": "WORKER", "entityId": f.worker, "functionName": "nope"}})
		require.Equal(t, "BAD_USER_INPUT", r.code())
		require.Equal(t, "functionName", r.ext("field"))
		f.function(t, "rules", 5, 60)
		fns := s.query(t, f.token, `{ queueFunctions { id name maxAttempts leaseSeconds } }`, nil).L("queueFunctions")
		names := []string{}
		for _, fn := range fns {
			names = append(names, fn.S("name"))
		}
		require.Contains(t, names, "rules")

		_, stranger := s.member(t, fmt.Sprintf("qstranger%04d", queueSlugs.Add(1)))
		s.requireCode(t, stranger, `mutation($in: EnqueueFunctionInput!) { enqueueFunction(input: $in) { item { id } } }`,
			M{"in": M{"entityType": "WORKER", "entityId": f.worker, "functionName": "rules"}}, "NOT_FOUND")
		r = s.do(t, f.token, `mutation($in: EnqueueFunctionInput!) { enqueueFunction(input: $in) { item { id } } }`,
			M{"in": M{"entityType": "PLANNER", "entityId": f.worker, "functionName": "rules"}})
		require.Equal(t, "BAD_USER_INPUT", r.code())
		require.Equal(t, "entityId", r.ext("field"))
		r = s.do(t, f.token, `mutation($in: ClaimQueueItemsInput!) { claimQueueItems(input: $in) { items { id } } }`,
			M{"in": M{"functionNames": []string{"rules"}, "workerName": "w", "limit": 101}})
		require.Equal(t, "LIMIT_EXCEEDED", r.code())

		low := f.enqueue(t, "rules", M{"priority": 1}).S("item.id")
		high := f.enqueue(t, "rules", M{"priority": 5, "entityType": "PLANNER", "entityId": f.planner}).S("item.id")
		later := f.enqueue(t, "rules", M{"priority": 9, "scheduledAt": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)}).S("item.id")
		got := f.claim(t, f.token, 10, "rules")
		require.Len(t, got, 2, "the item scheduled in an hour is not due")
		require.Equal(t, []string{high, low}, []string{got[0].S("id"), got[1].S("id")}, "highest priority first")
		require.Equal(t, 1, got[0].N("attempt"))
		require.Equal(t, "IN_PROGRESS", got[0].S("status"))
		require.Equal(t, "PLANNER", got[0].S("entityType"))
		n := s.query(t, f.token, `query($id: ID!) { node(id: $id) { ... on QueueItem { entity { __typename ... on Planner { id } } project { id } } } }`,
			M{"id": high}).at("node")
		require.Equal(t, "Planner", n.S("entity.__typename"))
		require.Equal(t, f.planner, n.S("entity.id"))
		require.Equal(t, f.project, n.S("project.id"))
		require.Equal(t, "PENDING", f.item(t, later).S("status"))

		page := s.query(t, f.token, `query($p: ID!) { queueItems(projectId: $p, filter: {status: [IN_PROGRESS]}, first: 10) { totalCount nodes { id } } }`,
			M{"p": f.project}).at("queueItems")
		require.Equal(t, 2, page.N("totalCount"))
	})
}

// TestQueueClaimsExactlyOnce: 200 concurrent claimers over 100 items (on
// PostgreSQL through two server replicas on one database) take every item
// exactly once.
func TestQueueClaimsExactlyOnce(t *testing.T) {
	t.Parallel()
	testdb.Run(t, func(t *testing.T, url string) {
		s := startServer(t, url)
		servers := []*testServer{s}
		if strings.HasPrefix(url, "postgres") {
			// A second replica in a process of its own, on the same database.
			replica := startChildServer(t, "127.0.0.1:0", url, s.AdminToken)
			servers = append(servers, &testServer{URL: "http://" + replica.addr, AdminToken: s.AdminToken})
		}
		f := newQueueFixture(t, s)
		f.function(t, "once", 3, 60)
		const items, claimers = 100, 200
		ids := map[string]bool{}
		for range items {
			ids[f.enqueue(t, "once", nil).S("item.id")] = true
		}
		require.Len(t, ids, items)
		hc := fastClient(64)
		got := make([][]string, claimers)
		concurrently(t, claimers, func(i int) (gqlResponse, error) {
			var out struct {
				ClaimQueueItems struct{ Items []struct{ ID string } }
			}
			srv := servers[i%len(servers)]
			err := srv.call(hc, f.token, `mutation($in: ClaimQueueItemsInput!) { claimQueueItems(input: $in) { items { id } } }`,
				M{"in": M{"functionNames": []string{"once"}, "workerName": fmt.Sprintf("c%d", i)}}, &out)
			for _, it := range out.ClaimQueueItems.Items {
				got[i] = append(got[i], it.ID)
			}
			return gqlResponse{}, err
		})
		seen := map[string]int{}
		for _, g := range got {
			require.LessOrEqual(t, len(g), 1)
			for _, id := range g {
				seen[id]++
			}
		}
		require.Len(t, seen, items, "every item claimed")
		for id, n := range seen {
			require.True(t, ids[id])
			require.Equal(t, 1, n, "item %s claimed %d times", id, n)
		}
		require.Empty(t, f.claim(t, f.token, 100, "once"), "nothing left")
	})
}

// TestQueueUniqueKeys: 20 concurrent enqueues with one unique key add one
// item; the other 19 say deduplicated and return it. A finished item frees
// its key.
func TestQueueUniqueKeys(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		f := newQueueFixture(t, s)
		f.function(t, "uniq", 3, 60)
		hc := fastClient(20)
		type res struct {
			EnqueueFunction struct {
				Deduplicated bool
				Item         struct{ ID string }
			}
		}
		out := make([]res, 20)
		concurrently(t, 20, func(i int) (gqlResponse, error) {
			err := s.call(hc, f.token, `mutation($in: EnqueueFunctionInput!) { enqueueFunction(input: $in) { deduplicated item { id } } }`,
				M{"in": M{"entityType": "WORKER", "entityId": f.worker, "functionName": "uniq", "uniqueKey": "k1"}}, &out[i])
			return gqlResponse{}, err
		})
		dedup, itemIDs := 0, map[string]bool{}
		for _, o := range out {
			if o.EnqueueFunction.Deduplicated {
				dedup++
			}
			itemIDs[o.EnqueueFunction.Item.ID] = true
		}
		require.Equal(t, 19, dedup)
		require.Len(t, itemIDs, 1, "every call returns the one item")
		total := s.query(t, f.token, `query($p: ID!) { queueItems(projectId: $p) { totalCount } }`, M{"p": f.project}).N("queueItems.totalCount")
		require.Equal(t, 1, total)

		// Held while IN_PROGRESS too; freed once final.
		var id string
		for k := range itemIDs {
			id = k
		}
		f.claim(t, f.token, 1, "uniq")
		again := f.enqueue(t, "uniq", M{"uniqueKey": "k1"})
		require.True(t, again.B("deduplicated"))
		require.Equal(t, id, again.S("item.id"))
		s.query(t, f.token, `mutation($id: ID!) { completeQueueItem(input: {id: $id, result: {ok: true}}) { item { id } } }`, M{"id": id})
		fresh := f.enqueue(t, "uniq", M{"uniqueKey": "k1"})
		require.False(t, fresh.B("deduplicated"))
		require.NotEqual(t, id, fresh.S("item.id"))
	})
}

// TestQueueRetrySchedule: a retryable failure goes back to PENDING due
// attempt⁴ seconds later; every error is kept; the last attempt's failure is
// FAILED, final. A non-retryable failure is FAILED at once.
func TestQueueRetrySchedule(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		f := newQueueFixture(t, s)
		f.function(t, "flaky", 3, 60)
		id := f.enqueue(t, "flaky", nil).S("item.id")
		fail := `mutation($id: ID!, $e: String!) { failQueueItem(input: {id: $id, error: $e}) { item { ` + queueItemFields + ` } } }`
		for attempt := 1; attempt <= 3; attempt++ {
			claimed := f.claim(t, f.token, 1, "flaky")
			require.Len(t, claimed, 1, "attempt %d", attempt)
			require.Equal(t, attempt, claimed[0].N("attempt"))
			it := s.query(t, f.token, fail, M{"id": id, "e": fmt.Sprintf("boom %d", attempt)}).at("failQueueItem.item")
			errs := it.L("errors")
			require.Len(t, errs, attempt, "every error kept")
			last := errs[attempt-1]
			require.Equal(t, attempt, last.N("attempt"))
			require.Equal(t, fmt.Sprintf("boom %d", attempt), last.S("message"))
			require.Equal(t, fmt.Sprintf("boom %d", attempt), it.S("errorMessage"))
			if attempt < 3 {
				require.Equal(t, "PENDING", it.S("status"))
				wait := parseTime(t, it.S("scheduledAt")).Sub(parseTime(t, last.S("at")))
				require.Equal(t, time.Duration(attempt*attempt*attempt*attempt)*time.Second, wait, "attempt %d backoff", attempt)
				require.Empty(t, f.claim(t, f.token, 1, "flaky"), "not due before its backoff")
				f.shift(t, "scheduled_at", id, time.Now().Add(-time.Second)) // let the backoff pass
			} else {
				require.Equal(t, "FAILED", it.S("status"))
				require.False(t, it.Null("finishedAt"))
			}
		}
		require.Empty(t, f.claim(t, f.token, 1, "flaky"))
		r := s.do(t, f.token, `mutation($id: ID!) { cancelQueueItem(input: {id: $id}) { item { id } } }`, M{"id": id})
		require.Equal(t, "INVALID_TRANSITION", r.code(), "FAILED is final")

		once := f.enqueue(t, "flaky", nil).S("item.id")
		f.claim(t, f.token, 1, "flaky")
		it := s.query(t, f.token, `mutation($id: ID!) { failQueueItem(input: {id: $id, error: "fatal", retryable: false}) { item { status attempt errors { message } } } }`,
			M{"id": once}).at("failQueueItem.item")
		require.Equal(t, "FAILED", it.S("status"))
		require.Equal(t, 1, it.N("attempt"))

		evs := s.pageEvents(t, f.token, f.project, "", "QUEUE_ITEM_FAILED")
		require.Len(t, evs, 4)
	})
}

// TestQueueLeaseRescue: an item whose lease expired is rescued by the sweep
// (a failed attempt, "lease expired") and claimed again as attempt 2; its
// first claimer then gets LEASE_LOST and changes nothing. A COMPLETED item is
// never moved by the sweep, even with a stale lease time.
func TestQueueLeaseRescue(t *testing.T) {
	t.Parallel()
	testdb.Run(t, func(t *testing.T, url string) {
		s := startServer(t, url, "--queue-sweep-interval", "20ms")
		f := newQueueFixture(t, s)
		f.function(t, "lease", 3, 60)
		_, otherToken := s.userWithToken(t, fmt.Sprintf("qagent%04d", queueSlugs.Add(1)), "AGENT", f.project)

		done := f.enqueue(t, "lease", M{"priority": 10}).S("item.id")
		id := f.enqueue(t, "lease", nil).S("item.id")
		require.Len(t, f.claim(t, f.token, 2, "lease"), 2)
		completed := s.query(t, f.token, `mutation($id: ID!) { completeQueueItem(input: {id: $id, attempt: 1, result: "fine"}) { item { `+queueItemFields+` } } }`,
			M{"id": done}).at("completeQueueItem.item")
		require.Equal(t, "COMPLETED", completed.S("status"))
		require.Equal(t, `"fine"`, string(mustJSON(t, completed.at("result").v)))

		// The claimer went silent: its lease ends; and a stale lease time on the completed row.
		f.shift(t, "lease_expires_at", id, time.Now().Add(-time.Minute))
		f.shift(t, "lease_expires_at", done, time.Now().Add(-time.Minute))
		eventually(t, "the sweep rescues the item", func() bool { return f.item(t, id).S("status") == "PENDING" })
		it := f.item(t, id)
		require.Equal(t, 1, it.N("attempt"))
		require.Equal(t, "lease expired", it.S("errors.0.message"))
		require.True(t, it.Null("leaseExpiresAt"))

		extend := `mutation($id: ID!) { extendQueueLease(input: {id: $id}) { item { id } } }`
		r := s.requireCode(t, f.token, extend, M{"id": id}, "LEASE_LOST")
		require.Equal(t, "PENDING", r.ext("status"))

		f.shift(t, "scheduled_at", id, time.Now().Add(-time.Second))
		again := f.claim(t, otherToken, 1, "lease")
		require.Len(t, again, 1)
		require.Equal(t, id, again[0].S("id"))
		require.Equal(t, 2, again[0].N("attempt"))
		// The first claimer's calls change nothing.
		s.requireCode(t, f.token, `mutation($id: ID!) { completeQueueItem(input: {id: $id, result: 1}) { item { id } } }`, M{"id": id}, "LEASE_LOST")
		s.requireCode(t, f.token, `mutation($id: ID!) { failQueueItem(input: {id: $id, error: "late"}) { item { id } } }`, M{"id": id}, "LEASE_LOST")
		// The same token fenced by attempt: attempt 1 is over.
		s.requireCode(t, otherToken, `mutation($id: ID!) { extendQueueLease(input: {id: $id, attempt: 1}) { item { id } } }`, M{"id": id}, "LEASE_LOST")
		ext := s.query(t, otherToken, `mutation($id: ID!) { extendQueueLease(input: {id: $id, attempt: 2}) { item { leaseExpiresAt attempt } } }`,
			M{"id": id}).at("extendQueueLease.item")
		require.Equal(t, 2, ext.N("attempt"))
		require.Equal(t, "IN_PROGRESS", f.item(t, id).S("status"))

		after := f.item(t, done)
		require.Equal(t, "COMPLETED", after.S("status"), "the sweep never moves a final item")
		require.Equal(t, completed.S("updatedAt"), after.S("updatedAt"))
		require.Empty(t, after.L("errors"))
	})
}

// TestQueueCancelRunning: cancel reaches a running item: its claimer's next
// lease extension gets LEASE_LOST (status CANCELLED), and so does its
// completion; CANCELLED is final.
func TestQueueCancelRunning(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		f := newQueueFixture(t, s)
		f.function(t, "cancel", 3, 60)
		id := f.enqueue(t, "cancel", nil).S("item.id")
		_, agent := s.userWithToken(t, fmt.Sprintf("qcancel%04d", queueSlugs.Add(1)), "AGENT", f.project)
		require.Len(t, f.claim(t, agent, 1, "cancel"), 1)
		s.query(t, agent, `mutation($id: ID!) { extendQueueLease(input: {id: $id}) { item { id } } }`, M{"id": id})
		s.requireCode(t, agent, `mutation($id: ID!) { cancelQueueItem(input: {id: $id}) { item { id } } }`, M{"id": id}, "FORBIDDEN")
		c := s.query(t, f.token, `mutation($id: ID!) { cancelQueueItem(input: {id: $id}) { item { status finishedAt leaseExpiresAt } } }`,
			M{"id": id}).at("cancelQueueItem.item")
		require.Equal(t, "CANCELLED", c.S("status"))
		r := s.requireCode(t, agent, `mutation($id: ID!) { extendQueueLease(input: {id: $id}) { item { id } } }`, M{"id": id}, "LEASE_LOST")
		require.Equal(t, "CANCELLED", r.ext("status"))
		s.requireCode(t, agent, `mutation($id: ID!) { completeQueueItem(input: {id: $id}) { item { id } } }`, M{"id": id}, "LEASE_LOST")
		s.requireCode(t, f.token, `mutation($id: ID!) { cancelQueueItem(input: {id: $id}) { item { id } } }`, M{"id": id}, "INVALID_TRANSITION")
		require.Equal(t, "CANCELLED", f.item(t, id).S("status"))

		pending := f.enqueue(t, "cancel", nil).S("item.id")
		s.query(t, f.token, `mutation($id: ID!) { cancelQueueItem(input: {id: $id}) { item { id } } }`, M{"id": pending})
		require.Empty(t, f.claim(t, agent, 1, "cancel"), "a cancelled item is never claimed")
		types := []string{}
		for _, e := range s.pageEvents(t, f.token, f.project, "", "QUEUE_ITEM_CANCELLED") {
			types = append(types, e.Type)
		}
		require.Len(t, types, 2)
	})
}

// TestQueueWorkerCommand: `taskgraph worker --parallel 4` runs 100 items,
// payload on stdin and the item in the environment, completing with stdout
// as the result (JSON when it parses) and failing with stderr; it waits on
// the event stream for items enqueued while it is idle.
func TestQueueWorkerCommand(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		f := newQueueFixture(t, s)
		f.function(t, "echo", 2, 60)
		const n = 100
		for i := range n {
			f.enqueue(t, "echo", M{"payload": M{"i": i}})
		}
		bad := f.enqueue(t, "echo", M{"payload": M{"fail": true}}).S("item.id")
		slug := s.query(t, f.token, `query($id: ID!) { node(id: $id) { ... on Project { slug } } }`, M{"id": f.project}).S("node.slug")
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var out syncBuffer
		errc := make(chan error, 1)
		huge := f.enqueue(t, "echo", M{"payload": M{"huge": true}}).S("item.id")
		quotes := f.enqueue(t, "echo", M{"payload": M{"quotes": true}}).S("item.id")
		script := `in=$(cat); case "$in" in *fail*) echo "no good" >&2; exit 3;; ` +
			`*huge*) head -c 1100000 /dev/zero | tr '\0' a; exit 0;; ` +
			`*quotes*) head -c 900000 /dev/zero | tr '\0' '"'; exit 0;; esac; ` +
			`printf '{"in":%s,"attempt":%s,"function":"%s"}' "$in" "$TASKGRAPH_ATTEMPT" "$TASKGRAPH_FUNCTION"`
		go func() {
			errc <- run(ctx, []string{"worker", "--function", "echo", "--exec", script, "--parallel", "4",
				"--project", slug, "--url", s.URL, "--token", f.token, "--poll", "1h"}, &out, &out)
		}()
		countDone := func() int {
			return s.query(t, f.token, `query($p: ID!) { queueItems(projectId: $p, filter: {status: [COMPLETED]}) { totalCount } }`,
				M{"p": f.project}).N("queueItems.totalCount")
		}
		eventually(t, "the worker completes every item", func() bool { return countDone() == n })
		// An item enqueued while the worker is idle wakes it through the event stream (--poll is an hour).
		late := f.enqueue(t, "echo", M{"payload": M{"late": true}}).S("item.id")
		eventually(t, "the idle worker runs a new item", func() bool { return f.item(t, late).S("status") == "COMPLETED" })
		it := f.item(t, late)
		require.Equal(t, M{"in": M{"late": true}, "attempt": float64(1), "function": "echo"}, it.at("result").v)
		// It failed, was retried after 1s (woken by its QUEUE_ITEM_FAILED event), and failed for good.
		eventually(t, "the retry runs and fails for good", func() bool { return f.item(t, bad).S("status") == "FAILED" })
		b := f.item(t, bad)
		require.Len(t, b.L("errors"), 2)
		require.Contains(t, b.S("errors.0.message"), "no good")
		require.Contains(t, b.S("errors.1.message"), "exit status 3")
		// Results the server cannot take fail the attempt instead of leaving the item to its lease.
		for id, want := range map[string]string{huge: "larger than", quotes: "refused its result"} {
			eventually(t, "an oversized result fails its item", func() bool { return f.item(t, id).S("status") == "FAILED" })
			require.Contains(t, f.item(t, id).S("errors.0.message"), want)
		}
		cancel()
		require.NoError(t, <-errc)
		require.NotContains(t, strings.Join(out.lines(), "\n"), "event stream:", "the worker's subscription never failed")
	})
}

// TestQueueWorkerSurvivesRestart: the reference worker runs 100 items with
// --parallel 4 while its server is SIGKILLed and restarted on the same
// database and address; every item completes, none is lost or run twice (a
// claim whose answer was lost in the crash runs once its lease expired).
func TestQueueWorkerSurvivesRestart(t *testing.T) {
	t.Parallel()
	testdb.Run(t, func(t *testing.T, dbURL string) {
		admin := "admin-" + strings.ReplaceAll(t.Name(), "/", "-")
		first := startChildServer(t, "127.0.0.1:0", dbURL, admin)
		s := &testServer{URL: "http://" + first.addr, AdminToken: admin}
		f := newQueueFixture(t, s)
		// A claim committed just before the crash whose answer never reached
		// the worker is recovered when its lease expires: 5s here.
		f.function(t, "restart", 3, 5)
		const n = 100
		for i := range n {
			f.enqueue(t, "restart", M{"payload": M{"i": i}})
		}
		ran := t.TempDir() + "/ran"
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var out syncBuffer
		errc := make(chan error, 1)
		go func() {
			errc <- run(ctx, []string{"worker", "--function", "restart", "--parallel", "4", "--url", s.URL, "--token", f.token,
				"--project", f.project, "--poll", "200ms",
				"--exec", `sleep 0.02; echo "$TASKGRAPH_QUEUE_ITEM_ID $TASKGRAPH_ATTEMPT" >> ` + ran + `; cat`}, &out, &out)
		}()
		countDone := func(srv *testServer) int {
			var d struct{ QueueItems struct{ TotalCount int } }
			if err := srv.call(http.DefaultClient, f.token, `query($p: ID!) { queueItems(projectId: $p, filter: {status: [COMPLETED]}) { totalCount } }`,
				M{"p": f.project}, &d); err != nil {
				return -1
			}
			return d.QueueItems.TotalCount
		}
		eventually(t, "a quarter of the items done", func() bool { return countDone(s) >= n/4 })
		first.kill(t)
		time.Sleep(300 * time.Millisecond) // the worker's calls fail meanwhile
		second := startChildServer(t, first.addr, dbURL, admin)
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("completed: %d; worker output:\n%s", countDone(s), strings.Join(out.lines(), "\n"))
			}
		})
		eventually(t, "every item completed after the restart", func() bool { return countDone(s) == n })
		cancel()
		require.NoError(t, <-errc)
		second.stop(t)

		raw, err := os.ReadFile(ran)
		require.NoError(t, err)
		runs := map[string]int{}
		for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
			runs[strings.Fields(line)[0]]++
		}
		require.Len(t, runs, n, "every item ran")
		for id, k := range runs {
			require.Equal(t, 1, k, "item %s ran %d times", id, k)
		}
	})
}
