package store

import (
	"context"

	"github.com/taskgraph/taskgraph/internal/domain"
)

// HeartbeatsByIDs loads recorded heartbeats by id.
func (q RunQueries) HeartbeatsByIDs(ctx context.Context, ids []string) ([]*domain.AgentHeartbeat, error) {
	return byIDs[domain.AgentHeartbeat](ctx, q.Q, "agent_heartbeats", ids)
}

func heartbeatPageQuery(agents []string, page domain.PageArgs) *pageQuery[*domain.AgentHeartbeat] {
	return &pageQuery[*domain.AgentHeartbeat]{
		selectCols: "h.*", from: "agent_heartbeats h", idCol: "h.id",
		key:       sortKey{col: "h.recorded_at", kind: keyTime, desc: true},
		keyOf:     func(h *domain.AgentHeartbeat) any { return h.RecordedAt },
		idOf:      func(h *domain.AgentHeartbeat) string { return h.ID },
		parentCol: "h.agent_id", parents: agents,
		parentOf: func(h *domain.AgentHeartbeat) string { return h.AgentID },
		page:     page,
	}
}

// HeartbeatsOfAgents pages the recorded heartbeats of agents, newest first
// (ties by id), one page per agent in one statement.
func (q RunQueries) HeartbeatsOfAgents(ctx context.Context, agents []string, page domain.PageArgs) (map[string]domain.Page[*domain.AgentHeartbeat], error) {
	return heartbeatPageQuery(agents, page).fetch(ctx, q.Q)
}

// CountHeartbeatsOfAgents counts the recorded heartbeats of each agent.
func (q RunQueries) CountHeartbeatsOfAgents(ctx context.Context, agents []string) (map[string]int, error) {
	return heartbeatPageQuery(agents, domain.PageArgs{}).count(ctx, q.Q)
}
