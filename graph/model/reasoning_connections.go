package model

import "github.com/taskgraph/taskgraph/internal/domain"

// Connections of reasoning records (graph/schema/reasoning.graphqls).

// ReasoningExecutionEdge is one execution of a ReasoningExecutionConnection.
type ReasoningExecutionEdge struct {
	Cursor string
	Node   *domain.ReasoningExecution
}

// ReasoningExecutionConnection pages reasoning executions.
type ReasoningExecutionConnection struct {
	conn[*domain.ReasoningExecution]
}

// NewReasoningExecutionConnection wraps a page of executions.
func NewReasoningExecutionConnection(p domain.Page[*domain.ReasoningExecution]) *ReasoningExecutionConnection {
	return &ReasoningExecutionConnection{conn[*domain.ReasoningExecution]{p}}
}

// Edges of the page.
func (c *ReasoningExecutionConnection) Edges() []*ReasoningExecutionEdge {
	return edges(c.page, func(cur string, n *domain.ReasoningExecution) *ReasoningExecutionEdge {
		return &ReasoningExecutionEdge{cur, n}
	})
}
