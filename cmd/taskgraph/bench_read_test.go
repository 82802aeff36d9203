package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"runtime/pprof"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/loader"
	"github.com/taskgraph/taskgraph/internal/testdb"
)

// listReadQuery is the side-by-side nested read (bench/peer runs the same
// against PostgraphIle): a list's first 100 tasks with their file impacts,
// and each task's outgoing relationships with their target's file impacts.
const listReadQuery = `query($id: ID!) { taskList(id: $id) { id name tasks(first: 100) { nodes {
	id title status priority
	fileImpacts { filePath operation }
	relationships(direction: OUTGOING) { type target { id title status fileImpacts { filePath operation } } }
} } } }`

// seedReadList fills one list with 1,000 tasks, 2,000 acyclic relationships
// (each to an earlier task) and 3,000 file impacts through the API, and
// returns the list's id.
func seedReadList(tb testing.TB, s *testServer) string {
	tb.Helper()
	e := benchList(tb, s, 8)
	rng := rand.New(rand.NewPCG(16, 1))
	in := make([]M, 1000)
	for i := range in {
		impacts := make([]M, 3)
		for j := range impacts {
			impacts[j] = M{"filePath": fmt.Sprintf("src/pkg%02d/f%03d.go", rng.IntN(40), rng.IntN(200)), "operation": "UPDATE"}
		}
		in[i] = M{"title": fmt.Sprintf("read %04d", i), "taskListId": e.list, "fileImpacts": dedupeImpacts(impacts)}
	}
	ids := bulkTasks(tb, s, e.token, e.project, in)
	seen := map[[2]int]bool{}
	var links [][3]string
	for len(links) < 2000 {
		i := 1 + rng.IntN(len(ids)-1)
		j := rng.IntN(i)
		if seen[[2]int{i, j}] {
			continue
		}
		seen[[2]int{i, j}] = true
		links = append(links, [3]string{ids[i], ids[j], "DEPENDS_ON"})
	}
	bulkLinks(tb, s, e.token, links)
	return e.list
}

// dedupeImpacts drops repeated paths (a task names a file once).
func dedupeImpacts(in []M) []M {
	seen := map[any]bool{}
	out := in[:0]
	for _, m := range in {
		if !seen[m["filePath"]] {
			seen[m["filePath"]] = true
			out = append(out, m)
		}
	}
	return out
}

// BenchmarkListRead: the nested read of listReadQuery by 4 concurrent
// clients (TASKGRAPH_BENCH_CLIENTS) against the real server. Reports
// requests/s, latency percentiles, the process's CPU per request (client
// included: it shares the process) and SQL statements per request.
func BenchmarkListRead(b *testing.B) {
	clients := envIntOr("TASKGRAPH_BENCH_CLIENTS", 4)
	for _, c := range testdb.Cases(b) {
		b.Run(c.Name, func(b *testing.B) {
			timing := loader.DefaultTiming
			if us := envIntOr("TASKGRAPH_BENCH_IDLE_US", 0); us > 0 {
				timing.Idle = time.Duration(us) * time.Microsecond
			}
			s := startServerWait(b, c.URL(b), timing)
			list := seedReadList(b, s)
			s.analyze(b)
			hc := fastClient(clients)
			var r struct {
				TaskList struct {
					Tasks struct{ Nodes []struct{ ID string } }
				}
			}
			require.NoError(b, s.call(hc, s.AdminToken, listReadQuery, M{"id": list}, &r))
			require.Len(b, r.TaskList.Tasks.Nodes, 100)
			stmts := statementsOf(b, s, func() {
				require.NoError(b, s.call(hc, s.AdminToken, listReadQuery, M{"id": list}, nil))
			})
			stopProfile := profileCPU(b)
			cpu0 := processCPU(b)
			elapsed, lat := closedLoop(b, clients, func(int, int64) error {
				return s.call(hc, s.AdminToken, listReadQuery, M{"id": list}, nil)
			})
			stopProfile()
			reportRequests(b, elapsed, lat, cpu0, stmts)
		})
	}
}

// analyze refreshes the planner's statistics after a bulk fill, as an
// operator's autovacuum would.
func (s *testServer) analyze(tb testing.TB) {
	tb.Helper()
	_, err := s.DB.SQL().Exec(`ANALYZE`)
	require.NoError(tb, err)
}

// profileCPU writes a CPU profile of the measured part alone (go test's
// -cpuprofile would include the fill) to TASKGRAPH_BENCH_CPUPROFILE, if set;
// call the returned func when the measurement ends.
func profileCPU(tb testing.TB) func() {
	path := os.Getenv("TASKGRAPH_BENCH_CPUPROFILE")
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	require.NoError(tb, err)
	require.NoError(tb, pprof.StartCPUProfile(f))
	return func() {
		pprof.StopCPUProfile()
		require.NoError(tb, f.Close())
	}
}
