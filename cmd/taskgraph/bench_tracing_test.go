package main

import (
	"fmt"
	"testing"

	"github.com/taskgraph/taskgraph/internal/loader"
	"github.com/taskgraph/taskgraph/internal/testdb"
)

// BenchmarkTracing measures what tracing costs a nested query (10 tasks,
// four levels, on SQLite): off (no OTEL endpoint, the default) and on, every
// span exported to an in-process OTLP/HTTP receiver.
//
//	go test -run '^$' -bench BenchmarkTracing -benchtime 300x ./cmd/taskgraph/
func BenchmarkTracing(b *testing.B) {
	for _, on := range []bool{false, true} {
		name := "off"
		if on {
			name = "on"
		}
		b.Run(name, func(b *testing.B) {
			if on {
				recv := newOTLPReceiver(b)
				b.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", recv.URL)
			} else {
				b.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
				b.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
			}
			s, stop := startServerWith(b, testdb.SQLite(b), serverOptions{loaderTiming: loader.DefaultTiming})
			defer stop()
			slug := fmt.Sprintf("bt%04d", planSlugs.Add(1))
			seedChain(b, s, slug, 10)
			vars := map[string]any{"slug": slug}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				s.mustDo(b, s.AdminToken, nestedQuery, vars, nil)
			}
		})
	}
}
