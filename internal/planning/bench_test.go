package planning_test

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/taskgraph/taskgraph/internal/planning"
)

// BenchmarkCompute plans random lists: up to three dependencies and three file
// impacts per task over a pool of n/3 files, n/10 CONFLICTS_WITH links, some
// outside dependencies and 10% COMPLETED tasks.
func BenchmarkCompute(b *testing.B) {
	for _, n := range []int{500, 5000} {
		in := randomInput(rand.New(rand.NewSource(42)), shape{tasks: n, files: n / 3, maxDeps: 3, conflicts: n / 10,
			outside: n / 50, done: 0.1, maxImpacts: 3})
		b.Run(fmt.Sprintf("tasks=%d", n), func(b *testing.B) {
			var p *planning.Plan
			b.ReportAllocs()
			for b.Loop() {
				p = planning.Compute(in)
			}
			b.ReportMetric(float64(len(p.Waves)), "waves")
			b.ReportMetric(float64(p.TotalTasks), "planned")
			b.ReportMetric(float64(len(p.Conflicts)), "conflicts")
		})
	}
}
