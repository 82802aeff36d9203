package mcp

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/client"
)

// beatExec counts heartbeats per agent; after lostAfter of them it answers
// LEASE_LOST.
type beatExec struct {
	lostAfter int
	mu        sync.Mutex
	beats     map[string]int
}

func (e *beatExec) Execute(_ context.Context, doc string, vars map[string]any, out any) error {
	if !strings.Contains(doc, "heartbeat") {
		panic("unexpected operation: " + doc)
	}
	agent := vars["in"].(map[string]any)["agentId"].(string)
	e.mu.Lock()
	e.beats[agent]++
	n := e.beats[agent]
	e.mu.Unlock()
	if e.lostAfter > 0 && n >= e.lostAfter {
		return client.Errors{{Message: "lease lost", Extensions: map[string]any{"code": "LEASE_LOST"}}}
	}
	out.(*struct{ Heartbeat struct{ Directive string } }).Heartbeat.Directive = "CONTINUE"
	return nil
}

func (e *beatExec) count(agent string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.beats[agent]
}

// waitFor polls cond until it holds (a bound, not a timing assertion).
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached")
		}
	}
}

// TestLeaseKeeper: a kept agent is heartbeated until dropped; one that
// loses its lease is dropped by the keeper itself; the keeper is bounded.
func TestLeaseKeeper(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	exec := &beatExec{beats: map[string]int{}}
	k := newLeaseKeeper(ctx, time.Millisecond, exec)
	k.keep("A1")
	waitFor(t, func() bool { return exec.count("A1") >= 3 })
	k.drop("A1")
	require.False(t, k.kept("A1"))

	lost := &beatExec{lostAfter: 2, beats: map[string]int{}}
	k = newLeaseKeeper(ctx, time.Millisecond, lost)
	k.keep("A2")
	waitFor(t, func() bool { return !k.kept("A2") })
	require.Equal(t, 2, lost.count("A2"))

	full := newLeaseKeeper(ctx, time.Hour, exec)
	for i := range maxKeptLeases + 1 {
		full.keep(string(rune('a' + i)))
	}
	full.mu.Lock()
	require.Len(t, full.agents, maxKeptLeases)
	full.mu.Unlock()
}
