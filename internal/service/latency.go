package service

import (
	"sync"
	"time"
)

// latencyWindow keeps the longest GraphQL request this replica answered in
// each of the last latencySeconds seconds (Runs.ObserveRequest), so that the
// heartbeat sweep can tell an agent's silence from the server's own slowness.
type latencyWindow struct {
	mu      sync.Mutex
	buckets [latencySeconds]struct {
		second int64
		max    time.Duration
	}
}

// latencySeconds is how far back the sweep looks at the server's latency.
const latencySeconds = 10

func (w *latencyWindow) observe(d time.Duration, now time.Time) {
	sec := now.Unix()
	w.mu.Lock()
	b := &w.buckets[sec%latencySeconds]
	if b.second != sec {
		b.second, b.max = sec, 0
	}
	b.max = max(b.max, d)
	w.mu.Unlock()
}

// longest is the longest request answered in the last latencySeconds.
func (w *latencyWindow) longest(now time.Time) time.Duration {
	sec := now.Unix()
	var m time.Duration
	w.mu.Lock()
	for _, b := range w.buckets {
		if sec-b.second < latencySeconds {
			m = max(m, b.max)
		}
	}
	w.mu.Unlock()
	return m
}

// ObserveRequest records how long this replica took to answer one GraphQL
// request over HTTP, from its arrival to its last byte (the server's access
// log calls it).
func (s *Runs) ObserveRequest(d time.Duration) {
	s.latency.observe(d, time.Now())
}

// grace is the silence the sweep forgives an agent on top of its deadline:
// the time the server itself has recently taken to answer. An agent's
// silence spans the end of one call and the start of the next, so it is
// twice the longest request of the last latencySeconds, and at most four
// deadlines (a dead agent is still found within five deadlines). On a
// starved machine (requests taking longer than the deadline) a lease then
// stays with an agent whose heartbeats are in the server's own queue.
func (s *Runs) grace() time.Duration {
	return min(2*s.latency.longest(time.Now()), 4*s.deadline())
}
