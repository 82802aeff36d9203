package main

import (
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 200; i++ {
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	for _, c := range []struct {
		pct  int
		want time.Duration
	}{{50, 100 * time.Millisecond}, {99, 198 * time.Millisecond}, {100, 200 * time.Millisecond}, {1, 2 * time.Millisecond}} {
		if got := percentile(d, c.pct); got != c.want {
			t.Errorf("p%d = %s, want %s", c.pct, got, c.want)
		}
	}
	if got := percentile([]time.Duration{7}, 99); got != 7 {
		t.Errorf("p99 of one = %s", got)
	}
}

func TestSummarizePoolsRounds(t *testing.T) {
	ms := time.Millisecond
	s := summarize([]phase{
		{requests: 2, elapsed: time.Second, latencies: []time.Duration{10 * ms, 30 * ms}, serverCPU: 8 * ms, dbCPU: 4 * ms, statements: 6},
		{requests: 2, elapsed: time.Second, latencies: []time.Duration{20 * ms, 40 * ms}, serverCPU: 12 * ms, dbCPU: 0, statements: 2, dbGone: 1},
	})
	if s.requests != 4 || s.reqPerSec != 2 || s.cpuPerReq != 5*ms || s.dbCPUPerReq != ms || s.stmtsPerReq != 2 || s.backendsEnded != 1 {
		t.Errorf("got %+v", s)
	}
	if s.p50 != 20*ms || s.p99 != 40*ms {
		t.Errorf("p50 %s p99 %s, want 20ms and 40ms", s.p50, s.p99)
	}
	if len(s.roundRates) != 2 || s.roundRates[0] != 2 {
		t.Errorf("round rates %v", s.roundRates)
	}
	if u := summarize([]phase{{requests: 1, elapsed: time.Second, latencies: []time.Duration{ms}, statements: -1}}); u.stmtsPerReq != -1 {
		t.Errorf("statements not counted, but summarised as %v", u.stmtsPerReq)
	}
}
