package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/loader"
	"github.com/taskgraph/taskgraph/internal/testdb"
)

// BenchmarkNestedQuery runs issue 2's nested query (project -> tasks(first:100) ->
// relationships -> target -> fileImpacts) over a project of 1,000 tasks through
// the real server, and reports SQL statements per query beside ns/op.
func BenchmarkNestedQuery(b *testing.B) {
	for _, c := range testdb.Cases(b) {
		b.Run(c.Name, func(b *testing.B) {
			s := startServerWait(b, c.URL(b), loader.DefaultTiming)
			seedChain(b, s, "bench", 1000)
			statementsFor(b, s, "bench") // warm caches and the token's last-used mark
			b.ResetTimer()
			var stmts int64
			for i := 0; i < b.N; i++ {
				n, tasks := statementsFor(b, s, "bench")
				if tasks != 100 {
					b.Fatalf("got %d tasks, want 100", tasks)
				}
				stmts += n
			}
			b.ReportMetric(float64(stmts)/float64(b.N), "statements/op")
		})
	}
}

// fanoutSubscribers is the number of subscribers of BenchmarkEventFanout.
const fanoutSubscribers = 1000

// BenchmarkEventFanout: 1,000 subscribers of one project, each on a websocket
// of its own, while events commit at a steady rate (updateTask through the
// server, TASKGRAPH_BENCH_RATE per second, default 25); one iteration is one
// committed event. The subscribers run in a child process (this test binary,
// see TestFanoutClients), so that the server's memory is measured alone; both
// share the machine's cores. It reports
//
//   - delivered/s: events received by all subscribers together, per second
//     from the first commit to the last delivery;
//   - p50-ms, p99-ms: commit-to-delivery, from the event's occurredAt (the
//     committing transaction's clock, read before its commit: an upper
//     bound) to its arrival at a subscriber;
//   - KiB/idle-sub: the server process's live heap and goroutine stacks
//     grown by the 1,000 open, idle subscriptions (each with its websocket).
func BenchmarkEventFanout(b *testing.B) {
	rate := 25
	if v, err := strconv.Atoi(os.Getenv("TASKGRAPH_BENCH_RATE")); err == nil && v > 0 {
		rate = v
	}
	for _, c := range testdb.Cases(b) {
		b.Run(c.Name, func(b *testing.B) {
			s, _ := startServerWith(b, c.URL(b), serverOptions{loaderTiming: loader.DefaultTiming})
			p := s.createProject(b, s.AdminToken, "fanout")
			task := s.createTask(b, s.AdminToken, p, "t", nil)
			start := s.eventCursor(b, s.AdminToken, p)
			update := func(n int) {
				r, err := s.post(s.AdminToken, `mutation($id: ID!, $n: Int!) { updateTask(input: {id: $id, actualEffortMinutes: $n}) { task { id } } }`,
					M{"id": task, "n": n})
				if err != nil || len(r.Errors) > 0 {
					b.Fatalf("update: %v %v", err, r.Errors)
				}
			}

			// Warm the database pool (SQLite's page caches grow per
			// connection) so that the measure below is the subscriptions'.
			var warm sync.WaitGroup
			for range 16 {
				warm.Add(1)
				go func() {
					defer warm.Done()
					for range 10 {
						_, _ = s.post(s.AdminToken, `query($id: ID!) { project(id: $id) { eventCursor events(last: 5) { nodes { cursor } } } }`, M{"id": p})
					}
				}()
			}
			warm.Wait()
			clients := startFanoutClients(b, s, p, start, fanoutSubscribers, 1)
			before := memInUse()
			clients.ask("subscribe")
			// Every subscription is live once each has the first event.
			update(0)
			clients.ask("wait 1")
			clients.ask("mark")
			perSub := (memInUse() - before) / fanoutSubscribers

			tick := time.NewTicker(time.Second / time.Duration(rate))
			defer tick.Stop()
			n := 0
			first := time.Now()
			for b.Loop() {
				<-tick.C
				n++
				update(n)
			}
			var st fanoutStats
			if err := json.Unmarshal([]byte(clients.ask(fmt.Sprintf("wait %d", n))), &st); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(st.Deliveries)/time.Unix(0, st.Last).Sub(first).Seconds(), "delivered/s")
			b.ReportMetric(st.P50Ms, "p50-ms")
			b.ReportMetric(st.P99Ms, "p99-ms")
			b.ReportMetric(float64(perSub)/1024, "KiB/idle-sub")
			b.ReportMetric(float64(rate), "commits/s")
		})
	}
}

// fanoutStats is what the subscribers' process reports: deliveries after the
// first event, their latency percentiles, and when the last one arrived.
type fanoutStats struct {
	Deliveries int
	P50Ms      float64
	P99Ms      float64
	Last       int64 // unix nanoseconds
}

// fanoutClients is the child process that runs the subscribers; it answers
// one line per command.
type fanoutClients struct {
	tb  testing.TB
	in  io.Writer
	out *bufio.Scanner
}

// startFanoutClients starts n subscribers of projectID's events, perConn on
// each websocket; after "" subscribes without a cursor (from now on).
func startFanoutClients(tb testing.TB, s *testServer, projectID, after string, n, perConn int) *fanoutClients {
	tb.Helper()
	if after == "" {
		after = "-"
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestFanoutClients$")
	cmd.Env = append(os.Environ(), "TASKGRAPH_FANOUT_CLIENTS="+strings.Join([]string{s.URL, s.AdminToken, projectID, after,
		strconv.Itoa(n), strconv.Itoa(perConn)}, " "))
	in, err := cmd.StdinPipe()
	require.NoError(tb, err)
	out, err := cmd.StdoutPipe()
	require.NoError(tb, err)
	cmd.Stderr = os.Stderr
	require.NoError(tb, cmd.Start())
	tb.Cleanup(func() {
		in.Close()
		_ = cmd.Wait()
	})
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	return &fanoutClients{tb: tb, in: in, out: sc}
}

func (c *fanoutClients) ask(command string) string {
	c.tb.Helper()
	_, err := fmt.Fprintln(c.in, command)
	require.NoError(c.tb, err)
	for c.out.Scan() {
		if line, ok := strings.CutPrefix(c.out.Text(), "fanout: "); ok {
			if msg, bad := strings.CutPrefix(line, "error "); bad {
				c.tb.Fatalf("subscribers: %s", msg)
			}
			return line
		}
	}
	c.tb.Fatalf("the subscribers' process ended: %v", c.out.Err())
	return ""
}

// TestFanoutClients is the subscribers' process of BenchmarkEventFanout and
// BenchmarkSharedFanout; it does nothing unless started by them. Commands on
// stdin: "subscribe" (dial and subscribe every subscriber), "least" (the
// fewest events a subscriber has), "mark" (what each has now is left out of
// the stats), "wait N" (until each has N events after the mark; answers with
// fanoutStats of those).
func TestFanoutClients(t *testing.T) {
	cfg := os.Getenv("TASKGRAPH_FANOUT_CLIENTS")
	if cfg == "" {
		t.Skip("run by BenchmarkEventFanout")
	}
	var url, token, project, after string
	var n, perConn int
	if _, err := fmt.Sscan(cfg, &url, &token, &project, &after, &n, &perConn); err != nil {
		t.Fatal(err)
	}
	if after == "-" {
		after = ""
	}
	reply := func(format string, args ...any) { fmt.Printf("fanout: "+format+"\n", args...) }
	subs := make([]*fanoutSub, n)
	var conns []*fanoutConn
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		cmd := in.Text()
		switch {
		case cmd == "subscribe":
			var wg sync.WaitGroup
			var mu sync.Mutex
			errs := make(chan error, n)
			sem := make(chan struct{}, 32)
			for first := 0; first < n; first += perConn {
				wg.Add(1)
				go func() {
					defer wg.Done()
					sem <- struct{}{}
					defer func() { <-sem }()
					c, err := dialFanoutConn(url, token, project, after, subs[first:min(first+perConn, n)])
					if err != nil {
						errs <- err
						return
					}
					mu.Lock()
					conns = append(conns, c)
					mu.Unlock()
				}()
			}
			wg.Wait()
			close(errs)
			if err := <-errs; err != nil {
				reply("error %v", err)
				continue
			}
			reply("subscribed")
		case cmd == "least":
			least := -1
			for _, sub := range subs {
				sub.mu.Lock()
				if least < 0 || len(sub.latencies) < least {
					least = len(sub.latencies)
				}
				sub.mu.Unlock()
			}
			reply("%d", least)
		case cmd == "mark":
			for _, sub := range subs {
				sub.mu.Lock()
				sub.mark = len(sub.latencies)
				sub.mu.Unlock()
			}
			reply("marked")
		case strings.HasPrefix(cmd, "wait "):
			want, _ := strconv.Atoi(strings.TrimPrefix(cmd, "wait "))
			if err := waitDelivered(subs, want); err != nil {
				reply("error %v", err)
				continue
			}
			var lat []time.Duration
			var last time.Time
			for _, sub := range subs {
				sub.mu.Lock()
				lat = append(lat, sub.latencies[sub.mark:]...)
				if sub.last.After(last) {
					last = sub.last
				}
				sub.mu.Unlock()
			}
			slices.Sort(lat)
			st := fanoutStats{Deliveries: len(lat), Last: last.UnixNano()}
			if len(lat) > 0 {
				st.P50Ms = float64(lat[len(lat)/2].Microseconds()) / 1000
				st.P99Ms = float64(lat[len(lat)*99/100].Microseconds()) / 1000
			}
			b, _ := json.Marshal(st)
			reply("%s", b)
		}
	}
	for _, c := range conns {
		c.ws.Close()
	}
}

// fanoutSub is one subscriber of the fan-out benchmarks: it notes when each
// event arrived, relative to its occurredAt.
type fanoutSub struct {
	mu        sync.Mutex
	mark      int // latencies before it are left out
	latencies []time.Duration
	last      time.Time
	err       error
}

// fanoutConn is one websocket of the fan-out benchmarks and its subscribers
// (their operation ids are their indexes).
type fanoutConn struct {
	ws   *websocket.Conn
	subs []*fanoutSub
}

func dialFanoutConn(url, token, projectID, after string, subs []*fanoutSub) (*fanoutConn, error) {
	d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}, ReadBufferSize: 1024, WriteBufferSize: 1024}
	ws, _, err := d.Dial("ws"+strings.TrimPrefix(url, "http")+"/graphql", nil)
	if err != nil {
		return nil, err
	}
	if err := ws.WriteJSON(M{"type": "connection_init", "payload": M{"Authorization": "Bearer " + token}}); err != nil {
		return nil, err
	}
	var ack struct{ Type string }
	if err := ws.ReadJSON(&ack); err != nil || ack.Type != "connection_ack" {
		return nil, fmt.Errorf("no ack: %v %v", ack, err)
	}
	vars := M{"p": projectID}
	if after != "" {
		vars["a"] = after
	}
	c := &fanoutConn{ws: ws, subs: subs}
	for i := range subs {
		subs[i] = &fanoutSub{}
		if err := ws.WriteJSON(M{"type": "subscribe", "id": strconv.Itoa(i), "payload": M{
			"query":     `subscription($p: ID!, $a: String) { projectEvents(projectId: $p, after: $a) { ` + fanoutSelection() + ` } }`,
			"variables": vars}}); err != nil {
			return nil, err
		}
	}
	go c.read()
	return c, nil
}

// fanoutSelection is what the fan-out benchmarks' subscribers select of an
// event: TASKGRAPH_BENCH_SELECTION (it must hold occurredAt), default
// "cursor occurredAt".
func fanoutSelection() string {
	if sel := os.Getenv("TASKGRAPH_BENCH_SELECTION"); sel != "" {
		return sel
	}
	return "cursor occurredAt"
}

var (
	occurredAtKey = []byte(`"occurredAt":"`)
	messageIDKey  = []byte(`"id":"`)
)

func (c *fanoutConn) read() {
	var buf bytes.Buffer
	for {
		_, r, err := c.ws.NextReader()
		if err == nil {
			buf.Reset()
			_, err = buf.ReadFrom(r)
		}
		now := time.Now()
		if err != nil {
			for _, sub := range c.subs {
				sub.mu.Lock()
				sub.err = err
				sub.mu.Unlock()
			}
			return
		}
		msg := buf.Bytes()
		i := bytes.Index(msg, occurredAtKey)
		j := bytes.LastIndex(msg, messageIDKey)
		if i < 0 || j < 0 {
			continue // ping, pong
		}
		idRest := msg[j+len(messageIDKey):]
		id, err := strconv.Atoi(string(idRest[:max(bytes.IndexByte(idRest, '"'), 0)]))
		if err != nil || id < 0 || id >= len(c.subs) {
			continue
		}
		rest := msg[i+len(occurredAtKey):]
		at, err := time.Parse(time.RFC3339Nano, string(rest[:bytes.IndexByte(rest, '"')]))
		sub := c.subs[id]
		sub.mu.Lock()
		if err == nil {
			sub.latencies = append(sub.latencies, now.Sub(at))
			sub.last = now
		}
		sub.mu.Unlock()
	}
}

// waitDelivered waits until every subscriber has received n events after
// its mark.
func waitDelivered(subs []*fanoutSub, n int) error {
	deadline := time.Now().Add(2 * time.Minute)
	for _, sub := range subs {
		for {
			sub.mu.Lock()
			got, err := len(sub.latencies)-sub.mark, sub.err
			sub.mu.Unlock()
			if got >= n {
				break
			}
			if err != nil || time.Now().After(deadline) {
				return fmt.Errorf("a subscriber has %d of %d events (%v)", got, n, err)
			}
			time.Sleep(time.Millisecond)
		}
	}
	return nil
}

// memInUse is the live heap and the goroutine stacks after a collection
// (two: the first only moves sync.Pool contents aside).
func memInUse() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc + m.StackInuse)
}
