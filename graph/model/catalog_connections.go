package model

import "github.com/taskgraph/taskgraph/internal/domain"

// Connections of the catalog (graph/schema/catalog.graphqls).

// SuiteEdge is one suite of a SuiteConnection.
type SuiteEdge struct {
	Cursor string
	Node   *domain.Suite
}

// SuiteConnection pages suites.
type SuiteConnection struct{ conn[*domain.Suite] }

// NewSuiteConnection wraps a page of suites.
func NewSuiteConnection(p domain.Page[*domain.Suite]) *SuiteConnection {
	return &SuiteConnection{conn[*domain.Suite]{p}}
}

// Edges of the page.
func (c *SuiteConnection) Edges() []*SuiteEdge {
	return edges(c.page, func(cur string, n *domain.Suite) *SuiteEdge { return &SuiteEdge{cur, n} })
}

// ActionEdge is one action of an ActionConnection.
type ActionEdge struct {
	Cursor string
	Node   *domain.Action
}

// ActionConnection pages actions.
type ActionConnection struct{ conn[*domain.Action] }

// NewActionConnection wraps a page of actions.
func NewActionConnection(p domain.Page[*domain.Action]) *ActionConnection {
	return &ActionConnection{conn[*domain.Action]{p}}
}

// Edges of the page.
func (c *ActionConnection) Edges() []*ActionEdge {
	return edges(c.page, func(cur string, n *domain.Action) *ActionEdge { return &ActionEdge{cur, n} })
}

// ActionParameterEdge is one action parameter of an ActionParameterConnection.
type ActionParameterEdge struct {
	Cursor string
	Node   *domain.ActionParameter
}

// ActionParameterConnection pages action parameters.
type ActionParameterConnection struct{ conn[*domain.ActionParameter] }

// NewActionParameterConnection wraps a page of action parameters.
func NewActionParameterConnection(p domain.Page[*domain.ActionParameter]) *ActionParameterConnection {
	return &ActionParameterConnection{conn[*domain.ActionParameter]{p}}
}

// Edges of the page.
func (c *ActionParameterConnection) Edges() []*ActionParameterEdge {
	return edges(c.page, func(cur string, n *domain.ActionParameter) *ActionParameterEdge { return &ActionParameterEdge{cur, n} })
}

// McpServerEdge is one MCP server of a McpServerConnection.
type McpServerEdge struct {
	Cursor string
	Node   *domain.McpServer
}

// McpServerConnection pages MCP servers.
type McpServerConnection struct{ conn[*domain.McpServer] }

// NewMcpServerConnection wraps a page of MCP servers.
func NewMcpServerConnection(p domain.Page[*domain.McpServer]) *McpServerConnection {
	return &McpServerConnection{conn[*domain.McpServer]{p}}
}

// Edges of the page.
func (c *McpServerConnection) Edges() []*McpServerEdge {
	return edges(c.page, func(cur string, n *domain.McpServer) *McpServerEdge { return &McpServerEdge{cur, n} })
}

// ToolEdge is one tool of a ToolConnection.
type ToolEdge struct {
	Cursor string
	Node   *domain.Tool
}

// ToolConnection pages tools.
type ToolConnection struct{ conn[*domain.Tool] }

// NewToolConnection wraps a page of tools.
func NewToolConnection(p domain.Page[*domain.Tool]) *ToolConnection {
	return &ToolConnection{conn[*domain.Tool]{p}}
}

// Edges of the page.
func (c *ToolConnection) Edges() []*ToolEdge {
	return edges(c.page, func(cur string, n *domain.Tool) *ToolEdge { return &ToolEdge{cur, n} })
}

// ToolParameterEdge is one tool parameter of a ToolParameterConnection.
type ToolParameterEdge struct {
	Cursor string
	Node   *domain.ToolParameter
}

// ToolParameterConnection pages tool parameters.
type ToolParameterConnection struct{ conn[*domain.ToolParameter] }

// NewToolParameterConnection wraps a page of tool parameters.
func NewToolParameterConnection(p domain.Page[*domain.ToolParameter]) *ToolParameterConnection {
	return &ToolParameterConnection{conn[*domain.ToolParameter]{p}}
}

// Edges of the page.
func (c *ToolParameterConnection) Edges() []*ToolParameterEdge {
	return edges(c.page, func(cur string, n *domain.ToolParameter) *ToolParameterEdge { return &ToolParameterEdge{cur, n} })
}

// ActionToolMapEdge is one action tool map of an ActionToolMapConnection.
type ActionToolMapEdge struct {
	Cursor string
	Node   *domain.ActionToolMap
}

// ActionToolMapConnection pages action tool maps.
type ActionToolMapConnection struct{ conn[*domain.ActionToolMap] }

// NewActionToolMapConnection wraps a page of action tool maps.
func NewActionToolMapConnection(p domain.Page[*domain.ActionToolMap]) *ActionToolMapConnection {
	return &ActionToolMapConnection{conn[*domain.ActionToolMap]{p}}
}

// Edges of the page.
func (c *ActionToolMapConnection) Edges() []*ActionToolMapEdge {
	return edges(c.page, func(cur string, n *domain.ActionToolMap) *ActionToolMapEdge { return &ActionToolMapEdge{cur, n} })
}

// ActionToolMappingEdge is one action tool mapping of an ActionToolMappingConnection.
type ActionToolMappingEdge struct {
	Cursor string
	Node   *domain.ActionToolMapping
}

// ActionToolMappingConnection pages action tool mappings.
type ActionToolMappingConnection struct {
	conn[*domain.ActionToolMapping]
}

// NewActionToolMappingConnection wraps a page of action tool mappings.
func NewActionToolMappingConnection(p domain.Page[*domain.ActionToolMapping]) *ActionToolMappingConnection {
	return &ActionToolMappingConnection{conn[*domain.ActionToolMapping]{p}}
}

// Edges of the page.
func (c *ActionToolMappingConnection) Edges() []*ActionToolMappingEdge {
	return edges(c.page, func(cur string, n *domain.ActionToolMapping) *ActionToolMappingEdge {
		return &ActionToolMappingEdge{cur, n}
	})
}

// ActionToolParameterMappingEdge is one parameter mapping of an ActionToolParameterMappingConnection.
type ActionToolParameterMappingEdge struct {
	Cursor string
	Node   *domain.ActionToolParameterMapping
}

// ActionToolParameterMappingConnection pages parameter mappings.
type ActionToolParameterMappingConnection struct {
	conn[*domain.ActionToolParameterMapping]
}

// NewActionToolParameterMappingConnection wraps a page of parameter mappings.
func NewActionToolParameterMappingConnection(p domain.Page[*domain.ActionToolParameterMapping]) *ActionToolParameterMappingConnection {
	return &ActionToolParameterMappingConnection{conn[*domain.ActionToolParameterMapping]{p}}
}

// Edges of the page.
func (c *ActionToolParameterMappingConnection) Edges() []*ActionToolParameterMappingEdge {
	return edges(c.page, func(cur string, n *domain.ActionToolParameterMapping) *ActionToolParameterMappingEdge {
		return &ActionToolParameterMappingEdge{cur, n}
	})
}

// ModelEdge is one model of a ModelConnection.
type ModelEdge struct {
	Cursor string
	Node   *domain.Model
}

// ModelConnection pages models.
type ModelConnection struct{ conn[*domain.Model] }

// NewModelConnection wraps a page of models.
func NewModelConnection(p domain.Page[*domain.Model]) *ModelConnection {
	return &ModelConnection{conn[*domain.Model]{p}}
}

// Edges of the page.
func (c *ModelConnection) Edges() []*ModelEdge {
	return edges(c.page, func(cur string, n *domain.Model) *ModelEdge { return &ModelEdge{cur, n} })
}

// TraceSessionEdge is one trace session of a TraceSessionConnection.
type TraceSessionEdge struct {
	Cursor string
	Node   *domain.TraceSession
}

// TraceSessionConnection pages trace sessions.
type TraceSessionConnection struct{ conn[*domain.TraceSession] }

// NewTraceSessionConnection wraps a page of trace sessions.
func NewTraceSessionConnection(p domain.Page[*domain.TraceSession]) *TraceSessionConnection {
	return &TraceSessionConnection{conn[*domain.TraceSession]{p}}
}

// Edges of the page.
func (c *TraceSessionConnection) Edges() []*TraceSessionEdge {
	return edges(c.page, func(cur string, n *domain.TraceSession) *TraceSessionEdge { return &TraceSessionEdge{cur, n} })
}

// ExampleEdge is one example of an ExampleConnection.
type ExampleEdge struct {
	Cursor string
	Node   *domain.Example
}

// ExampleConnection pages examples.
type ExampleConnection struct{ conn[*domain.Example] }

// NewExampleConnection wraps a page of examples.
func NewExampleConnection(p domain.Page[*domain.Example]) *ExampleConnection {
	return &ExampleConnection{conn[*domain.Example]{p}}
}

// Edges of the page.
func (c *ExampleConnection) Edges() []*ExampleEdge {
	return edges(c.page, func(cur string, n *domain.Example) *ExampleEdge { return &ExampleEdge{cur, n} })
}
