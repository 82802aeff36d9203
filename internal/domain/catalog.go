package domain

import (
	"fmt"
	"time"
)

// The catalog (issue 5): how the canonical actions of a human-facing
// application (a Suite) bind to the tools of an MCP server, parameter by
// parameter, and how recorded traces become training examples built against
// one such binding. Catalog entities are global, not per project.

// Kinds of catalog node.
const (
	KindSuite            Kind = "Suite"
	KindAction           Kind = "Action"
	KindActionParameter  Kind = "ActionParameter"
	KindMcpServer        Kind = "McpServer"
	KindTool             Kind = "Tool"
	KindToolParameter    Kind = "ToolParameter"
	KindActionToolMap    Kind = "ActionToolMap"
	KindMapping          Kind = "ActionToolMapping"
	KindParameterMapping Kind = "ActionToolParameterMapping"
	KindModel            Kind = "Model"
	KindTraceSession     Kind = "TraceSession"
	KindExample          Kind = "Example"
)

// Provider is who makes a model.
type Provider string

const (
	ProviderOpenAI    Provider = "OPENAI"
	ProviderAnthropic Provider = "ANTHROPIC"
	ProviderGoogle    Provider = "GOOGLE"
	ProviderMeta      Provider = "META"
	ProviderMistral   Provider = "MISTRAL"
	ProviderOther     Provider = "OTHER"
)

// Valid reports whether p is a known provider.
func (p Provider) Valid() bool {
	switch p {
	case ProviderOpenAI, ProviderAnthropic, ProviderGoogle, ProviderMeta, ProviderMistral, ProviderOther:
		return true
	}
	return false
}

// ParameterType is the type of an action or tool parameter.
type ParameterType string

const (
	ParamString  ParameterType = "STRING"
	ParamNumber  ParameterType = "NUMBER"
	ParamInteger ParameterType = "INTEGER"
	ParamBoolean ParameterType = "BOOLEAN"
	ParamObject  ParameterType = "OBJECT"
	ParamArray   ParameterType = "ARRAY"
)

// Valid reports whether t is a known parameter type.
func (t ParameterType) Valid() bool {
	switch t {
	case ParamString, ParamNumber, ParamInteger, ParamBoolean, ParamObject, ParamArray:
		return true
	}
	return false
}

// Feeds reports whether a value of an action parameter of type t may feed a tool
// parameter of type to: equal types, or an INTEGER into a NUMBER (every integer
// is a number; not every number is an integer). Nothing else crosses.
func (t ParameterType) Feeds(to ParameterType) bool {
	return t == to || (t == ParamInteger && to == ParamNumber)
}

// ExampleStatus is an example's place in its processing lifecycle.
type ExampleStatus string

const (
	ExamplePending    ExampleStatus = "PENDING"
	ExampleProcessing ExampleStatus = "PROCESSING"
	ExampleCompleted  ExampleStatus = "COMPLETED"
	ExampleFailed     ExampleStatus = "FAILED"
)

// exampleTransitions: a worker claims a PENDING example (PROCESSING) and
// completes or fails it; a PENDING example may also be failed before anyone
// claims it. COMPLETED and FAILED are final.
var exampleTransitions = map[ExampleStatus][]ExampleStatus{
	ExamplePending:    {ExampleProcessing, ExampleFailed},
	ExampleProcessing: {ExampleCompleted, ExampleFailed},
}

// CheckExampleTransition returns INVALID_TRANSITION unless from -> to is allowed.
func CheckExampleTransition(from, to ExampleStatus) error {
	for _, s := range exampleTransitions[from] {
		if s == to {
			return nil
		}
	}
	msg := fmt.Sprintf("an example cannot move from %s to %s", from, to)
	switch {
	case from == ExampleCompleted || from == ExampleFailed:
		msg = fmt.Sprintf("the example is %s, which is final", from)
	case to == ExampleCompleted:
		msg = "only a PROCESSING example can be completed: claim it first"
	}
	return &Error{Code: CodeInvalidTransition, Message: msg,
		Details: map[string]any{"from": string(from), "to": string(to)}}
}

// Suite is a human-facing application (e.g. Gmail) and its canonical actions.
type Suite struct {
	ID        string    `db:"id"`
	Name      string    `db:"name"`
	CreatedAt time.Time `db:"created_at"`
	UpdatedAt time.Time `db:"updated_at"`
}

// Action is a canonical action of a suite.
type Action struct {
	ID          string    `db:"id"`
	SuiteID     string    `db:"suite_id"`
	Name        string    `db:"name"`
	Description string    `db:"description"`
	CreatedAt   time.Time `db:"created_at"`
	UpdatedAt   time.Time `db:"updated_at"`
}

// ActionParameter is one input of an action.
type ActionParameter struct {
	ID          string        `db:"id"`
	ActionID    string        `db:"action_id"`
	Name        string        `db:"name"`
	Type        ParameterType `db:"type"`
	Required    bool          `db:"required"`
	Description string        `db:"description"`
	Position    int           `db:"position"`
	CreatedAt   time.Time     `db:"created_at"`
}

// McpServer is an agent-facing tool server.
type McpServer struct {
	ID        string    `db:"id"`
	Name      string    `db:"name"`
	CreatedAt time.Time `db:"created_at"`
	UpdatedAt time.Time `db:"updated_at"`
}

// Tool is an operation an agent can invoke on an MCP server.
type Tool struct {
	ID          string    `db:"id"`
	McpServerID string    `db:"mcp_server_id"`
	Name        string    `db:"name"`
	Description string    `db:"description"`
	InputSchema JSON      `db:"input_schema"`
	CreatedAt   time.Time `db:"created_at"`
	UpdatedAt   time.Time `db:"updated_at"`
}

// ToolParameter is one input of a tool: a top-level property of its input schema.
type ToolParameter struct {
	ID          string        `db:"id"`
	ToolID      string        `db:"tool_id"`
	Name        string        `db:"name"`
	Type        ParameterType `db:"type"`
	Required    bool          `db:"required"`
	Description string        `db:"description"`
	Position    int           `db:"position"`
	JSONSchema  JSON          `db:"json_schema"`
	CreatedAt   time.Time     `db:"created_at"`
}

// ActionToolMap binds a suite's actions to an MCP server's tools. Version rises
// by one on every change to its mappings.
type ActionToolMap struct {
	ID          string    `db:"id"`
	SuiteID     string    `db:"suite_id"`
	McpServerID string    `db:"mcp_server_id"`
	Version     int       `db:"version"`
	CreatedAt   time.Time `db:"created_at"`
	UpdatedAt   time.Time `db:"updated_at"`
}

// ActionToolMapping maps one action of the map's suite to one tool of its server.
type ActionToolMapping struct {
	ID              string    `db:"id"`
	ActionToolMapID string    `db:"action_tool_map_id"`
	ActionID        string    `db:"action_id"`
	ToolID          string    `db:"tool_id"`
	CreatedAt       time.Time `db:"created_at"`
}

// ActionToolParameterMapping feeds a tool parameter from an action parameter.
type ActionToolParameterMapping struct {
	ID                  string    `db:"id"`
	ActionToolMappingID string    `db:"action_tool_mapping_id"`
	ActionParameterID   string    `db:"action_parameter_id"`
	ToolParameterID     string    `db:"tool_parameter_id"`
	CreatedAt           time.Time `db:"created_at"`
}

// Model is an LLM or policy, by provider and name.
type Model struct {
	ID        string    `db:"id"`
	Provider  Provider  `db:"provider"`
	Name      string    `db:"name"`
	CreatedAt time.Time `db:"created_at"`
}

// TraceSession is one trace upload of a user in a suite (the data model's
// "Session"); StoragePath is set once input_events.jsonl is uploaded.
type TraceSession struct {
	ID          string     `db:"id"`
	UserID      string     `db:"user_id"`
	SuiteID     string     `db:"suite_id"`
	Description string     `db:"description"`
	StoragePath *string    `db:"storage_path"`
	SizeBytes   *int       `db:"size_bytes"`
	EventCount  *int       `db:"event_count"`
	UploadedAt  *time.Time `db:"uploaded_at"`
	CreatedAt   time.Time  `db:"created_at"`
}

// Example is training data derived from a session with one model and map.
type Example struct {
	ID                   string        `db:"id"`
	SessionID            string        `db:"session_id"`
	ModelID              string        `db:"model_id"`
	ActionToolMapID      string        `db:"action_tool_map_id"`
	ActionToolMapVersion int           `db:"action_tool_map_version"`
	ModelConfiguration   JSON          `db:"model_configuration"`
	StoragePath          *string       `db:"storage_path"`
	Status               ExampleStatus `db:"status"`
	FailureReason        *string       `db:"failure_reason"`
	ConversationCount    *int          `db:"conversation_count"`
	SizeBytes            *int          `db:"size_bytes"`
	CreatedByID          *string       `db:"created_by"`
	ClaimedByID          *string       `db:"claimed_by"`
	CreatedAt            time.Time     `db:"created_at"`
	UpdatedAt            time.Time     `db:"updated_at"`
	ClaimedAt            *time.Time    `db:"claimed_at"`
	FinishedAt           *time.Time    `db:"finished_at"`
}

// SessionStoragePath is where a session's input_events.jsonl lives under the
// data directory (data model, "Storage Conventions").
func SessionStoragePath(sessionID string) string {
	return "sessions/" + sessionID + "/input_events.jsonl"
}

// ExampleStoragePath is where an example's messages.jsonl lives.
func ExampleStoragePath(exampleID string) string {
	return "examples/" + exampleID + "/messages.jsonl"
}

// GlobalID implementations of the catalog.
func (s *Suite) GlobalID() string                      { return GlobalID(KindSuite, s.ID) }
func (a *Action) GlobalID() string                     { return GlobalID(KindAction, a.ID) }
func (p *ActionParameter) GlobalID() string            { return GlobalID(KindActionParameter, p.ID) }
func (m *McpServer) GlobalID() string                  { return GlobalID(KindMcpServer, m.ID) }
func (t *Tool) GlobalID() string                       { return GlobalID(KindTool, t.ID) }
func (p *ToolParameter) GlobalID() string              { return GlobalID(KindToolParameter, p.ID) }
func (m *ActionToolMap) GlobalID() string              { return GlobalID(KindActionToolMap, m.ID) }
func (m *ActionToolMapping) GlobalID() string          { return GlobalID(KindMapping, m.ID) }
func (m *ActionToolParameterMapping) GlobalID() string { return GlobalID(KindParameterMapping, m.ID) }
func (m *Model) GlobalID() string                      { return GlobalID(KindModel, m.ID) }
func (s *TraceSession) GlobalID() string               { return GlobalID(KindTraceSession, s.ID) }
func (e *Example) GlobalID() string                    { return GlobalID(KindExample, e.ID) }

// Coverage says what an action tool map leaves open: actions of the suite with
// no mapping; required parameters of mapped tools that no action parameter
// feeds; required parameters of mapped actions that feed nothing. Parameters of
// unmapped actions are not listed: their action already is.
type Coverage struct {
	UnmappedActions        []*Action
	UnfedToolParameters    []*ToolParameter
	UnusedActionParameters []*ActionParameter
}

// IsComplete reports whether the map leaves nothing open.
func (c *Coverage) IsComplete() bool {
	return len(c.UnmappedActions) == 0 && len(c.UnfedToolParameters) == 0 && len(c.UnusedActionParameters) == 0
}
