package model

import "github.com/taskgraph/taskgraph/internal/domain"

// Connections of agent sessions (graph/schema/sessions.graphqls).

// AgentSessionEdge is one agent session of a AgentSessionConnection.
type AgentSessionEdge struct {
	Cursor string
	Node   *domain.AgentSession
}

// AgentSessionConnection pages agent sessions.
type AgentSessionConnection struct{ conn[*domain.AgentSession] }

// NewAgentSessionConnection wraps a page of agent sessions.
func NewAgentSessionConnection(p domain.Page[*domain.AgentSession]) *AgentSessionConnection {
	return &AgentSessionConnection{conn[*domain.AgentSession]{p}}
}

// Edges of the page.
func (c *AgentSessionConnection) Edges() []*AgentSessionEdge {
	return edges(c.page, func(cur string, n *domain.AgentSession) *AgentSessionEdge { return &AgentSessionEdge{cur, n} })
}

// AgentSessionStateEdge is one state snapshot of a AgentSessionStateConnection.
type AgentSessionStateEdge struct {
	Cursor string
	Node   *domain.AgentSessionState
}

// AgentSessionStateConnection pages state snapshots.
type AgentSessionStateConnection struct {
	conn[*domain.AgentSessionState]
}

// NewAgentSessionStateConnection wraps a page of state snapshots.
func NewAgentSessionStateConnection(p domain.Page[*domain.AgentSessionState]) *AgentSessionStateConnection {
	return &AgentSessionStateConnection{conn[*domain.AgentSessionState]{p}}
}

// Edges of the page.
func (c *AgentSessionStateConnection) Edges() []*AgentSessionStateEdge {
	return edges(c.page, func(cur string, n *domain.AgentSessionState) *AgentSessionStateEdge {
		return &AgentSessionStateEdge{cur, n}
	})
}

// ReActStepEdge is one ReAct step of a ReActStepConnection.
type ReActStepEdge struct {
	Cursor string
	Node   *domain.ReActStep
}

// ReActStepConnection pages ReAct steps.
type ReActStepConnection struct{ conn[*domain.ReActStep] }

// NewReActStepConnection wraps a page of ReAct steps.
func NewReActStepConnection(p domain.Page[*domain.ReActStep]) *ReActStepConnection {
	return &ReActStepConnection{conn[*domain.ReActStep]{p}}
}

// Edges of the page.
func (c *ReActStepConnection) Edges() []*ReActStepEdge {
	return edges(c.page, func(cur string, n *domain.ReActStep) *ReActStepEdge { return &ReActStepEdge{cur, n} })
}

// LessonEdge is one lesson of a LessonConnection.
type LessonEdge struct {
	Cursor string
	Node   *domain.Lesson
}

// LessonConnection pages lessons.
type LessonConnection struct{ conn[*domain.Lesson] }

// NewLessonConnection wraps a page of lessons.
func NewLessonConnection(p domain.Page[*domain.Lesson]) *LessonConnection {
	return &LessonConnection{conn[*domain.Lesson]{p}}
}

// Edges of the page.
func (c *LessonConnection) Edges() []*LessonEdge {
	return edges(c.page, func(cur string, n *domain.Lesson) *LessonEdge { return &LessonEdge{cur, n} })
}
