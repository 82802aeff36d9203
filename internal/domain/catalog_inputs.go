package domain

import "io"

// Inputs of the catalog operations. Ids are
// global ids, decoded by the service.

// CreateSuiteInput creates a suite.
type CreateSuiteInput struct {
	Name string
}

// ParameterInput declares one parameter of an action or tool.
type ParameterInput struct {
	Name        string
	Type        ParameterType
	Required    *bool
	Description *string
}

// CreateActionInput creates an action with its parameters.
type CreateActionInput struct {
	SuiteID     string
	Name        string
	Description *string
	Parameters  []*ParameterInput
}

// CreateMcpServerInput creates an MCP server.
type CreateMcpServerInput struct {
	Name string
}

// CreateToolInput creates a tool with its parameters.
type CreateToolInput struct {
	McpServerID string
	Name        string
	Description *string
	Parameters  []*ParameterInput
}

// ImportMcpToolsInput imports an MCP tools/list result into a server.
type ImportMcpToolsInput struct {
	McpServerID string
	ToolsJSON   string
}

// CreateActionToolMapInput binds a suite to an MCP server.
type CreateActionToolMapInput struct {
	SuiteID     string
	McpServerID string
}

// AddActionToolMappingInput maps an action of the map's suite to a tool of its server.
type AddActionToolMappingInput struct {
	ActionToolMapID string
	ActionID        string
	ToolID          string
}

// AddParameterMappingInput feeds a tool parameter of a mapping from an action parameter.
type AddParameterMappingInput struct {
	MappingID         string
	ActionParameterID string
	ToolParameterID   string
}

// CreateModelInput creates a model.
type CreateModelInput struct {
	Provider Provider
	Name     string
}

// CreateTraceSessionInput creates a trace session of the caller in a suite.
type CreateTraceSessionInput struct {
	SuiteID     string
	Description *string
}

// CreateExampleInput creates a PENDING example.
type CreateExampleInput struct {
	SessionID          string
	ModelID            string
	ActionToolMapID    string
	ModelConfiguration JSON
}

// ClaimExampleInput claims one PENDING example for processing: the one named by
// ID, or else the oldest that matches the filters.
type ClaimExampleInput struct {
	ID              *string
	SuiteID         *string
	ModelID         *string
	ActionToolMapID *string
}

// FailExampleInput marks an example FAILED.
type FailExampleInput struct {
	ID     string
	Reason string
}

// ExampleFilter narrows the examples connection.
type ExampleFilter struct {
	Status          []ExampleStatus
	SuiteID         *string
	ModelID         *string
	ActionToolMapID *string
	SessionID       *string
}

// File is a file sent with a request (the GraphQL multipart request spec).
// Size is -1 when unknown.
type File struct {
	Filename string
	Size     int64
	Content  io.Reader
}
