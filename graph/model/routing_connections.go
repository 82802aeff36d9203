package model

import "github.com/taskgraph/taskgraph/internal/domain"

// Connections of routing and the function queue (graph/schema/routing.graphqls).

// RouterEdge is one node of a RouterConnection.
type RouterEdge struct {
	Cursor string
	Node   *domain.Router
}

// RouterConnection pages routers.
type RouterConnection struct{ conn[*domain.Router] }

// NewRouterConnection wraps a page of routers.
func NewRouterConnection(p domain.Page[*domain.Router]) *RouterConnection {
	return &RouterConnection{conn[*domain.Router]{p}}
}

// Edges of the page.
func (c *RouterConnection) Edges() []*RouterEdge {
	return edges(c.page, func(cur string, n *domain.Router) *RouterEdge { return &RouterEdge{cur, n} })
}

// RouterMessageEdge is one node of a RouterMessageConnection.
type RouterMessageEdge struct {
	Cursor string
	Node   *domain.RouterMessage
}

// RouterMessageConnection pages router messages.
type RouterMessageConnection struct{ conn[*domain.RouterMessage] }

// NewRouterMessageConnection wraps a page of router messages.
func NewRouterMessageConnection(p domain.Page[*domain.RouterMessage]) *RouterMessageConnection {
	return &RouterMessageConnection{conn[*domain.RouterMessage]{p}}
}

// Edges of the page.
func (c *RouterMessageConnection) Edges() []*RouterMessageEdge {
	return edges(c.page, func(cur string, n *domain.RouterMessage) *RouterMessageEdge { return &RouterMessageEdge{cur, n} })
}

// AgentMessageEdge is one node of a AgentMessageConnection.
type AgentMessageEdge struct {
	Cursor string
	Node   *domain.AgentMessage
}

// AgentMessageConnection pages messages of planners or workers.
type AgentMessageConnection struct{ conn[*domain.AgentMessage] }

// NewAgentMessageConnection wraps a page of messages of planners or workers.
func NewAgentMessageConnection(p domain.Page[*domain.AgentMessage]) *AgentMessageConnection {
	return &AgentMessageConnection{conn[*domain.AgentMessage]{p}}
}

// Edges of the page.
func (c *AgentMessageConnection) Edges() []*AgentMessageEdge {
	return edges(c.page, func(cur string, n *domain.AgentMessage) *AgentMessageEdge { return &AgentMessageEdge{cur, n} })
}

// QueueItemEdge is one node of a QueueItemConnection.
type QueueItemEdge struct {
	Cursor string
	Node   *domain.QueueItem
}

// QueueItemConnection pages queue items.
type QueueItemConnection struct{ conn[*domain.QueueItem] }

// NewQueueItemConnection wraps a page of queue items.
func NewQueueItemConnection(p domain.Page[*domain.QueueItem]) *QueueItemConnection {
	return &QueueItemConnection{conn[*domain.QueueItem]{p}}
}

// Edges of the page.
func (c *QueueItemConnection) Edges() []*QueueItemEdge {
	return edges(c.page, func(cur string, n *domain.QueueItem) *QueueItemEdge { return &QueueItemEdge{cur, n} })
}
