package main

import (
	"strings"
	"testing"
	"time"
)

func TestThousands(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 1400: "1,400", 1234567: "1,234,567", -2000: "-2,000"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}

// The side-by-side table has a row per scenario that ran, in report order,
// with Taskgraph's ratios to each other server.
func TestSummaryTable(t *testing.T) {
	ms := time.Millisecond
	in := reportInput{
		order: []*target{{key: "taskgraph"}, {key: "pg5"}},
		results: map[string]map[string]summary{
			"write": {"taskgraph": {reqPerSec: 300, cpuPerReq: 2 * ms, dbCPUPerReq: ms}, "pg5": {reqPerSec: 600, cpuPerReq: ms, dbCPUPerReq: ms / 2}},
			"light": {"taskgraph": {reqPerSec: 150, cpuPerReq: 4 * ms, dbCPUPerReq: 2 * ms}, "pg5": {reqPerSec: 100, cpuPerReq: 8 * ms, dbCPUPerReq: 4 * ms}},
		},
	}
	var b strings.Builder
	summaryTable(&b, in)
	out := b.String()
	light := strings.Index(out, "| light read | 150 | 6.00 ms | 100 | 1.50× | 0.50× |")
	write := strings.Index(out, "| createTask | 300 | 3.00 ms | 600 | 0.50× | 2.00× |")
	if light < 0 || write < 0 || write < light {
		t.Errorf("rows missing or out of order:\n%s", out)
	}
	if strings.Contains(out, "full read") {
		t.Errorf("a scenario that did not run has a row:\n%s", out)
	}
}

// A server timed only in createTask (floorw) has rows in createTask's
// tables and none in a read's.
func TestWritesOnlyServer(t *testing.T) {
	ms := time.Millisecond
	in := reportInput{
		order: []*target{{key: "taskgraph", label: "TG"}, {key: "floor", label: "FL"}, {key: "floorw", label: "FW", writesOnly: true}},
		results: map[string]map[string]summary{
			"write": {"taskgraph": {reqPerSec: 300, cpuPerReq: ms}, "floor": {reqPerSec: 900, cpuPerReq: ms}, "floorw": {reqPerSec: 600, cpuPerReq: ms}},
			"light": {"taskgraph": {reqPerSec: 150, cpuPerReq: ms}, "floor": {reqPerSec: 300, cpuPerReq: ms}},
		},
		verified: &verified{},
	}
	var b strings.Builder
	report(&b, in)
	out := b.String()
	light, write := strings.Index(out, "### Nested read, light"), strings.Index(out, "### createTask")
	if light < 0 || write < 0 || write < light {
		t.Fatalf("sections missing:\n%s", out)
	}
	if strings.Contains(out[light:write], "FW") {
		t.Errorf("the writes-only server has a row in a read's tables:\n%s", out[light:write])
	}
	if !strings.Contains(out[write:], "| FW | ") || !strings.Contains(out[write:], "| FW | n/a | n/a | 0.50× |") {
		t.Errorf("the writes-only server's createTask rows are missing:\n%s", out[write:])
	}
	if !(&target{writesOnly: true}).serves("write") || (&target{writesOnly: true}).serves("light") || !(&target{}).serves("light") {
		t.Error("serves: wrong")
	}
}

func TestSubscriptionTable(t *testing.T) {
	ms := time.Millisecond
	in := reportInput{cfg: config{sub: subConfig{rate: 20, duration: 10 * time.Second}}, subs: []subResult{
		{label: "Taskgraph", key: "taskgraph", subscribers: 10000, committed: 200, expected: 2_000_000, delivered: 2_000_000,
			p50: 20 * ms, p99: 80 * ms, serverPerEvent: 8 * time.Microsecond, rssBefore: 50 << 20, rssIdle: 50<<20 + 10000*4096, window: 10 * time.Second},
		{label: "Taskgraph", key: "taskgraph", subscribers: 1000, committed: 200, expected: 200_000, delivered: 200_000,
			p50: 10 * ms, p99: 40 * ms, serverPerEvent: 10 * time.Microsecond, dbPerEvent: time.Microsecond, rssBefore: 0, rssIdle: 1000 * 2048},
		{label: "PostGraphile 5", key: "pg5", subscribers: 1000, committed: 200, expected: 200_000, delivered: 100_000, short: 500,
			p50: 20 * ms, p99: 400 * ms, serverPerEvent: 100 * time.Microsecond, dbPerEvent: 2 * time.Microsecond, rssIdle: 1000 * 8192, problems: "2 subscriptions ended with an error"},
	}}
	var b strings.Builder
	subscriptionTable(&b, in)
	out := b.String()
	for _, want := range []string{
		"| Taskgraph | 10,000 | 200 (20.0/s) | 2,000,000 / 2,000,000 (100.00%) | 0 | 20.0 ms | 80.0 ms | 8.0 µs | 0.0 µs | 4.0 KiB |",
		"| PostGraphile 5 | 1,000 | 200 (0.0/s) | 100,000 / 200,000 (50.00%) | 500 |",
		"2 subscriptions ended with an error",
		// Taskgraph at 1,000 against PostGraphile 5 at 1,000.
		"| | 2.00× | 0.50× | 0.10× | 0.10× | 0.50× | 0.25× |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
}
