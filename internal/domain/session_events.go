package domain

import (
	"encoding/json"
	"time"
	"unicode/utf8"
)

// The session kinds: one type per kind of a session's progress. As with the
// execution kinds (run_events.go), each type is both the GraphQL type of its
// kind and its stored payload: the embedded Event is the row, the other
// fields the payload's keys. The row's SessionID names the session; a session
// opened for a build agent also gives its events that agent's run, task and
// agent, so they flow in the run's stream too.

const (
	EventSessionStatusChanged ExecutionEventType = "SESSION_STATUS_CHANGED"
	EventSessionStateSaved    ExecutionEventType = "SESSION_STATE_SAVED"
	EventTodoListCreated      ExecutionEventType = "TODO_LIST_CREATED"
	EventTodoItemChanged      ExecutionEventType = "TODO_ITEM_CHANGED"
	EventReActStepRecorded    ExecutionEventType = "REACT_STEP_RECORDED"
	EventLessonRecorded       ExecutionEventType = "LESSON_RECORDED"
)

// SessionStatusChangedEvent: a session moved along its lifecycle.
type SessionStatusChangedEvent struct {
	Event `json:"-"`
	From  AgentSessionStatus `json:"from"`
	To    AgentSessionStatus `json:"to"`
}

// SessionStateSavedEvent: a session's state was saved as Version (1: the
// state it was created with).
type SessionStateSavedEvent struct {
	Event   `json:"-"`
	Version int `json:"version"`
}

// TodoListCreatedEvent: a session got a new plan (its ACTIVE one, if any,
// was abandoned in the same change).
type TodoListCreatedEvent struct {
	Event      `json:"-"`
	TodoListID string `json:"todoListId"`
	ItemCount  int    `json:"itemCount"`
}

// TodoItemChangedEvent: an item of a todo list changed; From and To are its
// status before and after (equal when only its tool or result changed).
type TodoItemChangedEvent struct {
	Event       `json:"-"`
	TodoListID  string         `json:"todoListId"`
	Position    int            `json:"position"`
	From        TodoItemStatus `json:"from"`
	To          TodoItemStatus `json:"to"`
	ListVersion int            `json:"listVersion"`
	ListStatus  TodoListStatus `json:"listStatus"`
}

// ReActStepRecordedEvent: a session's ReAct loop took step StepID. It
// carries the step's action data and error, and its observation cut to
// MaxEventObservation bytes (see NewReActStepRecorded).
type ReActStepRecordedEvent struct {
	Event                `json:"-"`
	StepID               int              `json:"stepId"`
	Thought              *string          `json:"thought,omitempty"`
	Action               *string          `json:"action,omitempty"`
	ActionType           *ReActActionType `json:"actionType,omitempty"`
	ActionData           json.RawMessage  `json:"actionData,omitempty"`
	Observation          json.RawMessage  `json:"observation,omitempty"`
	ObservationTruncated bool             `json:"observationTruncated,omitempty"`
	Success              *bool            `json:"success,omitempty"`
	Error                *string          `json:"error,omitempty"`
}

// MaxEventObservation bounds the observation a ReActStepRecorded event
// carries: 8 KB of its JSON text.
const MaxEventObservation = 8 << 10

// NewReActStepRecorded is the event of step being recorded in session s. An
// observation whose JSON text is over MaxEventObservation bytes is carried as
// a JSON string of that text's first bytes (cut on a character boundary),
// with ObservationTruncated; the step keeps the whole.
func NewReActStepRecorded(s *AgentSession, step *ReActStep, at time.Time) *Event {
	details := &ReActStepRecordedEvent{StepID: step.StepID, Thought: step.Thought, Action: step.Action,
		ActionType: step.ActionType, Success: step.Success, Error: step.Error}
	if len(step.ActionData) > 0 {
		details.ActionData = json.RawMessage(step.ActionData)
	}
	if obs := step.Observation; len(obs) > MaxEventObservation {
		cut := MaxEventObservation
		for cut > 0 && !utf8.RuneStart(obs[cut]) {
			cut--
		}
		b, _ := json.Marshal(string(obs[:cut]))
		details.Observation, details.ObservationTruncated = b, true
	} else if len(obs) > 0 {
		details.Observation = json.RawMessage(obs)
	}
	return SessionEvent(s, EventReActStepRecorded, at, details)
}

// LessonRecordedEvent: a lesson of the project was recorded.
type LessonRecordedEvent struct {
	Event      `json:"-"`
	LessonID   string  `json:"lessonId"`
	ToolName   *string `json:"toolName,omitempty"`
	Confidence float64 `json:"confidence"`
}

// newSessionKind is the empty decoded value of a session kind; nil for the
// other kinds.
func newSessionKind(t ExecutionEventType) ExecutionEvent {
	switch t {
	case EventSessionStatusChanged:
		return &SessionStatusChangedEvent{}
	case EventSessionStateSaved:
		return &SessionStateSavedEvent{}
	case EventTodoListCreated:
		return &TodoListCreatedEvent{}
	case EventTodoItemChanged:
		return &TodoItemChangedEvent{}
	case EventReActStepRecorded:
		return &ReActStepRecordedEvent{}
	case EventLessonRecorded:
		return &LessonRecordedEvent{}
	}
	return nil
}

// SessionEvent is an event of typ about session s, with details as payload:
// in s's project, naming s, and s's run, task and agent when it has them.
func SessionEvent(s *AgentSession, typ ExecutionEventType, at time.Time, details ExecutionEvent) *Event {
	b, err := json.Marshal(details)
	if err != nil {
		panic("domain: event payload: " + err.Error()) // plain structs: cannot happen
	}
	id := s.ID
	return &Event{ProjectID: s.ProjectID, SessionID: &id, RunID: s.RunID, TaskID: s.TaskID, AgentID: s.AgentID,
		Type: typ, Payload: JSON(b), OccurredAt: at}
}

// NewLessonRecorded is the event of lesson l being recorded in its project,
// about session s when the lesson came from one (s may be nil). A global
// lesson belongs to no project's log and has no event.
func NewLessonRecorded(l *Lesson, s *AgentSession, at time.Time) *Event {
	if l.ProjectID == nil {
		return nil
	}
	details := &LessonRecordedEvent{LessonID: l.ID, ToolName: l.ToolName, Confidence: l.Confidence}
	if s != nil && s.ProjectID == *l.ProjectID {
		return SessionEvent(s, EventLessonRecorded, at, details)
	}
	b, err := json.Marshal(details)
	if err != nil {
		panic("domain: event payload: " + err.Error())
	}
	return &Event{ProjectID: *l.ProjectID, Type: EventLessonRecorded, Payload: JSON(b), OccurredAt: at}
}
