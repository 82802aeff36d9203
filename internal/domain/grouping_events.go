package domain

import (
	"encoding/json"
	"time"
)

// The grouping domain's event kinds.
const (
	EventSuggestionCreated  ExecutionEventType = "SUGGESTION_CREATED"
	EventSuggestionResolved ExecutionEventType = "SUGGESTION_RESOLVED"
)

// SuggestionCreatedEvent: a grouping suggestion was made (SUGGESTION_CREATED).
type SuggestionCreatedEvent struct {
	Event        `json:"-"`
	SuggestionID string `json:"suggestionId"`
}

// SuggestionResolvedEvent: a suggestion was accepted, modified, rejected or
// expired (SUGGESTION_RESOLVED).
type SuggestionResolvedEvent struct {
	Event        `json:"-"`
	SuggestionID string                   `json:"suggestionId"`
	Status       GroupingSuggestionStatus `json:"status"`
}

func newGroupingKind(t ExecutionEventType) ExecutionEvent {
	switch t {
	case EventSuggestionCreated:
		return &SuggestionCreatedEvent{}
	case EventSuggestionResolved:
		return &SuggestionResolvedEvent{}
	}
	return nil
}

func suggestionEvent(s *GroupingSuggestion, typ ExecutionEventType, at time.Time, payload any) *Event {
	b, err := json.Marshal(payload)
	if err != nil {
		panic("domain: event payload: " + err.Error())
	}
	return &Event{ProjectID: s.ProjectID, TaskID: s.TriggerTaskID, Type: typ, Payload: JSON(b), OccurredAt: at}
}

// NewSuggestionCreated is the event of s being made.
func NewSuggestionCreated(s *GroupingSuggestion, at time.Time) *Event {
	return suggestionEvent(s, EventSuggestionCreated, at, SuggestionCreatedEvent{SuggestionID: s.ID})
}

// NewSuggestionResolved is the event of s leaving PENDING.
func NewSuggestionResolved(s *GroupingSuggestion, at time.Time) *Event {
	return suggestionEvent(s, EventSuggestionResolved, at, SuggestionResolvedEvent{SuggestionID: s.ID, Status: s.Status})
}
