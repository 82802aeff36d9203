package model

import "github.com/taskgraph/taskgraph/internal/domain"

// TaskExecutionEdge is one row of a TaskExecutionConnection.
type TaskExecutionEdge struct {
	Cursor string
	Node   *domain.TaskExecution
}

// TaskExecutionConnection pages a task's executions.
type TaskExecutionConnection struct {
	conn[*domain.TaskExecution]
}

// NewTaskExecutionConnection wraps a page of executions.
func NewTaskExecutionConnection(p domain.Page[*domain.TaskExecution]) *TaskExecutionConnection {
	return &TaskExecutionConnection{conn[*domain.TaskExecution]{p}}
}

// Edges of the page.
func (c *TaskExecutionConnection) Edges() []*TaskExecutionEdge {
	return edges(c.page, func(cur string, n *domain.TaskExecution) *TaskExecutionEdge {
		return &TaskExecutionEdge{cur, n}
	})
}

// TaskTestResultEdge is one row of a TaskTestResultConnection.
type TaskTestResultEdge struct {
	Cursor string
	Node   *domain.TaskTestResult
}

// TaskTestResultConnection pages a task's test results.
type TaskTestResultConnection struct {
	conn[*domain.TaskTestResult]
}

// NewTaskTestResultConnection wraps a page of test results.
func NewTaskTestResultConnection(p domain.Page[*domain.TaskTestResult]) *TaskTestResultConnection {
	return &TaskTestResultConnection{conn[*domain.TaskTestResult]{p}}
}

// Edges of the page.
func (c *TaskTestResultConnection) Edges() []*TaskTestResultEdge {
	return edges(c.page, func(cur string, n *domain.TaskTestResult) *TaskTestResultEdge {
		return &TaskTestResultEdge{cur, n}
	})
}
