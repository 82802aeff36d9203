package main

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/loader"
	"github.com/taskgraph/taskgraph/internal/testdb"
)

// BenchmarkSimilarTasks: similarTasks(first: 10) over a project of 10,000
// tasks with 768-dimension vectors, through the real server; one iteration
// is one search by a vector. The vectors are read in pages of 1,000 and
// scored in the server. It reports the latency (p50, p99).
func BenchmarkSimilarTasks(b *testing.B) {
	const tasks, dim = 10_000, 768
	for _, c := range testdb.Cases(b) {
		b.Run(c.Name, func(b *testing.B) {
			// No background grouping: its clustering of new tasks would
			// share the CPU with the searches measured.
			s, _ := startServerWith(b, c.URL(b), serverOptions{loaderTiming: loader.DefaultTiming, noGroupingBackground: true})
			project := s.createProject(b, s.AdminToken, "similar")
			vecs := memoryVectors(11, tasks, dim)
			in := make([]M, tasks)
			for i := range in {
				in[i] = M{"title": fmt.Sprintf("similar %05d", i), "embedding": vecs[i], "embeddingModel": "bench-768"}
			}
			bulkTasks(b, s, s.AdminToken, project, in)
			queries := memoryVectors(12, 64, dim)
			hc := fastClient(1)
			var lat latencies
			b.ResetTimer()
			for i := range b.N {
				t0 := time.Now()
				var out struct{ SimilarTasks []struct{ Score float64 } }
				require.NoError(b, s.call(hc, s.AdminToken, similarTasksQuery, M{"p": project, "e": queries[i%len(queries)],
					"m": "bench-768", "first": 10}, &out))
				lat.add(time.Since(t0))
				require.Len(b, out.SimilarTasks, 10)
			}
			b.StopTimer()
			b.ReportMetric(lat.ms(0.5), "p50-ms")
			b.ReportMetric(lat.ms(0.99), "p99-ms")
		})
	}
}

// BenchmarkCreateTaskEmbedding: createTask with and without a 768-dimension
// vector, one caller; one iteration is one create. The difference is what
// recording a task's embedding costs a create.
func BenchmarkCreateTaskEmbedding(b *testing.B) {
	const dim = 768
	vec := memoryVectors(13, 1, dim)[0]
	create := `mutation($in: CreateTaskInput!) { createTask(input: $in) { task { id } } }`
	for _, c := range testdb.Cases(b) {
		for _, withVector := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/embedding=%v", c.Name, withVector), func(b *testing.B) {
				s, _ := startServerWith(b, c.URL(b), serverOptions{loaderTiming: loader.DefaultTiming, noGroupingBackground: true})
				project := s.createProject(b, s.AdminToken, "creates")
				hc := fastClient(1)
				// The bodies are encoded before the clock starts: encoding
				// 768 floats is the client's work, and would share the two
				// cores with the server's.
				bodies := make([][]byte, b.N)
				for i := range bodies {
					in := M{"projectId": project, "title": fmt.Sprintf("create %d", i)}
					if withVector {
						in["embedding"], in["embeddingModel"] = vec, "bench-768"
					}
					var err error
					bodies[i], err = json.Marshal(M{"query": create, "variables": M{"in": in}})
					require.NoError(b, err)
				}
				var lat latencies
				b.ResetTimer()
				cpu0 := processCPU(b)
				for i := range b.N {
					t0 := time.Now()
					require.NoError(b, s.callBody(hc, s.AdminToken, bodies[i], nil))
					lat.add(time.Since(t0))
				}
				b.StopTimer()
				// This process's CPU (the server's, and the client's reading
				// of the answers), steadier than the wall time.
				b.ReportMetric(float64((processCPU(b)-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
				b.ReportMetric(lat.ms(0.5), "p50-ms")
				b.ReportMetric(lat.ms(0.99), "p99-ms")
			})
		}
	}
}
