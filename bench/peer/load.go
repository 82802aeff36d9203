package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"sync"
	"time"
)

// target is one server under test.
type target struct {
	key   string // taskgraph, pg4, pg5, floor, floorw
	label string // the row's name in the tables
	// writesOnly: the target takes part in createTask only (floorw, whose
	// reads are the floor's).
	writesOnly bool
	url        string
	token      string // bearer token, Taskgraph only
	proc       *child
	proxy      *sqlProxy // nil when statements are not counted

	readBodies map[string][]byte    // by read shape
	readLens   map[string]int       // by read shape: the verified answer's length, which every answer under load must have
	writeBody  func(seq int) []byte // a createTask request, unique per seq
}

// serves says whether t takes part in scenario sc.
func (t *target) serves(sc string) bool { return !t.writesOnly || sc == "write" }

// scenario is one kind of request: a read shape, createTask or the
// subscriptions.
type scenario struct {
	key   string // full, light, deep, wide, write, subscribe
	title string
}

// writeTitle is createTask's heading.
const writeTitle = "createTask (Taskgraph's mutation; PostGraphile's generated insert on tasks; the floor's INSERT; the floor with Taskgraph's writes)"

// timedScenarios are the request scenarios in report order: the read
// shapes, then createTask.
func timedScenarios() []scenario {
	var out []scenario
	for _, s := range readShapes {
		out = append(out, scenario{s.key, s.title})
	}
	return append(out, scenario{"write", writeTitle})
}

// phase is one timed run of a scenario against one target.
type phase struct {
	requests   int
	elapsed    time.Duration
	latencies  []time.Duration
	serverCPU  time.Duration
	dbCPU      time.Duration
	driverCPU  time.Duration // this process's: load generator, proxies, sampling
	dbGone     int           // backends that ended during the phase (counted as last sampled)
	statements int64         // -1 when not counted
}

// loadConfig is what every phase shares.
type loadConfig struct {
	connections int
	database    string // whose backends' CPU is measured
	seq         *counter
}

// counter hands out unique numbers to createTask requests.
type counter struct {
	mu sync.Mutex
	n  int
}

func (c *counter) next() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	return c.n
}

// request sends one request and checks its answer.
func (t *target) request(ctx context.Context, client *http.Client, body []byte, sc string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if t.token != "" {
		req.Header.Set("Authorization", "Bearer "+t.token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return out, fmt.Errorf("%s: HTTP %d: %.500s", t.label, resp.StatusCode, out)
	}
	switch want := t.readLens[sc]; {
	case sc != "write" && want > 0 && len(out) != want:
		return out, fmt.Errorf("%s: a %s read answered %d bytes instead of the verified %d: %.500s", t.label, sc, len(out), want, out)
	case sc == "write" && (bytes.Contains(out, []byte(`"errors"`)) || !bytes.Contains(out, []byte(`"createTask"`))):
		return out, fmt.Errorf("%s: createTask failed: %.500s", t.label, out)
	}
	return out, nil
}

func (t *target) body(sc string, seq *counter) []byte {
	if sc == "write" {
		return t.writeBody(seq.next())
	}
	return t.readBodies[sc]
}

// newClient is an HTTP client with one kept-alive connection per worker.
func newClient(conns int) *http.Client {
	return &http.Client{
		Timeout: 60 * time.Second,
		Transport: &http.Transport{
			MaxIdleConns:        conns,
			MaxIdleConnsPerHost: conns,
			MaxConnsPerHost:     conns,
			DisableCompression:  true,
			IdleConnTimeout:     90 * time.Second,
		},
	}
}

// runPhase sends requests from cfg.connections workers, each waiting for
// its answer before the next (closed loop), for d. It measures latencies, the
// server process's CPU time, the CPU time of the database's backends and the
// statements through the target's proxy. Any failed request ends it with an
// error.
func runPhase(ctx context.Context, t *target, sc string, d time.Duration, cfg loadConfig) (phase, error) {
	client := newClient(cfg.connections)
	defer client.CloseIdleConnections()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	var p phase
	cpu0, err := processCPU(t.proc.pid())
	if err != nil {
		return p, err
	}
	self0, err := processCPU(os.Getpid())
	if err != nil {
		return p, err
	}
	meter, err := newDBCPUMeter(cfg.database, t.proxy)
	if err != nil {
		return p, err
	}
	stopSampling := make(chan struct{})
	sampled := make(chan error, 1)
	go func() { sampled <- meter.every(dbSampleInterval, stopSampling) }()
	st0 := int64(-1)
	if t.proxy != nil {
		st0 = t.proxy.Statements()
	}

	var (
		mu       sync.Mutex
		firstErr error
		wg       sync.WaitGroup
	)
	lat := make([][]time.Duration, cfg.connections)
	start := time.Now()
	deadline := start.Add(d)
	for w := range cfg.connections {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mine := make([]time.Duration, 0, 4096)
			for time.Now().Before(deadline) && ctx.Err() == nil {
				body := t.body(sc, cfg.seq)
				t0 := time.Now()
				_, err := t.request(ctx, client, body, sc)
				if err != nil {
					mu.Lock()
					if firstErr == nil && ctx.Err() == nil {
						firstErr = err
					}
					mu.Unlock()
					cancel()
					break
				}
				mine = append(mine, time.Since(t0))
			}
			lat[w] = mine
		}()
	}
	wg.Wait()
	p.elapsed = time.Since(start)
	close(stopSampling)
	if err := <-sampled; err != nil && firstErr == nil {
		firstErr = err
	}
	if firstErr != nil {
		return p, firstErr
	}
	if err := ctx.Err(); err != nil {
		return p, err
	}
	cpu1, err := processCPU(t.proc.pid())
	if err != nil {
		return p, fmt.Errorf("%s: %w (did it exit? %v)", t.label, err, t.proc.exited())
	}
	if p.dbCPU, p.dbGone, err = meter.end(); err != nil {
		return p, err
	}
	self1, err := processCPU(os.Getpid())
	if err != nil {
		return p, err
	}
	p.serverCPU, p.driverCPU = cpu1-cpu0, self1-self0
	p.statements = -1
	if t.proxy != nil {
		p.statements = t.proxy.Statements() - st0
	}
	for _, l := range lat {
		p.latencies = append(p.latencies, l...)
	}
	p.requests = len(p.latencies)
	return p, nil
}

// backend is a PostgreSQL backend process: its CPU time so far and the port
// its client connected from (0 for a Unix socket).
type backend struct {
	cpu        time.Duration
	clientPort int
}

// dbSampleInterval is how often a phase looks at the backends' CPU times:
// a backend that ends between two looks loses at most this much of its
// time from the sum.
const dbSampleInterval = 100 * time.Millisecond

// dbCPUMeter follows the CPU time of the PostgreSQL backends that serve one
// target: those whose client is its counting proxy's connection, or every
// backend of the database without a proxy. It samples them through a phase
// so that a backend which ends during it (a pool closing a connection)
// keeps the time it was last seen with.
type dbCPUMeter struct {
	scanner *backendScanner
	proxy   *sqlProxy
	base    map[int]time.Duration // at the start, 0 for backends started since
	last    map[int]time.Duration // at the latest sample
}

func newDBCPUMeter(database string, proxy *sqlProxy) (*dbCPUMeter, error) {
	m := &dbCPUMeter{scanner: newBackendScanner(database), proxy: proxy, base: map[int]time.Duration{}, last: map[int]time.Duration{}}
	cur, err := m.owned()
	if err != nil {
		return nil, err
	}
	for pid, cpu := range cur {
		m.base[pid], m.last[pid] = cpu, cpu
	}
	return m, nil
}

// owned is the CPU time of the target's live backends, by pid.
func (m *dbCPUMeter) owned() (map[int]time.Duration, error) {
	all, err := m.scanner.scan()
	if err != nil {
		return nil, err
	}
	out := make(map[int]time.Duration, len(all))
	for pid, b := range all {
		if m.proxy == nil || m.proxy.OwnsClientPort(b.clientPort) {
			out[pid] = b.cpu
		}
	}
	return out, nil
}

// sample records the live backends' times and returns them.
func (m *dbCPUMeter) sample() (map[int]time.Duration, error) {
	cur, err := m.owned()
	if err != nil {
		return nil, err
	}
	for pid, cpu := range cur {
		if _, ok := m.base[pid]; !ok {
			m.base[pid] = 0 // started during the phase: all its time is the phase's
		}
		m.last[pid] = cpu
	}
	return cur, nil
}

// every samples at each interval until stop is closed.
func (m *dbCPUMeter) every(interval time.Duration, stop <-chan struct{}) error {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return nil
		case <-tick.C:
			if _, err := m.sample(); err != nil {
				return err
			}
		}
	}
}

// end takes the last sample and returns the time used since the start and
// how many backends ended on the way.
func (m *dbCPUMeter) end() (time.Duration, int, error) {
	cur, err := m.sample()
	if err != nil {
		return 0, 0, err
	}
	var sum time.Duration
	ended := 0
	for pid, cpu := range m.last {
		sum += cpu - m.base[pid]
		if _, ok := cur[pid]; !ok {
			ended++
		}
	}
	return sum, ended, nil
}

// summary is a target's figures for one scenario over all rounds.
type summary struct {
	requests      int
	p50, p99      time.Duration
	reqPerSec     float64
	cpuPerReq     time.Duration
	dbCPUPerReq   time.Duration
	driverPerReq  time.Duration
	stmtsPerReq   float64 // -1: not counted
	roundRates    []float64
	backendsEnded int
}

// summarize pools the phases of all rounds: latency percentiles over every
// request, rates and CPU per request over the sums.
func summarize(phases []phase) summary {
	var s summary
	var all []time.Duration
	var elapsed, cpu, dbCPU, driver time.Duration
	var stmts int64
	counted := true
	for _, p := range phases {
		all = append(all, p.latencies...)
		s.requests += p.requests
		elapsed += p.elapsed
		cpu += p.serverCPU
		dbCPU += p.dbCPU
		driver += p.driverCPU
		s.backendsEnded += p.dbGone
		if p.statements < 0 {
			counted = false
		}
		stmts += p.statements
		s.roundRates = append(s.roundRates, float64(p.requests)/p.elapsed.Seconds())
	}
	s.stmtsPerReq = -1
	if s.requests == 0 {
		return s
	}
	slices.Sort(all)
	s.p50, s.p99 = percentile(all, 50), percentile(all, 99)
	s.reqPerSec = float64(s.requests) / elapsed.Seconds()
	s.cpuPerReq = cpu / time.Duration(s.requests)
	s.dbCPUPerReq = dbCPU / time.Duration(s.requests)
	s.driverPerReq = driver / time.Duration(s.requests)
	if counted {
		s.stmtsPerReq = float64(stmts) / float64(s.requests)
	}
	return s
}

// percentile is the nearest-rank percentile of sorted durations.
func percentile(sorted []time.Duration, pct int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := (pct*len(sorted) + 99) / 100 // ceil(pct/100 × n)
	return sorted[max(rank, 1)-1]
}
