package main

import (
	"testing"

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
