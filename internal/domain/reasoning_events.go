package domain

import (
	"encoding/json"
	"time"
)

// The reasoning kinds: one type per kind of a reasoning execution's progress.
// Like the execution kinds (run_events.go), each type is both the GraphQL type
// of its kind and its stored payload. The event belongs to the execution's
// project, and to its task and run when it is linked to them, so it streams on
// projectEvents and runEvents and pages through Project.events and
// ExecutionRun.events.
const (
	EventReasoningStarted    ExecutionEventType = "REASONING_STARTED"
	EventPassStarted         ExecutionEventType = "PASS_STARTED"
	EventPassCompleted       ExecutionEventType = "PASS_COMPLETED"
	EventConvergenceAssessed ExecutionEventType = "CONVERGENCE_ASSESSED"
	EventReasoningFinished   ExecutionEventType = "REASONING_FINISHED"
)

// ReasoningEventRef names the execution a reasoning event is about.
type ReasoningEventRef struct {
	ExecutionID string `json:"executionId"`
}

// ReasoningStartedEvent: a reasoning execution started (REASONING_STARTED).
type ReasoningStartedEvent struct {
	Event `json:"-"`
	ReasoningEventRef
	TTL int `json:"ttl"`
}

// PassStartedEvent: a pass of a reasoning execution started (PASS_STARTED).
type PassStartedEvent struct {
	Event `json:"-"`
	ReasoningEventRef
	PassNumber   int            `json:"passNumber"`
	Phase        ReasoningPhase `json:"phase"`
	TTLRemaining int            `json:"ttlRemaining"`
}

// PassCompletedEvent: a pass ended (PASS_COMPLETED).
type PassCompletedEvent struct {
	Event `json:"-"`
	ReasoningEventRef
	PassNumber int `json:"passNumber"`
	DurationMs int `json:"durationMs"`
}

// ConvergenceAssessedEvent: a pass was assessed (CONVERGENCE_ASSESSED).
type ConvergenceAssessedEvent struct {
	Event `json:"-"`
	ReasoningEventRef
	PassNumber        int     `json:"passNumber"`
	Converged         bool    `json:"converged"`
	CompletenessScore float64 `json:"completenessScore"`
	CoherenceScore    float64 `json:"coherenceScore"`
}

// ReasoningFinishedEvent: a reasoning execution finished (REASONING_FINISHED).
type ReasoningFinishedEvent struct {
	Event `json:"-"`
	ReasoningEventRef
	Status ReasoningStatus `json:"status"`
}

// newReasoningKind is the empty decoded value of a reasoning kind; nil for
// the other kinds.
func newReasoningKind(t ExecutionEventType) ExecutionEvent {
	switch t {
	case EventReasoningStarted:
		return &ReasoningStartedEvent{}
	case EventPassStarted:
		return &PassStartedEvent{}
	case EventPassCompleted:
		return &PassCompletedEvent{}
	case EventConvergenceAssessed:
		return &ConvergenceAssessedEvent{}
	case EventReasoningFinished:
		return &ReasoningFinishedEvent{}
	}
	return nil
}

func reasoningEvent(e *ReasoningExecution, typ ExecutionEventType, at time.Time, details ExecutionEvent) *Event {
	b, err := json.Marshal(details)
	if err != nil {
		panic("domain: event payload: " + err.Error()) // plain structs of strings and numbers: cannot happen
	}
	return &Event{ProjectID: e.ProjectID, SessionID: e.SessionID, RunID: e.RunID, TaskID: e.TaskID, Type: typ, Payload: JSON(b), OccurredAt: at}
}

// NewReasoningStarted is the event of e starting.
func NewReasoningStarted(e *ReasoningExecution) *Event {
	return reasoningEvent(e, EventReasoningStarted, e.CreatedAt, &ReasoningStartedEvent{ReasoningEventRef: ReasoningEventRef{e.ID}, TTL: e.TTL})
}

// NewPassStarted is the event of pass p of e starting.
func NewPassStarted(e *ReasoningExecution, p *ExecutionPass) *Event {
	return reasoningEvent(e, EventPassStarted, p.StartedAt, &PassStartedEvent{ReasoningEventRef: ReasoningEventRef{e.ID},
		PassNumber: p.PassNumber, Phase: p.Phase, TTLRemaining: p.TTLRemaining})
}

// NewPassCompleted is the event of pass p of e ending, once its end is set.
func NewPassCompleted(e *ReasoningExecution, p *ExecutionPass) *Event {
	ev := &PassCompletedEvent{ReasoningEventRef: ReasoningEventRef{e.ID}, PassNumber: p.PassNumber}
	if p.DurationMs != nil {
		ev.DurationMs = *p.DurationMs
	}
	at := p.StartedAt
	if p.EndedAt != nil {
		at = *p.EndedAt
	}
	return reasoningEvent(e, EventPassCompleted, at, ev)
}

// NewConvergenceAssessed is the event of pass p of e being assessed as a.
func NewConvergenceAssessed(e *ReasoningExecution, p *ExecutionPass, a *ConvergenceAssessment) *Event {
	return reasoningEvent(e, EventConvergenceAssessed, a.CreatedAt, &ConvergenceAssessedEvent{ReasoningEventRef: ReasoningEventRef{e.ID},
		PassNumber: p.PassNumber, Converged: a.Converged, CompletenessScore: a.CompletenessScore, CoherenceScore: a.CoherenceScore})
}

// NewReasoningFinished is the event of e finishing, once its status is final.
func NewReasoningFinished(e *ReasoningExecution) *Event {
	at := e.UpdatedAt
	if e.CompletedAt != nil {
		at = *e.CompletedAt
	}
	return reasoningEvent(e, EventReasoningFinished, at, &ReasoningFinishedEvent{ReasoningEventRef: ReasoningEventRef{e.ID}, Status: e.Status})
}
