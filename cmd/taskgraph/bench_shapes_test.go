package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime/pprof"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/loader"
	"github.com/taskgraph/taskgraph/internal/testdb"
)

// readShapes are the four nested reads of the side-by-side comparison
// (bench/peer), and one more: a list's first 100 tasks in list order, read
//
//   - full: with ids on every object, each task's outgoing relationships,
//     their targets and the targets' file impacts, and its own impacts;
//   - light: the same tree with ids on tasks only;
//   - light-edges: light through the connection's edges, as Relay-style
//     clients ask it (not a bench/peer shape);
//   - linked: the tasks each waits on, waiting on it, and its subtasks
//     (not a bench/peer shape);
//   - deep: one level deeper (target → relationships → target), no impacts;
//   - wide: every scalar field of a task that is a column, no children.
var readShapes = []struct{ name, query string }{
	{"full", `query($id: ID!) { taskList(id: $id) { tasks(first: 100) { nodes {
		id displayId title status
		relationships(direction: OUTGOING) { id type target { id displayId title status fileImpacts { id filePath operation } } }
		fileImpacts { id filePath operation }
	} } } }`},
	{"light", `query($id: ID!) { taskList(id: $id) { tasks(first: 100) { nodes {
		id displayId title status
		relationships(direction: OUTGOING) { type target { displayId title status fileImpacts { filePath operation } } }
		fileImpacts { filePath operation }
	} } } }`},
	{"deep", `query($id: ID!) { taskList(id: $id) { tasks(first: 100) { nodes {
		id displayId title status
		relationships(direction: OUTGOING) { id type target { id displayId title status
			relationships(direction: OUTGOING) { id type target { id displayId title status } } } }
	} } } }`},
	{"light-edges", `query($id: ID!) { taskList(id: $id) { tasks(first: 100) { edges { cursor node {
		id displayId title status
		relationships(direction: OUTGOING) { type target { displayId title status fileImpacts { filePath operation } } }
		fileImpacts { filePath operation }
	} } } } }`},
	{"linked", `query($id: ID!) { taskList(id: $id) { tasks(first: 100) { nodes {
		id displayId title status
		dependencies { displayId title status } dependents { displayId title status } subtasks { displayId title status }
	} } } }`},
	{"wide", `query($id: ID!) { taskList(id: $id) { tasks(first: 100) { nodes {
		id displayId title description category status priority priorityScore blocksCount isQuickWin
		riskLevel effort owner phase deadline actualEffortMinutes executionLog inEvaluationQueue version
		embeddingModel createdAt updatedAt startedAt completedAt
	} } } }`},
}

// BenchmarkReadShapes: each of readShapes by 4 concurrent clients
// (TASKGRAPH_BENCH_CLIENTS) against the real server, over the data of
// BenchmarkListRead (1,000 tasks, 2,000 relationships, 3 impacts a task).
// Reports requests/s, latencies, the process's CPU per request (the client
// shares the process; it only reads the answer's bytes), allocations and
// SQL statements per request. TASKGRAPH_BENCH_CPUPROFILE and
// TASKGRAPH_BENCH_MEMPROFILE write profiles of the measured part, one per
// shape (the shape's name is appended).
func BenchmarkReadShapes(b *testing.B) {
	clients := envIntOr("TASKGRAPH_BENCH_CLIENTS", 4)
	for _, c := range testdb.Cases(b) {
		b.Run(c.Name, func(b *testing.B) {
			s := startServerWait(b, c.URL(b), loader.DefaultTiming)
			list := seedReadList(b, s)
			s.analyze(b)
			hc := fastClient(clients)
			for _, shape := range readShapes {
				b.Run(shape.name, func(b *testing.B) {
					body, err := json.Marshal(M{"query": shape.query, "variables": M{"id": list}})
					require.NoError(b, err)
					var r struct {
						TaskList struct {
							Tasks struct {
								Nodes []struct{ ID string }
								Edges []struct{ Node struct{ ID string } }
							}
						}
					}
					require.NoError(b, s.call(hc, s.AdminToken, shape.query, M{"id": list}, &r))
					require.Equal(b, 100, len(r.TaskList.Tasks.Nodes)+len(r.TaskList.Tasks.Edges))
					// The fewest of three: a request may also record the
					// token's use (once a minute), which is not the read's.
					stmts := int64(-1)
					for range 3 {
						n := statementsOf(b, s, func() { require.NoError(b, s.postRaw(hc, body)) })
						if stmts < 0 || n < stmts {
							stmts = n
						}
					}
					stop := profileShape(b, shape.name)
					b.ReportAllocs()
					cpu0 := processCPU(b)
					elapsed, lat := closedLoop(b, clients, func(int, int64) error { return s.postRaw(hc, body) })
					stop()
					reportRequests(b, elapsed, lat, cpu0, stmts)
				})
			}
		})
	}
}

// postRaw posts a GraphQL body as the admin and reads the answer's bytes,
// failing on an HTTP error or an answer with errors, without decoding it.
func (s *testServer) postRaw(c *http.Client, body []byte) error {
	req, err := http.NewRequest(http.MethodPost, s.URL+"/graphql", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+s.AdminToken)
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK || bytes.Contains(out, []byte(`"errors":`)) {
		return fmt.Errorf("HTTP %d: %.300s", resp.StatusCode, out)
	}
	return nil
}

// profileShape writes CPU and heap profiles of the measured part of one
// shape, to TASKGRAPH_BENCH_CPUPROFILE and TASKGRAPH_BENCH_MEMPROFILE with
// "."+shape appended, if set; call the returned func when it ends.
func profileShape(tb testing.TB, shape string) func() {
	cpu, mem := os.Getenv("TASKGRAPH_BENCH_CPUPROFILE"), os.Getenv("TASKGRAPH_BENCH_MEMPROFILE")
	var f *os.File
	if cpu != "" {
		var err error
		f, err = os.Create(cpu + "." + shape)
		require.NoError(tb, err)
		require.NoError(tb, pprof.StartCPUProfile(f))
	}
	return func() {
		if f != nil {
			pprof.StopCPUProfile()
			require.NoError(tb, f.Close())
		}
		if mem != "" {
			m, err := os.Create(mem + "." + shape)
			require.NoError(tb, err)
			require.NoError(tb, pprof.Lookup("allocs").WriteTo(m, 0))
			require.NoError(tb, m.Close())
		}
	}
}
