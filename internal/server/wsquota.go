package server

import (
	"sync"

	"github.com/taskgraph/taskgraph/internal/auth"
)

// wsQuotas caps what one principal — an API token, or an OpenID Connect
// user — holds open on the websockets of this process: connections, and
// operations running on them (subscriptions, and queries or mutations sent
// over a websocket while they run). One tenant then cannot make every event
// fan out to thousands of its own subscribers while others wait. The counts
// are per replica: behind a load balancer of n replicas a principal may hold
// up to n times as much.
type wsQuotas struct {
	maxConns, maxOps int

	mu sync.Mutex
	by map[string]*wsUsage
}

// wsUsage is what one principal holds open.
type wsUsage struct{ conns, ops int }

func newWSQuotas(maxConns, maxOps int) *wsQuotas {
	return &wsQuotas{maxConns: maxConns, maxOps: maxOps, by: map[string]*wsUsage{}}
}

// quotaKey names the principal whose quota a websocket counts against: its
// API token, or for credentials without one (JWTs) its user.
func quotaKey(p *auth.Principal) string {
	if p.TokenID != "" {
		return "token:" + p.TokenID
	}
	return "user:" + p.UserID
}

// openConn counts a connection of key, unless key holds the most already.
func (q *wsQuotas) openConn(key string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	u := q.by[key]
	if u == nil {
		u = &wsUsage{}
		q.by[key] = u
	}
	if u.conns >= q.maxConns {
		return false
	}
	u.conns++
	return true
}

func (q *wsQuotas) closeConn(key string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if u := q.by[key]; u != nil {
		u.conns--
		q.forget(key, u)
	}
}

// startOp counts an operation of key, unless key runs the most already.
func (q *wsQuotas) startOp(key string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	u := q.by[key]
	if u == nil || u.ops >= q.maxOps {
		return false
	}
	u.ops++
	return true
}

func (q *wsQuotas) endOp(key string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if u := q.by[key]; u != nil {
		u.ops--
		q.forget(key, u)
	}
}

// forget drops the entry of a principal that holds nothing, so the map holds
// only principals with open websockets.
func (q *wsQuotas) forget(key string, u *wsUsage) {
	if u.conns <= 0 && u.ops <= 0 {
		delete(q.by, key)
	}
}

// usage reports what key holds (tests).
func (q *wsQuotas) usage(key string) (conns, ops int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if u := q.by[key]; u != nil {
		return u.conns, u.ops
	}
	return 0, 0
}

// Reasons of taskgraph_websocket_refusals_total.
const (
	refusedConnectionsPerUser      = "connections_per_user"
	refusedOperationsPerUser       = "operations_per_user"
	refusedOperationsPerConnection = "operations_per_connection"
)
