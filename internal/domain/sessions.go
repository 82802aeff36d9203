package domain

import (
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"time"
)

// Agent sessions: where a ReAct agent's work lives between its steps (its
// versioned state, its todo lists, its thoughts, actions and observations),
// and the lessons agents keep across sessions.

// Kinds of the session entities' global ids.
const (
	KindAgentSession      Kind = "AgentSession"
	KindAgentSessionState Kind = "AgentSessionState"
	KindTodoList          Kind = "TodoList"
	KindReActStep         Kind = "ReActStep"
	KindLesson            Kind = "Lesson"
)

// Limits of what a client sends to the session operations.
const (
	// MaxSessionStateBytes bounds a session's state (after a merge patch).
	MaxSessionStateBytes = 1 << 20
	// MaxStepJSONBytes bounds a ReAct step's actionData and observation.
	MaxStepJSONBytes = 1 << 20
	MaxMissionLen    = 10_000
	MaxProfileLen    = 100
	MaxStepTextLen   = 100_000
	MaxTodoItems     = 200
	MaxCriteria      = 50
	MaxCriterionLen  = 2_000
	MaxToolNameLen   = 200
	MaxLessonTextLen = 10_000
	MaxLessonQuery   = 1_000
)

// AgentSessionStatus is where a session is in its lifecycle.
type AgentSessionStatus string

const (
	SessionPending    AgentSessionStatus = "PENDING"
	SessionInProgress AgentSessionStatus = "IN_PROGRESS"
	SessionCompleted  AgentSessionStatus = "COMPLETED"
	SessionFailed     AgentSessionStatus = "FAILED"
)

// AgentSessionStatuses lists every session status, in lifecycle order.
var AgentSessionStatuses = []AgentSessionStatus{SessionPending, SessionInProgress, SessionCompleted, SessionFailed}

// CheckSessionStatusFilter bounds the status filter of a sessions query:
// BAD_USER_INPUT (field status) for more entries than there are statuses.
func CheckSessionStatusFilter(statuses []AgentSessionStatus) error {
	if len(statuses) > len(AgentSessionStatuses) {
		return InputError("status", "at most %d statuses", len(AgentSessionStatuses))
	}
	return nil
}

// CheckSessionTransition allows PENDING → IN_PROGRESS → COMPLETED | FAILED.
func CheckSessionTransition(from, to AgentSessionStatus) error {
	ok := from == SessionPending && to == SessionInProgress ||
		from == SessionInProgress && (to == SessionCompleted || to == SessionFailed)
	if ok {
		return nil
	}
	return &Error{Code: CodeInvalidTransition, Field: "status",
		Message: fmt.Sprintf("a session cannot move from %s to %s", from, to),
		Details: map[string]any{"from": string(from), "to": string(to)}}
}

// AgentSession is one agent's execution of a mission.
type AgentSession struct {
	ID           string             `db:"id"`
	ProjectID    string             `db:"project_id"`
	UserID       string             `db:"user_id"`
	Mission      string             `db:"mission"`
	Status       AgentSessionStatus `db:"status"`
	Profile      string             `db:"profile"`
	TaskID       *string            `db:"task_id"`
	AgentID      *string            `db:"agent_id"`
	RunID        *string            `db:"run_id"`
	State        JSON               `db:"state"`
	StateVersion int                `db:"state_version"`
	LastStepID   int                `db:"last_step_id"`
	CreatedAt    time.Time          `db:"created_at"`
	UpdatedAt    time.Time          `db:"updated_at"`
}

// GlobalID is the id clients see.
func (s *AgentSession) GlobalID() string { return GlobalID(KindAgentSession, s.ID) }

// AgentSessionState is one saved version of a session's state.
type AgentSessionState struct {
	ID        string    `db:"id"`
	SessionID string    `db:"session_id"`
	Version   int       `db:"version"`
	State     JSON      `db:"state"`
	CreatedAt time.Time `db:"created_at"`
}

// GlobalID is the id clients see.
func (s *AgentSessionState) GlobalID() string { return GlobalID(KindAgentSessionState, s.ID) }

// TodoListStatus is the state of a plan.
type TodoListStatus string

const (
	TodoListActive    TodoListStatus = "ACTIVE"
	TodoListCompleted TodoListStatus = "COMPLETED"
	TodoListAbandoned TodoListStatus = "ABANDONED"
)

// TodoItemStatus is the state of one item of a plan.
type TodoItemStatus string

const (
	TodoPending    TodoItemStatus = "PENDING"
	TodoInProgress TodoItemStatus = "IN_PROGRESS"
	TodoCompleted  TodoItemStatus = "COMPLETED"
	TodoFailed     TodoItemStatus = "FAILED"
	TodoSkipped    TodoItemStatus = "SKIPPED"
)

// done reports whether an item no longer holds up those that depend on it.
func (s TodoItemStatus) done() bool { return s == TodoCompleted || s == TodoSkipped }

// ToolExecutionResult is what running an item's tool gave.
type ToolExecutionResult struct {
	Success    bool     `json:"success"`
	Output     JSON     `json:"output,omitempty"`
	Error      *string  `json:"error,omitempty"`
	DurationMs *float64 `json:"durationMs,omitempty"`
}

// TodoItem is one step of a plan; Position is its index in the list.
type TodoItem struct {
	Position           int                  `json:"position"`
	Description        string               `json:"description"`
	AcceptanceCriteria []string             `json:"acceptanceCriteria"`
	Dependencies       []int                `json:"dependencies"`
	Status             TodoItemStatus       `json:"status"`
	ChosenTool         *string              `json:"chosenTool,omitempty"`
	ExecutionResult    *ToolExecutionResult `json:"executionResult,omitempty"`
}

// TodoItems are a list's items, kept in one JSON column.
type TodoItems []*TodoItem

// Value stores the items as a JSON array.
func (t TodoItems) Value() (driver.Value, error) {
	if t == nil {
		return "[]", nil
	}
	b, err := json.Marshal([]*TodoItem(t))
	return string(b), err
}

// Scan reads the JSON array.
func (t *TodoItems) Scan(src any) error {
	b, err := jsonBytes(src)
	if err != nil || b == nil {
		*t = TodoItems{}
		return err
	}
	var out []*TodoItem
	if err := json.Unmarshal(b, &out); err != nil {
		return fmt.Errorf("scan TodoItems: %w", err)
	}
	*t = out
	return nil
}

// TodoList is a plan for a session's mission.
type TodoList struct {
	ID        string         `db:"id"`
	SessionID string         `db:"session_id"`
	Mission   string         `db:"mission"`
	Status    TodoListStatus `db:"status"`
	Version   int            `db:"version"`
	Items     TodoItems      `db:"items"`
	CreatedAt time.Time      `db:"created_at"`
	UpdatedAt time.Time      `db:"updated_at"`
}

// GlobalID is the id clients see.
func (l *TodoList) GlobalID() string { return GlobalID(KindTodoList, l.ID) }

// ReActActionType is the kind of decision a step made.
type ReActActionType string

const (
	ActionToolCall ReActActionType = "TOOL_CALL"
	ActionAskUser  ReActActionType = "ASK_USER"
	ActionComplete ReActActionType = "COMPLETE"
	ActionReplan   ReActActionType = "REPLAN"
)

// ReActStep is one thought → action → observation of a session's loop.
type ReActStep struct {
	ID          string           `db:"id"`
	SessionID   string           `db:"session_id"`
	StepID      int              `db:"step_id"`
	Thought     *string          `db:"thought"`
	Action      *string          `db:"action"`
	ActionType  *ReActActionType `db:"action_type"`
	ActionData  JSON             `db:"action_data"`
	Observation JSON             `db:"observation"`
	Success     *bool            `db:"success"`
	Error       *string          `db:"error"`
	Timestamp   time.Time        `db:"recorded_at"`
}

// GlobalID is the id clients see.
func (s *ReActStep) GlobalID() string { return GlobalID(KindReActStep, s.ID) }

// Lesson is something an agent learnt, for later sessions. Without a project
// it is global: every caller sees it.
type Lesson struct {
	ID         string    `db:"id"`
	ProjectID  *string   `db:"project_id"`
	SessionID  *string   `db:"session_id"`
	Context    string    `db:"context"`
	WhatFailed *string   `db:"what_failed"`
	WhatWorked string    `db:"what_worked"`
	Lesson     string    `db:"lesson"`
	ToolName   *string   `db:"tool_name"`
	Confidence float64   `db:"confidence"`
	DedupeKey  string    `db:"dedupe_key"`
	CreatedAt  time.Time `db:"created_at"`
	// Reinforcements counts the times the lesson was recorded (1: once).
	Reinforcements int     `db:"reinforcements"`
	Embedding      []byte  `db:"embedding"`
	EmbeddingModel *string `db:"embedding_model"`
}

// GlobalID is the id clients see.
func (l *Lesson) GlobalID() string { return GlobalID(KindLesson, l.ID) }

// EmbeddingVector decodes the stored embedding (see DecodeEmbedding).
func (l *Lesson) EmbeddingVector() []float64 { return DecodeEmbedding(l.Embedding) }

// Inputs of the session operations. Ids are global ids, decoded by the service.

// CreateAgentSessionInput opens a session.
type CreateAgentSessionInput struct {
	ProjectID string
	Mission   string
	Profile   *string
	TaskID    *string
	AgentID   *string
	State     *JSON
}

// SetAgentSessionStatusInput moves a session along its lifecycle.
type SetAgentSessionStatusInput struct {
	ID     string
	Status AgentSessionStatus
}

// SaveAgentSessionStateInput stores a new version of a session's state:
// exactly one of State (the whole state) and Patch (an RFC 7396 merge patch).
type SaveAgentSessionStateInput struct {
	SessionID       string
	ExpectedVersion int
	State           *JSON
	Patch           *JSON
}

// PruneAgentSessionStatesInput keeps a session's newest KeepLast snapshots.
type PruneAgentSessionStatesInput struct {
	SessionID string
	KeepLast  int
}

// TodoItemInput is one item of a new todo list.
type TodoItemInput struct {
	Description        string
	AcceptanceCriteria []string
	Dependencies       []int
}

// CreateTodoListInput gives a session a new plan.
type CreateTodoListInput struct {
	SessionID string
	Mission   *string
	Items     []*TodoItemInput
}

// ToolExecutionResultInput is the result of an item's tool.
type ToolExecutionResultInput struct {
	Success    bool
	Output     *JSON
	Error      *string
	DurationMs *float64
}

// UpdateTodoItemInput changes one item of a list.
type UpdateTodoItemInput struct {
	TodoListID      string
	Position        int
	ExpectedVersion *int
	Status          *TodoItemStatus
	ChosenTool      *string
	ExecutionResult *ToolExecutionResultInput
}

// RecordReActStepInput appends a step to a session.
type RecordReActStepInput struct {
	SessionID   string
	Thought     *string
	Action      *string
	ActionType  *ReActActionType
	ActionData  *JSON
	Observation *JSON
	Success     *bool
	Error       *string
}

// RecordLessonInput records a lesson.
type RecordLessonInput struct {
	ProjectID  *string
	SessionID  *string
	Context    string
	WhatFailed *string
	WhatWorked string
	Lesson     string
	ToolName   *string
	Confidence float64
	// Embedding, with EmbeddingModel, is the lesson's vector.
	Embedding      []float64
	EmbeddingModel *string
}

// LessonFilter selects lessons (the lessons query).
type LessonFilter struct {
	ProjectID     *string // nil: every visible lesson
	Query         string  // full-text; empty: none
	ToolName      *string
	MinConfidence *float64
}
