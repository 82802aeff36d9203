package main

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/taskgraph/taskgraph/internal/testdb"
)

// BenchmarkLargeQueryCPU sends queries that are within the body and parser
// token limits but used to cost seconds of validation (gqlparser's
// OverlappingFieldsCanBeMerged compares every pair of same-named fields), and
// reports the process CPU time (user+system, server and client together:
// they share this process) per request as cpu-ms/op; every request is a new
// text, so that each is parsed and validated. The documents:
//
//   - repeat: { viewer { slug slug … ×14000 } } (70 KB)
//   - aliases: { viewer { a0: slug a1: slug … ×4900 } }
//   - nested: { viewer { slug ×200 } … ×50 }: sibling fields that merge
//
// After the document limits these answer LIMIT_EXCEEDED before validation.
// The worst documents within the limits (1,000 selections per document, 200
// per selection set) are validated and run:
//
//   - within-merge: { viewer { slug ×199 } … ×5 }: 995 same-named fields
//   - within-fragments: { viewer { ...F0 … ...F199 } }, each Fi { slug ×3 }
//   - within-repeat: { viewer { slug ×200 } … } in five fragments spread together
func BenchmarkLargeQueryCPU(b *testing.B) {
	var aliases strings.Builder
	for i := range 4900 {
		fmt.Fprintf(&aliases, "a%d: slug ", i)
	}
	queries := []struct{ name, query string }{
		{"repeat", "{ viewer { " + strings.Repeat("slug ", 14000) + "} }"},
		{"aliases", "{ viewer { " + aliases.String() + "} }"},
		{"nested", "{ " + strings.Repeat("viewer { "+strings.Repeat("slug ", 200)+"} ", 50) + "}"},
		{"within-merge", "{ " + strings.Repeat("viewer { "+strings.Repeat("slug ", 199)+"} ", 5) + "}"},
		{"within-fragments", withinFragments()},
		{"within-repeat", "{ viewer { ...A ...B ...C ...D } } " + repeatFragments("A", "B", "C", "D")},
	}
	s := startServer(b, testdb.SQLite(b))
	for _, q := range queries {
		b.Run(q.name, func(b *testing.B) {
			b.ReportMetric(float64(len(q.query))/1000, "query-KB")
			var cpu time.Duration
			var code string
			n := 0
			for b.Loop() {
				// A comment makes every request's text new: the query cache
				// would otherwise spare all but the first the validation.
				n++
				query := fmt.Sprintf("%s\n# %s %d", q.query, b.Name(), n)
				before := processCPU(b)
				r, err := s.post(s.AdminToken, query, nil)
				cpu += processCPU(b) - before
				if err != nil {
					b.Fatal(err)
				}
				code = r.code()
			}
			b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
			b.Logf("%s (%d bytes): first error code %q", q.name, len(q.query), code)
		})
	}
}

// processCPU is the CPU time (user and system) this process has used.
func processCPU(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// withinFragments is 200 fragments of three fields spread in one selection set.
func withinFragments() string {
	var b strings.Builder
	b.WriteString("{ viewer { ")
	for i := range 200 {
		fmt.Fprintf(&b, "...F%d ", i)
	}
	b.WriteString("} }")
	for i := range 200 {
		fmt.Fprintf(&b, " fragment F%d on User { slug slug slug }", i)
	}
	return b.String()
}

// repeatFragments defines fragments on User of 199 slug fields each.
func repeatFragments(names ...string) string {
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, "fragment %s on User { %s} ", n, strings.Repeat("slug ", 199))
	}
	return b.String()
}
