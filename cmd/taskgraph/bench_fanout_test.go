package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/taskgraph/taskgraph/internal/loader"
	"github.com/taskgraph/taskgraph/internal/server"
	"github.com/taskgraph/taskgraph/internal/testdb"
)

// BenchmarkSharedFanout: TASKGRAPH_BENCH_SUBS subscriptions (default 10,000)
// of one project, 100 on each websocket, all of one selection and one token,
// while events commit at TASKGRAPH_BENCH_RATE per second (default 20); one
// iteration is one committed event, made at the rate however long each commit
// takes. In "now" the subscriptions start from now on (no after) and share one
// execution (internal/server multiplex.go); in "cursor" each subscribes from
// a cursor and runs alone, as every subscription did before multiplexing. TASKGRAPH_BENCH_SELECTION sets what
// each selects of an event (default "cursor occurredAt"; it must hold
// occurredAt). The subscribers run in a child process (TestFanoutClients).
// It reports
//
//   - cpu-µs/delivery: the server process's CPU time (user and system) from
//     the first commit to the last delivery, over the events delivered — it
//     includes the commits themselves (a few per second) and this process's
//     HTTP client making them;
//   - delivered/s, p50-ms, p99-ms: as BenchmarkEventFanout;
//   - commit-ms: the mean round trip of the mutation that commits an event;
//   - KiB/idle-sub: live heap and goroutine stacks grown by the open, idle
//     subscriptions, and RSS-KiB/idle-sub: the resident set grown by them.
func BenchmarkSharedFanout(b *testing.B) {
	rate, subs := 20, 10000
	if v, err := strconv.Atoi(os.Getenv("TASKGRAPH_BENCH_RATE")); err == nil && v > 0 {
		rate = v
	}
	if v, err := strconv.Atoi(os.Getenv("TASKGRAPH_BENCH_SUBS")); err == nil && v > 0 {
		subs = v
	}
	const perConn = 100
	for _, c := range testdb.Cases(b) {
		for _, mode := range []string{"now", "cursor"} {
			b.Run(c.Name+"/"+mode, func(b *testing.B) {
				s, _ := startServerWith(b, c.URL(b), serverOptions{loaderTiming: loader.DefaultTiming,
					websocket: server.WebsocketConfig{MaxConnectionsPerUser: subs/perConn + 10, MaxSubscriptionsPerUser: subs + 100}})
				p := s.createProject(b, s.AdminToken, "fanout")
				task := s.createTask(b, s.AdminToken, p, "t", nil)
				update := func(n int) error {
					r, err := s.post(s.AdminToken, `mutation($id: ID!, $n: Int!) { updateTask(input: {id: $id, actualEffortMinutes: $n}) { task { id } } }`,
						M{"id": task, "n": n})
					if err == nil && len(r.Errors) > 0 {
						err = fmt.Errorf("%v", r.Errors)
					}
					return err
				}
				after := ""
				if mode == "cursor" {
					after = s.eventCursor(b, s.AdminToken, p)
				}
				clients := startFanoutClients(b, s, p, after, subs, perConn)
				before, rssBefore := memInUse(), rss()
				clients.ask("subscribe")
				// Every subscription is live once each has an event.
				for i := 0; clients.ask("least") == "0"; i++ {
					if err := update(100000 + i); err != nil {
						b.Fatalf("update: %v", err)
					}
					time.Sleep(50 * time.Millisecond)
				}
				clients.ask("mark")
				perSub := float64(memInUse()-before) / float64(subs)
				rssPerSub := float64(rss()-rssBefore) / float64(subs)

				tick := time.NewTicker(time.Second / time.Duration(rate))
				defer tick.Stop()
				// The commits are made at the rate whatever each one takes
				// (open loop): a commit slowed by the machine's load does not
				// hold up the next.
				var commits sync.WaitGroup
				var commitTime atomic.Int64
				failed := make(chan error, 1)
				n := 0
				first := time.Now()
				cpu0 := cpuTime()
				for b.Loop() {
					<-tick.C
					n++
					commits.Go(func() {
						start := time.Now()
						if err := update(n); err != nil {
							select {
							case failed <- err:
							default:
							}
						}
						commitTime.Add(int64(time.Since(start)))
					})
				}
				commits.Wait()
				select {
				case err := <-failed:
					b.Fatalf("update: %v", err)
				default:
				}
				var st fanoutStats
				if err := json.Unmarshal([]byte(clients.ask(fmt.Sprintf("wait %d", n))), &st); err != nil {
					b.Fatal(err)
				}
				cpu := cpuTime() - cpu0
				b.ReportMetric(float64(cpu.Microseconds())/float64(st.Deliveries), "cpu-µs/delivery")
				b.ReportMetric(float64(st.Deliveries)/time.Unix(0, st.Last).Sub(first).Seconds(), "delivered/s")
				b.ReportMetric(st.P50Ms, "p50-ms")
				b.ReportMetric(st.P99Ms, "p99-ms")
				b.ReportMetric(float64(commitTime.Load())/float64(n)/1e6, "commit-ms")
				b.ReportMetric(perSub/1024, "KiB/idle-sub")
				b.ReportMetric(rssPerSub/1024, "RSS-KiB/idle-sub")
			})
		}
	}
}

// cpuTime is this process's CPU time so far, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// rss is this process's resident set in bytes, after a collection (0 where
// /proc is missing).
func rss() int64 {
	memInUse() // collects
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	var size, resident int64
	if _, err := fmt.Sscan(string(b), &size, &resident); err != nil {
		return 0
	}
	return resident * int64(os.Getpagesize())
}
