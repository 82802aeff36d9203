package mcp

import (
	"context"
	"sync"
	"time"
)

// maxKeptLeases bounds the agents one server keeps alive at once.
const maxKeptLeases = 64

// leaseKeeper heartbeats the build agents this server's client claimed,
// between the model's own calls: a model thinks and edits for longer than a
// lease lasts (30 seconds by default) without calling a tool. It is for the
// stdio server, which lives exactly as long as its agent — when the agent
// goes away, so do the heartbeats, and the lease lapses as it should. It
// stops keeping an agent when the agent completes or fails its task, on
// LEASE_LOST or a CANCEL directive.
type leaseKeeper struct {
	ctx   context.Context
	every time.Duration
	exec  Executor

	mu     sync.Mutex
	agents map[string]context.CancelFunc
}

func newLeaseKeeper(ctx context.Context, every time.Duration, exec Executor) *leaseKeeper {
	return &leaseKeeper{ctx: ctx, every: every, exec: exec, agents: map[string]context.CancelFunc{}}
}

// keep starts heartbeating agentID (no-op when already kept or when the
// keeper is full: the model's own heartbeats still keep the lease).
func (k *leaseKeeper) keep(agentID string) {
	if k == nil {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if _, ok := k.agents[agentID]; ok || len(k.agents) >= maxKeptLeases {
		return
	}
	ctx, cancel := context.WithCancel(k.ctx)
	k.agents[agentID] = cancel
	go k.run(ctx, agentID)
}

// drop stops heartbeating agentID.
func (k *leaseKeeper) drop(agentID string) {
	if k == nil {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if cancel, ok := k.agents[agentID]; ok {
		cancel()
		delete(k.agents, agentID)
	}
}

// kept reports whether agentID is being kept alive.
func (k *leaseKeeper) kept(agentID string) bool {
	if k == nil {
		return false
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	_, ok := k.agents[agentID]
	return ok
}

func (k *leaseKeeper) run(ctx context.Context, agentID string) {
	tick := time.NewTicker(k.every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		var out struct{ Heartbeat struct{ Directive string } }
		err := k.exec.Execute(ctx, `mutation($in: HeartbeatInput!) { heartbeat(input: $in) { directive } }`,
			map[string]any{"in": map[string]any{"agentId": agentID}}, &out)
		if ctx.Err() != nil {
			return
		}
		switch {
		case err != nil && asToolError(err).Code == "LEASE_LOST", out.Heartbeat.Directive == "CANCEL":
			// The agent's next call learns it; nothing left to keep.
			k.drop(agentID)
			return
		}
		// Other failures (the server restarting) are retried at the next tick.
	}
}
