// Package model holds the GraphQL-only types: payloads (generated) and the Relay
// connections (here) that wrap a domain.Page.
package model

import (
	"context"

	"github.com/taskgraph/taskgraph/internal/domain"
)

// PageInfo is the Relay page information of a connection.
type PageInfo struct {
	HasNextPage     bool
	HasPreviousPage bool
	StartCursor     *string
	EndCursor       *string
}

func pageInfo[T any](p domain.Page[T]) *PageInfo {
	info := &PageInfo{HasNextPage: p.HasNextPage, HasPreviousPage: p.HasPreviousPage}
	if n := len(p.Cursors); n > 0 {
		info.StartCursor, info.EndCursor = &p.Cursors[0], &p.Cursors[n-1]
	}
	return info
}

func edges[T any, E any](p domain.Page[T], edge func(cursor string, node T) E) []E {
	out := make([]E, len(p.Items))
	for i, n := range p.Items {
		out[i] = edge(p.Cursors[i], n)
	}
	return out
}

// conn is the part every connection shares: the page and its total.
type conn[T any] struct {
	page domain.Page[T]
}

func (c conn[T]) PageInfo() *PageInfo { return pageInfo(c.page) }
func (c conn[T]) Nodes() []T          { return c.page.Items }
func (c conn[T]) TotalCount(ctx context.Context) (int, error) {
	if c.page.Total == nil {
		return len(c.page.Items), nil
	}
	return c.page.Total(ctx)
}

// TaskEdge is one task of a TaskConnection.
type TaskEdge struct {
	Cursor string
	Node   *domain.Task
}

// TaskConnection pages tasks.
type TaskConnection struct{ conn[*domain.Task] }

// NewTaskConnection wraps a page of tasks.
func NewTaskConnection(p domain.Page[*domain.Task]) *TaskConnection {
	return &TaskConnection{conn[*domain.Task]{p}}
}

// Edges of the page.
func (c *TaskConnection) Edges() []*TaskEdge {
	return edges(c.page, func(cur string, n *domain.Task) *TaskEdge { return &TaskEdge{cur, n} })
}

// ProjectEdge is one project of a ProjectConnection.
type ProjectEdge struct {
	Cursor string
	Node   *domain.Project
}

// ProjectConnection pages projects.
type ProjectConnection struct{ conn[*domain.Project] }

// NewProjectConnection wraps a page of projects.
func NewProjectConnection(p domain.Page[*domain.Project]) *ProjectConnection {
	return &ProjectConnection{conn[*domain.Project]{p}}
}

// Edges of the page.
func (c *ProjectConnection) Edges() []*ProjectEdge {
	return edges(c.page, func(cur string, n *domain.Project) *ProjectEdge { return &ProjectEdge{cur, n} })
}

// IdeaEdge is one idea of an IdeaConnection.
type IdeaEdge struct {
	Cursor string
	Node   *domain.Idea
}

// IdeaConnection pages ideas.
type IdeaConnection struct{ conn[*domain.Idea] }

// NewIdeaConnection wraps a page of ideas.
func NewIdeaConnection(p domain.Page[*domain.Idea]) *IdeaConnection {
	return &IdeaConnection{conn[*domain.Idea]{p}}
}

// Edges of the page.
func (c *IdeaConnection) Edges() []*IdeaEdge {
	return edges(c.page, func(cur string, n *domain.Idea) *IdeaEdge { return &IdeaEdge{cur, n} })
}

// TaskListEdge is one list of a TaskListConnection.
type TaskListEdge struct {
	Cursor string
	Node   *domain.TaskList
}

// TaskListConnection pages task lists.
type TaskListConnection struct{ conn[*domain.TaskList] }

// NewTaskListConnection wraps a page of task lists.
func NewTaskListConnection(p domain.Page[*domain.TaskList]) *TaskListConnection {
	return &TaskListConnection{conn[*domain.TaskList]{p}}
}

// Edges of the page.
func (c *TaskListConnection) Edges() []*TaskListEdge {
	return edges(c.page, func(cur string, n *domain.TaskList) *TaskListEdge { return &TaskListEdge{cur, n} })
}

// TaskListItemEdge is one item of a TaskListItemConnection.
type TaskListItemEdge struct {
	Cursor string
	Node   *domain.TaskListItem
}

// TaskListItemConnection pages task list items.
type TaskListItemConnection struct{ conn[*domain.TaskListItem] }

// NewTaskListItemConnection wraps a page of items.
func NewTaskListItemConnection(p domain.Page[*domain.TaskListItem]) *TaskListItemConnection {
	return &TaskListItemConnection{conn[*domain.TaskListItem]{p}}
}

// Edges of the page.
func (c *TaskListItemConnection) Edges() []*TaskListItemEdge {
	return edges(c.page, func(cur string, n *domain.TaskListItem) *TaskListItemEdge { return &TaskListItemEdge{cur, n} })
}

// TaskTemplateEdge is one template of a TaskTemplateConnection.
type TaskTemplateEdge struct {
	Cursor string
	Node   *domain.TaskTemplate
}

// TaskTemplateConnection pages task templates.
type TaskTemplateConnection struct{ conn[*domain.TaskTemplate] }

// NewTaskTemplateConnection wraps a page of templates.
func NewTaskTemplateConnection(p domain.Page[*domain.TaskTemplate]) *TaskTemplateConnection {
	return &TaskTemplateConnection{conn[*domain.TaskTemplate]{p}}
}

// Edges of the page.
func (c *TaskTemplateConnection) Edges() []*TaskTemplateEdge {
	return edges(c.page, func(cur string, n *domain.TaskTemplate) *TaskTemplateEdge { return &TaskTemplateEdge{cur, n} })
}

// ExecutionEventEdge is one event of an ExecutionEventConnection.
type ExecutionEventEdge struct {
	Cursor string
	Node   domain.ExecutionEvent
}

// ExecutionEventConnection pages execution events.
type ExecutionEventConnection struct{ conn[domain.ExecutionEvent] }

// NewExecutionEventConnection wraps a page of events.
func NewExecutionEventConnection(p domain.Page[domain.ExecutionEvent]) *ExecutionEventConnection {
	return &ExecutionEventConnection{conn[domain.ExecutionEvent]{p}}
}

// Edges of the page.
func (c *ExecutionEventConnection) Edges() []*ExecutionEventEdge {
	return edges(c.page, func(cur string, n domain.ExecutionEvent) *ExecutionEventEdge { return &ExecutionEventEdge{cur, n} })
}

// ParallelismAnalysisEdge is one row of a ParallelismAnalysisConnection.
type ParallelismAnalysisEdge struct {
	Cursor string
	Node   *domain.ParallelismAnalysis
}

// ParallelismAnalysisConnection pages parallelism analysis rows.
type ParallelismAnalysisConnection struct {
	conn[*domain.ParallelismAnalysis]
}

// NewParallelismAnalysisConnection wraps a page of analysis rows.
func NewParallelismAnalysisConnection(p domain.Page[*domain.ParallelismAnalysis]) *ParallelismAnalysisConnection {
	return &ParallelismAnalysisConnection{conn[*domain.ParallelismAnalysis]{p}}
}

// Edges of the page.
func (c *ParallelismAnalysisConnection) Edges() []*ParallelismAnalysisEdge {
	return edges(c.page, func(cur string, n *domain.ParallelismAnalysis) *ParallelismAnalysisEdge {
		return &ParallelismAnalysisEdge{cur, n}
	})
}

// HeartbeatRecordEdge is one row of a HeartbeatRecordConnection.
type HeartbeatRecordEdge struct {
	Cursor string
	Node   *domain.AgentHeartbeat
}

// HeartbeatRecordConnection pages an agent's recorded heartbeats.
type HeartbeatRecordConnection struct {
	conn[*domain.AgentHeartbeat]
}

// NewHeartbeatRecordConnection wraps a page of heartbeats.
func NewHeartbeatRecordConnection(p domain.Page[*domain.AgentHeartbeat]) *HeartbeatRecordConnection {
	return &HeartbeatRecordConnection{conn[*domain.AgentHeartbeat]{p}}
}

// Edges of the page.
func (c *HeartbeatRecordConnection) Edges() []*HeartbeatRecordEdge {
	return edges(c.page, func(cur string, n *domain.AgentHeartbeat) *HeartbeatRecordEdge {
		return &HeartbeatRecordEdge{cur, n}
	})
}
