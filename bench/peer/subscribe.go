package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The subscription scenario: many subscriptions with one selection on one
// project, over websockets (graphql-transport-ws), while events commit at a
// steady rate through the server's own API. See README.md.

// subConfig is the scenario's flags.
type subConfig struct {
	connections, perConn int           // Taskgraph's large run
	peerSubscribers      int           // the side-by-side run's subscribers, on Taskgraph and PostGraphile 5
	rate                 float64       // events per second
	duration             time.Duration // the window in which events commit
	tasks                int           // tasks the events rotate over
}

// subscribers is the large run's subscriptions.
func (s subConfig) subscribers() int { return s.connections * s.perConn }

// Taskgraph's subscription and the mutation that makes the events.
const (
	taskgraphWatch = `subscription Watch($projectId: ID!) {
  projectEvents(projectId: $projectId) { cursor type occurredAt task { id displayId title status } }
}`
	taskgraphTouch = `mutation Touch($input: UpdateTaskInput!) { updateTask(input: $input) { task { id } } }`
)

// PostGraphile 5's: the subscription field postgraphile5.mjs adds (its
// listen step on the NOTIFY of a trigger on tasks, subTriggerSQL), and its
// generated update.
const (
	pg5Watch = `subscription Watch($projectId: UUID!) {
  taskEvents(projectId: $projectId) { type: event occurredAt task { id: rowId displayId title status } }
}`
	pg5Touch = `mutation Touch($id: UUID!, $title: String!) {
  updateTaskByRowId(input: {rowId: $id, taskPatch: {title: $title}}) { task { id: rowId } }
}`
)

// subTriggerSQL makes an update of a task NOTIFY PostGraphile 5's listeners
// on its project's channel, with the task's id and the time inside the
// committing transaction. It is there only during PostGraphile 5's run
// (subTriggerDropSQL), so that Taskgraph's updates never pay for it.
const (
	subTriggerSQL = `CREATE OR REPLACE FUNCTION peer_bench_notify_task() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('peer_tasks:' || NEW.project_id::text,
    json_build_object('event', 'TASK_UPDATED', 'id', NEW.id, 'occurredAt', clock_timestamp())::text);
  RETURN NEW;
END $$;
DROP TRIGGER IF EXISTS peer_bench_notify_task ON tasks;
CREATE TRIGGER peer_bench_notify_task AFTER UPDATE ON tasks FOR EACH ROW EXECUTE FUNCTION peer_bench_notify_task();`
	subTriggerDropSQL = `DROP TRIGGER IF EXISTS peer_bench_notify_task ON tasks; DROP FUNCTION IF EXISTS peer_bench_notify_task();`
)

// subProject is the scenario's project, made through Taskgraph's API: its
// ids and its tasks' (global ids for Taskgraph, row ids for PostGraphile).
type subProject struct {
	id, rowID           string
	taskIDs, taskRowIDs []string
}

// subRun is one run of the scenario: a server, freshly started, at a
// number of subscribers.
type subRun struct {
	key         string // taskgraph, pg5
	connections int
	perConn     int
}

// subResult is one run's figures.
type subResult struct {
	label                                 string
	key                                   string
	subscribers                           int
	committed, expected, delivered        int64
	short                                 int // subscriptions that got fewer events than committed
	mutations, mutationsFailed, skipped   int64
	p50, p99                              time.Duration
	serverPerEvent, dbPerEvent, drivePerE time.Duration
	rssBefore, rssIdle                    int64
	window, drain                         time.Duration
	problems                              string
}

// rssPerSub is the idle memory per subscription, in bytes.
func (r subResult) rssPerSub() float64 {
	if r.subscribers == 0 {
		return 0
	}
	return float64(r.rssIdle-r.rssBefore) / float64(r.subscribers)
}

// setupSubProject makes the scenario's project and tasks through Taskgraph's
// API and reads their row ids.
func setupSubProject(ctx context.Context, c *gqlClient, dbURL string, tasks int) (*subProject, error) {
	var sp subProject
	var p struct {
		CreateProject struct{ Project struct{ ID string } }
	}
	if err := c.do(ctx, `mutation($in: CreateProjectInput!) { createProject(input: $in) { project { id } } }`,
		map[string]any{"in": map[string]any{"name": "Peer subscriptions", "slug": "peer-subs",
			"description": "the subscription scenario of make bench-peer"}}, &p); err != nil {
		return nil, fmt.Errorf("createProject: %w", err)
	}
	sp.id = p.CreateProject.Project.ID
	inputs := make([]map[string]any, tasks)
	for i := range inputs {
		inputs[i] = map[string]any{"projectId": sp.id, "title": fmt.Sprintf("subscribed task %d", i)}
	}
	ids, err := batch(ctx, c, "createTask", "CreateTaskInput!", "task { id }", inputs, func(out json.RawMessage) (string, error) {
		var r struct{ Task struct{ ID string } }
		err := json.Unmarshal(out, &r)
		return r.Task.ID, err
	})
	if err != nil {
		return nil, err
	}
	sp.taskIDs = ids
	db, err := sql.Open("postgres", dbURL)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	if err := db.QueryRowContext(ctx, `SELECT id FROM projects WHERE slug = 'peer-subs'`).Scan(&sp.rowID); err != nil {
		return nil, err
	}
	rows, err := db.QueryContext(ctx, `SELECT id FROM tasks WHERE project_id = $1 ORDER BY id`, sp.rowID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		sp.taskRowIDs = append(sp.taskRowIDs, id)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(sp.taskRowIDs) != tasks {
		return nil, fmt.Errorf("the subscription project has %d tasks, want %d", len(sp.taskRowIDs), tasks)
	}
	return &sp, nil
}

// wsURL is a server's GraphQL URL with the ws scheme.
func wsURL(httpURL string) string { return "ws" + strings.TrimPrefix(httpURL, "http") }

// runSubscriptions runs the scenario: Taskgraph with the large number of
// subscribers, then Taskgraph and PostGraphile 5 (when it runs) each with
// the side-by-side number.
func (b *bench) runSubscriptions(ctx context.Context, tg *target, targets map[string]*target) ([]subResult, error) {
	sc := b.cfg.sub
	dbURL := b.dbURL(b.admin.Host)
	logf("subscribe: making the project of the subscriptions through Taskgraph's API")
	sp, err := setupSubProject(ctx, &gqlClient{url: tg.url, token: tg.token, http: &checkClient}, dbURL, sc.tasks)
	if err != nil {
		return nil, fmt.Errorf("the subscription project: %w", err)
	}
	db, err := sql.Open("postgres", dbURL)
	if err != nil {
		return nil, err
	}
	defer db.Close()

	runs := []subRun{{"taskgraph", sc.connections, sc.perConn}}
	peerConns := max(1, sc.peerSubscribers/sc.perConn)
	if peerConns*sc.perConn != sc.subscribers() {
		runs = append(runs, subRun{"taskgraph", peerConns, sc.perConn})
	}
	if targets["pg5"] != nil {
		runs = append(runs, subRun{"pg5", peerConns, sc.perConn})
	}
	// The runs' servers connect to PostgreSQL directly: a counting proxy
	// would copy every byte of their reads in this process, which shares
	// the cores. Their PostgreSQL CPU is then every backend of the
	// database's (the other servers' are idle meanwhile).
	b.direct = true
	defer func() { b.direct = false }()
	var out []subResult
	for _, r := range runs {
		res, err := b.subscriptionRun(ctx, r, sp, db)
		if err != nil {
			return nil, err
		}
		out = append(out, res)
	}
	return out, nil
}

// subServer is a server started afresh for one run (so that its RSS
// before the subscriptions holds nothing of earlier scenarios), with how
// the run subscribes to it and makes its events.
type subServer struct {
	t     *target
	spec  subscribeSpec
	touch func(seq int) []byte
	// before is called just before the window; committed says how many
	// events committed in it, given the mutations that succeeded.
	before    func(ctx context.Context) error
	committed func(ctx context.Context, ok int64) (int64, error)
	stop      func() error
}

// startSubServer starts the run's server: Taskgraph, or PostGraphile 5 with
// the NOTIFY trigger created (and dropped by stop).
func (b *bench) startSubServer(ctx context.Context, r subRun, sp *subProject, db *sql.DB) (*subServer, error) {
	marshal := func(q graphQLRequest) []byte {
		out, _ := json.Marshal(q)
		return out
	}
	s := &subServer{}
	var err error
	switch r.key {
	case "taskgraph":
		if s.t, err = b.startTaskgraph(ctx); err != nil {
			return nil, err
		}
		s.spec = subscribeSpec{url: wsURL(s.t.url), initPayload: map[string]any{"Authorization": "Bearer " + s.t.token},
			query: taskgraphWatch, variables: map[string]any{"projectId": sp.id}}
		s.touch = func(seq int) []byte {
			return marshal(graphQLRequest{Query: taskgraphTouch, OperationName: "Touch", Variables: map[string]any{
				"input": map[string]any{"id": sp.taskIDs[seq%len(sp.taskIDs)], "title": fmt.Sprintf("subscribed task, touch %d", seq)}}})
		}
		var seq0 int64
		s.before = func(ctx context.Context) error {
			return db.QueryRowContext(ctx, `SELECT coalesce(max(seq), 0) FROM events WHERE project_id = $1`, sp.rowID).Scan(&seq0)
		}
		// Every event of the project after the window's start: the
		// subscription has no type filter.
		s.committed = func(ctx context.Context, _ int64) (int64, error) {
			var n int64
			err := db.QueryRowContext(ctx, `SELECT count(*) FROM events WHERE project_id = $1 AND seq > $2`, sp.rowID, seq0).Scan(&n)
			return n, err
		}
		s.stop = func() error { return nil }
	case "pg5":
		if _, err := db.ExecContext(ctx, subTriggerSQL); err != nil {
			return nil, fmt.Errorf("the NOTIFY trigger for PostGraphile 5: %w", err)
		}
		s.stop = func() error {
			_, err := db.ExecContext(context.WithoutCancel(ctx), subTriggerDropSQL)
			return err
		}
		if s.t, err = b.startPeer(ctx, "pg5"); err != nil {
			_ = s.stop()
			return nil, err
		}
		s.spec = subscribeSpec{url: wsURL(s.t.url), initPayload: map[string]any{},
			query: pg5Watch, variables: map[string]any{"projectId": sp.rowID}}
		s.touch = func(seq int) []byte {
			return marshal(graphQLRequest{Query: pg5Touch, OperationName: "Touch", Variables: map[string]any{
				"id": sp.taskRowIDs[seq%len(sp.taskRowIDs)], "title": fmt.Sprintf("subscribed task, touch %d", seq)}})
		}
		s.before = func(context.Context) error { return nil }
		// The trigger notifies once per updated row: one per mutation.
		s.committed = func(_ context.Context, ok int64) (int64, error) { return ok, nil }
	default:
		return nil, fmt.Errorf("no subscription run for %q", r.key)
	}
	s.spec.connections, s.spec.perConn = r.connections, r.perConn
	return s, nil
}

// subscriptionRun is one run on a server started for it: RSS before; the
// subscriptions opened; probe events until every subscription has one (so
// that all are live); RSS once they are quiet; then events at the rate for
// the window, and the deliveries drained. The server stops afterwards.
func (b *bench) subscriptionRun(ctx context.Context, run subRun, sp *subProject, db *sql.DB) (res subResult, err error) {
	r, err := b.startSubServer(ctx, run, sp, db)
	if err != nil {
		return res, err
	}
	defer func() {
		b.procs.stop(r.t.proc)
		if serr := r.stop(); serr != nil && err == nil {
			err = serr
		}
	}()
	sc := b.cfg.sub
	n := run.connections * run.perConn
	res = subResult{label: r.t.label, key: r.t.key, subscribers: n}
	pid := r.t.proc.pid()
	if res.rssBefore, err = processRSS(pid); err != nil {
		return res, err
	}
	logf("subscribe: %s (started for this run): opening %d subscriptions (%d connections × %d)", r.t.label, n, run.connections, run.perConn)
	pool, err := openSubPool(ctx, r.spec)
	if err != nil {
		return res, fmt.Errorf("%s: %w", r.t.label, err)
	}
	defer pool.close()
	client := newClient(8)
	defer client.CloseIdleConnections()
	var seq atomic.Int64
	touch := func() error {
		body := r.touch(int(seq.Add(1)))
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.t.url, strings.NewReader(string(body)))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		if r.t.token != "" {
			req.Header.Set("Authorization", "Bearer "+r.t.token)
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		var g graphQLResponse
		if err := json.NewDecoder(resp.Body).Decode(&g); err != nil || resp.StatusCode != http.StatusOK || len(g.Errors) > 0 {
			return fmt.Errorf("%s: the event's mutation failed: HTTP %d, %v %v", r.t.label, resp.StatusCode, err, g.Errors)
		}
		return nil
	}

	// Probe until every subscription has had an event: then all are live.
	deadline := time.Now().Add(90 * time.Second)
	for {
		if err := touch(); err != nil {
			return res, err
		}
		wait := time.Now().Add(3 * time.Second)
		for time.Now().Before(wait) {
			if _, without := pool.total(); without == 0 {
				break
			}
			if err := sleepCtx(ctx, 50*time.Millisecond); err != nil {
				return res, err
			}
		}
		_, without := pool.total()
		if without == 0 {
			break
		}
		if p := pool.problems(); p != "" {
			return res, fmt.Errorf("%s: %s", r.t.label, p)
		}
		if time.Now().After(deadline) {
			return res, fmt.Errorf("%s: %d of %d subscriptions had no event after 90 s of probes (%s)", r.t.label, without, n, pool.problems())
		}
	}
	for pool.quietFor() < time.Second {
		if err := sleepCtx(ctx, 100*time.Millisecond); err != nil {
			return res, err
		}
	}
	if res.rssIdle, err = processRSS(pid); err != nil {
		return res, err
	}
	if p := pool.problems(); p != "" {
		return res, fmt.Errorf("%s: before the window: %s", r.t.label, p)
	}

	// The window.
	base := pool.counts()
	baseSum := sum(base)
	if err := r.before(ctx); err != nil {
		return res, err
	}
	cpu0, err := processCPU(pid)
	if err != nil {
		return res, err
	}
	self0, err := processCPU(os.Getpid())
	if err != nil {
		return res, err
	}
	meter, err := newDBCPUMeter(b.cfg.database, r.t.proxy)
	if err != nil {
		return res, err
	}
	stopSampling := make(chan struct{})
	sampled := make(chan error, 1)
	go func() { sampled <- meter.every(dbSampleInterval, stopSampling) }()
	pool.recording.Store(true)
	start := time.Now()
	logf("subscribe: %s: %d subscriptions live (RSS %s → %s); %g events/s for %s", r.t.label, n,
		mib(res.rssBefore), mib(res.rssIdle), sc.rate, sc.duration)
	var ok, failed, skipped atomic.Int64
	var firstErr atomic.Value
	var inflight sync.WaitGroup
	slots := make(chan struct{}, 8)
	tick := time.NewTicker(time.Duration(float64(time.Second) / sc.rate))
	for time.Since(start) < sc.duration && ctx.Err() == nil {
		<-tick.C
		select {
		case slots <- struct{}{}:
		default:
			skipped.Add(1) // 8 mutations still waiting: the server is behind
			continue
		}
		inflight.Add(1)
		go func() {
			defer inflight.Done()
			defer func() { <-slots }()
			if err := touch(); err != nil {
				if failed.Add(1) == 1 {
					firstErr.Store(err.Error())
				}
				return
			}
			ok.Add(1)
		}()
	}
	tick.Stop()
	inflight.Wait()
	res.window = time.Since(start)
	res.mutations, res.mutationsFailed, res.skipped = ok.Load(), failed.Load(), skipped.Load()
	if res.committed, err = r.committed(ctx, res.mutations); err != nil {
		return res, err
	}
	res.expected = res.committed * int64(n)
	// Drain: until every event is delivered, or nothing arrived for 5 s,
	// or 2 minutes.
	drainStart := time.Now()
	for time.Since(drainStart) < 2*time.Minute {
		total, _ := pool.total()
		if total-baseSum >= res.expected || pool.quietFor() > 5*time.Second {
			break
		}
		if err := sleepCtx(ctx, 50*time.Millisecond); err != nil {
			return res, err
		}
	}
	res.drain = time.Since(drainStart)
	pool.recording.Store(false)
	cpu1, err := processCPU(pid)
	if err != nil {
		return res, err
	}
	self1, err := processCPU(os.Getpid())
	if err != nil {
		return res, err
	}
	close(stopSampling)
	if err := <-sampled; err != nil {
		return res, err
	}
	dbCPU, _, err := meter.end()
	if err != nil {
		return res, err
	}
	counts := pool.counts()
	res.delivered = sum(counts) - baseSum
	for i, c := range counts {
		if c-base[i] < res.committed {
			res.short++
		}
	}
	lat := pool.takeLatencies()
	slices.Sort(lat)
	res.p50, res.p99 = percentile(lat, 50), percentile(lat, 99)
	if res.delivered > 0 {
		res.serverPerEvent = (cpu1 - cpu0) / time.Duration(res.delivered)
		res.dbPerEvent = dbCPU / time.Duration(res.delivered)
		res.drivePerE = (self1 - self0) / time.Duration(res.delivered)
	}
	res.problems = pool.problems()
	if e, _ := firstErr.Load().(string); e != "" {
		res.problems = strings.TrimPrefix(res.problems+"; first failed mutation: "+e, "; ")
	}
	logf("subscribe: %s: %d events committed, %d of %d deliveries in %s + %s of drain; p50 %s p99 %s",
		r.t.label, res.committed, res.delivered, res.expected, res.window.Round(time.Millisecond), res.drain.Round(time.Millisecond), ms(res.p50), ms(res.p99))
	return res, nil
}

func sum(xs []int64) int64 {
	var s int64
	for _, x := range xs {
		s += x
	}
	return s
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// mib prints bytes in MiB.
func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }
