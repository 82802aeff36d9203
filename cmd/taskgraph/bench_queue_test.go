package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/loader"
	"github.com/taskgraph/taskgraph/internal/testdb"
)

// Benchmarks of the function queue, through the real server over HTTP, on
// SQLite and on PostgreSQL when TASKGRAPH_TEST_DATABASE_URL is set:
// enqueues/s and claim+complete/s with TASKGRAPH_BENCH_CLIENTS (16) parallel
// clients, and the latency from enqueue to claim for a worker waiting on the
// event stream.

const (
	benchEnqueue  = `mutation($in: EnqueueFunctionInput!) { enqueueFunction(input: $in) { item { id } } }`
	benchClaim    = `mutation($in: ClaimQueueItemsInput!) { claimQueueItems(input: $in) { items { id attempt } } }`
	benchComplete = `mutation($in: CompleteQueueItemInput!) { completeQueueItem(input: $in) { item { id } } }`
)

func benchQueue(b *testing.B, url string) (*testServer, *queueFixture) {
	b.Helper()
	s := startServerWait(b, url, loader.DefaultTiming)
	n := queueSlugs.Add(1)
	f := &queueFixture{s: s, token: s.AdminToken, functions: map[string]bool{}}
	f.project = s.createProject(b, f.token, fmt.Sprintf("qb%05d-bench", n))
	f.planner = s.query(b, f.token, `mutation($p: ID!) { createPlanner(input: {projectId: $p, userQuestion: "q", model: "m"}) { planner { id } } }`,
		M{"p": f.project}).S("createPlanner.planner.id")
	f.worker = s.query(b, f.token, `mutation($p: ID!) { createWorker(input: {plannerId: $p, taskDescription: "t"}) { worker { id } } }`,
		M{"p": f.planner}).S("createWorker.worker.id")
	s.query(b, s.AdminToken, `mutation { registerQueueFunction(input: {name: "bench", maxAttempts: 3, leaseSeconds: 300}) { function { id } } }`, nil)
	return s, f
}

// parallel runs f n times over clients goroutines and returns the elapsed time.
func parallel(b *testing.B, clients, n int, f func() error) time.Duration {
	b.Helper()
	var (
		next    atomic.Int64
		wg      sync.WaitGroup
		errOnce sync.Once
		failure error
	)
	start := time.Now()
	for range clients {
		wg.Go(func() {
			for next.Add(1) <= int64(n) {
				if err := f(); err != nil {
					errOnce.Do(func() { failure = err })
					return
				}
			}
		})
	}
	wg.Wait()
	require.NoError(b, failure)
	return time.Since(start)
}

func BenchmarkQueueEnqueue(b *testing.B) {
	clients := envIntOr("TASKGRAPH_BENCH_CLIENTS", 16)
	for _, c := range testdb.Cases(b) {
		b.Run(c.Name, func(b *testing.B) {
			s, f := benchQueue(b, c.URL(b))
			hc := fastClient(clients)
			in := M{"in": M{"entityType": "WORKER", "entityId": f.worker, "functionName": "bench", "payload": M{"k": "v"}}}
			b.ResetTimer()
			elapsed := parallel(b, clients, b.N, func() error { return s.call(hc, f.token, benchEnqueue, in, nil) })
			b.StopTimer()
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "enqueues/s")
		})
	}
}

func BenchmarkQueueClaimComplete(b *testing.B) {
	clients := envIntOr("TASKGRAPH_BENCH_CLIENTS", 16)
	for _, c := range testdb.Cases(b) {
		b.Run(c.Name, func(b *testing.B) {
			s, f := benchQueue(b, c.URL(b))
			hc := fastClient(clients)
			in := M{"in": M{"entityType": "WORKER", "entityId": f.worker, "functionName": "bench"}}
			parallel(b, clients, b.N, func() error { return s.call(hc, f.token, benchEnqueue, in, nil) })
			claim := M{"in": M{"functionNames": []string{"bench"}, "workerName": "bench"}}
			b.ResetTimer()
			elapsed := parallel(b, clients, b.N, func() error {
				var r struct {
					ClaimQueueItems struct{ Items []struct{ ID string } }
				}
				if err := s.call(hc, f.token, benchClaim, claim, &r); err != nil {
					return err
				}
				if len(r.ClaimQueueItems.Items) != 1 {
					return fmt.Errorf("claimed %d items", len(r.ClaimQueueItems.Items))
				}
				return s.call(hc, f.token, benchComplete, M{"in": M{"id": r.ClaimQueueItems.Items[0].ID}}, nil)
			})
			b.StopTimer()
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "items/s")
		})
	}
}

// BenchmarkQueueWakeLatency: a worker waits on projectEvents for
// QUEUE_ITEM_ENQUEUED and claims when woken; the latency is from the start
// of enqueueFunction to the claim's answer holding the item.
func BenchmarkQueueWakeLatency(b *testing.B) {
	for _, c := range testdb.Cases(b) {
		b.Run(c.Name, func(b *testing.B) {
			s, f := benchQueue(b, c.URL(b))
			hc := fastClient(2)
			// From the log's end as it was: an event committed while the
			// subscription starts is not missed.
			sub := s.subscribe(b, f.token, f.project, s.eventCursor(b, f.token, f.project), "QUEUE_ITEM_ENQUEUED")
			claimed := make(chan error, 1)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() {
				claim := M{"in": M{"functionNames": []string{"bench"}, "workerName": "waiter"}}
				for {
					if r, err := sub.Next(ctx); err != nil || len(r.Errors) > 0 {
						if ctx.Err() == nil {
							claimed <- fmt.Errorf("subscription ended: %v %v", err, r)
						}
						return
					}
					var r struct {
						ClaimQueueItems struct{ Items []struct{ ID string } }
					}
					err := s.call(hc, f.token, benchClaim, claim, &r)
					if err == nil && len(r.ClaimQueueItems.Items) != 1 {
						err = fmt.Errorf("woken, claimed %d items", len(r.ClaimQueueItems.Items))
					}
					claimed <- err
				}
			}()
			in := M{"in": M{"entityType": "WORKER", "entityId": f.worker, "functionName": "bench"}}
			var lat latencies
			b.ResetTimer()
			for range b.N {
				t0 := time.Now()
				require.NoError(b, s.call(hc, f.token, benchEnqueue, in, nil))
				select {
				case err := <-claimed:
					require.NoError(b, err)
				case <-time.After(waitLimit):
					b.Fatal("the waiting worker was not woken")
				}
				lat.add(time.Since(t0))
			}
			b.StopTimer()
			b.ReportMetric(lat.ms(0.5), "enqueue-to-claim-p50-ms")
			b.ReportMetric(lat.ms(0.99), "enqueue-to-claim-p99-ms")
		})
	}
}
