package domain

import (
	"bytes"
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
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
}

// GlobalID is the id clients see.
func (l *Lesson) GlobalID() string { return GlobalID(KindLesson, l.ID) }

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
}

// LessonFilter selects lessons (the lessons query).
type LessonFilter struct {
	ProjectID     *string // nil: every visible lesson
	Query         string  // full-text; empty: none
	ToolName      *string
	MinConfidence *float64
}

// MergePatch applies an RFC 7396 JSON merge patch to doc and returns the
// result: an object patch merges key by key (null removes a key, objects
// merge recursively); any other patch replaces doc.
func MergePatch(doc, patch JSON) (JSON, error) {
	var p any
	if err := decodeJSON(patch, &p); err != nil {
		return nil, InputError("patch", "not JSON: %v", err)
	}
	var d any
	if len(doc) > 0 {
		if err := decodeJSON(doc, &d); err != nil {
			return nil, fmt.Errorf("stored state: %w", err)
		}
	}
	out, err := json.Marshal(mergeValue(d, p))
	if err != nil {
		return nil, err
	}
	return JSON(out), nil
}

func decodeJSON(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber() // numbers stay as written
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("trailing data")
	}
	return nil
}

func mergeValue(target, patch any) any {
	pm, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	tm, ok := target.(map[string]any)
	if !ok {
		tm = map[string]any{}
	}
	for k, v := range pm {
		if v == nil {
			delete(tm, k)
			continue
		}
		tm[k] = mergeValue(tm[k], v)
	}
	return tm
}

// CheckStateSize is LIMIT_EXCEEDED for a state above MaxSessionStateBytes.
func CheckStateSize(field string, state JSON) error {
	if len(state) > MaxSessionStateBytes {
		return &Error{Code: CodeLimitExceeded, Field: field,
			Message: fmt.Sprintf("a session state is at most %d bytes (this one is %d)", MaxSessionStateBytes, len(state)),
			Details: map[string]any{"max": MaxSessionStateBytes}}
	}
	return nil
}

// NewTodoItems checks a new list's items and numbers them 0..n-1: each
// dependency names another position, and the dependencies are acyclic
// (CYCLE_DETECTED, extensions.cycle the positions on the cycle).
func NewTodoItems(in []*TodoItemInput) (TodoItems, error) {
	if len(in) == 0 {
		return nil, InputError("items", "a todo list needs at least one item")
	}
	if len(in) > MaxTodoItems {
		return nil, &Error{Code: CodeLimitExceeded, Field: "items", Message: fmt.Sprintf("at most %d items", MaxTodoItems)}
	}
	items := make(TodoItems, len(in))
	for i, it := range in {
		if it == nil {
			return nil, InputError(fmt.Sprintf("items[%d]", i), "an item is required")
		}
		desc, err := CheckText(fmt.Sprintf("items[%d].description", i), it.Description, MaxMissionLen, true)
		if err != nil {
			return nil, err
		}
		criteria, err := CheckList(fmt.Sprintf("items[%d].acceptanceCriteria", i), it.AcceptanceCriteria, MaxCriteria, MaxCriterionLen)
		if err != nil {
			return nil, err
		}
		if criteria == nil {
			criteria = []string{}
		}
		deps := []int{}
		for _, d := range it.Dependencies {
			if d < 0 || d >= len(in) || d == i {
				return nil, InputError(fmt.Sprintf("items[%d].dependencies", i),
					"dependency %d must name another item's position (0..%d)", d, len(in)-1)
			}
			if !slices.Contains(deps, d) {
				deps = append(deps, d)
			}
		}
		slices.Sort(deps)
		items[i] = &TodoItem{Position: i, Description: desc, AcceptanceCriteria: criteria, Dependencies: deps, Status: TodoPending}
	}
	if cycle := todoCycle(items); cycle != nil {
		return nil, &Error{Code: CodeCycleDetected, Field: "items",
			Message: "the items' dependencies form a cycle", Details: map[string]any{"cycle": cycle}}
	}
	return items, nil
}

// todoCycle returns the positions on a dependency cycle, in dependency order,
// or nil when there is none.
func todoCycle(items TodoItems) []int {
	const (
		white = iota
		grey
		black
	)
	color := make([]int, len(items))
	var stack []int
	var found []int
	var visit func(i int) bool
	visit = func(i int) bool {
		color[i] = grey
		stack = append(stack, i)
		for _, d := range items[i].Dependencies {
			switch color[d] {
			case grey:
				at := slices.Index(stack, d)
				found = slices.Clone(stack[at:])
				return true
			case white:
				if visit(d) {
					return true
				}
			}
		}
		stack = stack[:len(stack)-1]
		color[i] = black
		return false
	}
	for i := range items {
		if color[i] == white && visit(i) {
			return found
		}
	}
	return nil
}

// MoveTodoItem moves item pos of items to status to: PENDING → IN_PROGRESS
// (only when every dependency is COMPLETED or SKIPPED, else
// INVALID_TRANSITION with extensions.waitingOn), IN_PROGRESS → COMPLETED |
// FAILED, PENDING → SKIPPED, FAILED → PENDING.
func MoveTodoItem(items TodoItems, pos int, to TodoItemStatus) error {
	it := items[pos]
	from := it.Status
	allowed := from == TodoPending && (to == TodoInProgress || to == TodoSkipped) ||
		from == TodoInProgress && (to == TodoCompleted || to == TodoFailed) ||
		from == TodoFailed && to == TodoPending
	if !allowed {
		return &Error{Code: CodeInvalidTransition, Field: "status",
			Message: fmt.Sprintf("a todo item cannot move from %s to %s", from, to),
			Details: map[string]any{"from": string(from), "to": string(to)}}
	}
	if to == TodoInProgress {
		waiting := []int{}
		for _, d := range it.Dependencies {
			if !items[d].Status.done() {
				waiting = append(waiting, d)
			}
		}
		if len(waiting) > 0 {
			return &Error{Code: CodeInvalidTransition, Field: "status",
				Message: fmt.Sprintf("item %d waits on items %v", pos, waiting),
				Details: map[string]any{"from": string(from), "to": string(to), "waitingOn": waiting}}
		}
	}
	it.Status = to
	return nil
}

// TodoItemsDone reports whether every item is COMPLETED or SKIPPED.
func TodoItemsDone(items TodoItems) bool {
	for _, it := range items {
		if !it.Status.done() {
			return false
		}
	}
	return len(items) > 0
}

// SearchTerms splits a free-text query into the words a full-text index
// holds (letters and digits), lower-cased, without repeats, at most 32.
// Both databases search for any of them, so the query language of neither
// reaches the client.
func SearchTerms(q string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(q), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		if !slices.Contains(out, w) {
			out = append(out, w)
		}
		if len(out) == 32 {
			break
		}
	}
	return out
}
