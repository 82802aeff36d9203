package service

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestLatencyWindow: the window answers the longest request of the last
// ten seconds, forgets older ones, and the sweep's grace is twice that,
// capped at four deadlines.
func TestLatencyWindow(t *testing.T) {
	var w latencyWindow
	t0 := time.Unix(1_000_000, 0)
	require.Zero(t, w.longest(t0))

	w.observe(300*time.Millisecond, t0)
	w.observe(100*time.Millisecond, t0.Add(200*time.Millisecond))
	w.observe(700*time.Millisecond, t0.Add(3*time.Second))
	require.Equal(t, 700*time.Millisecond, w.longest(t0.Add(4*time.Second)))
	require.Equal(t, 700*time.Millisecond, w.longest(t0.Add(12*time.Second)), "3 s + 9 s: still within ten seconds")
	require.Zero(t, w.longest(t0.Add(13*time.Second)), "every request is older than ten seconds")

	// A bucket reused a round later starts again from its new second.
	w.observe(50*time.Millisecond, t0.Add(2*latencySeconds*time.Second))
	require.Equal(t, 50*time.Millisecond, w.longest(t0.Add(2*latencySeconds*time.Second)))

	r := &Runs{Service: &Service{heartbeat: 200 * time.Millisecond, missed: 3}}
	r.latency.observe(250*time.Millisecond, time.Now())
	require.Equal(t, 500*time.Millisecond, r.grace())
	r.latency.observe(5*time.Second, time.Now())
	require.Equal(t, 2400*time.Millisecond, r.grace(), "at most four deadlines")
}
