package domain

import (
	"encoding/json"
	"time"
)

// The question kinds of events: the question's id is their payload, with
// the details of each kind.
type (
	// QuestionAskedEvent: a question was asked (QUESTION_ASKED).
	QuestionAskedEvent struct {
		Event      `json:"-"`
		QuestionID string `json:"questionId"`
	}
	// QuestionAnsweredEvent: a question was answered (QUESTION_ANSWERED),
	// by a person or, ByTimeout, with its default.
	QuestionAnsweredEvent struct {
		Event      `json:"-"`
		QuestionID string `json:"questionId"`
		Answer     string `json:"answer"`
		ByTimeout  bool   `json:"byTimeout"`
	}
	// QuestionExpiredEvent: a question expired unanswered (QUESTION_EXPIRED).
	QuestionExpiredEvent struct {
		Event         `json:"-"`
		QuestionID    string                `json:"questionId"`
		TimeoutAction QuestionTimeoutAction `json:"timeoutAction"`
	}
	// QuestionSkippedEvent: a question was skipped (QUESTION_SKIPPED), by a
	// person or because its run ended.
	QuestionSkippedEvent struct {
		Event      `json:"-"`
		QuestionID string  `json:"questionId"`
		Reason     *string `json:"reason,omitempty"`
	}
)

// Question event kinds besides QUESTION_ASKED and QUESTION_ANSWERED.
const (
	EventQuestionExpired ExecutionEventType = "QUESTION_EXPIRED"
	EventQuestionSkipped ExecutionEventType = "QUESTION_SKIPPED"
)

// newQuestionKind is the empty decoded value of a question kind; nil for
// the other kinds.
func newQuestionKind(t ExecutionEventType) ExecutionEvent {
	switch t {
	case EventQuestionAsked:
		return &QuestionAskedEvent{}
	case EventQuestionAnswered:
		return &QuestionAnsweredEvent{}
	case EventQuestionExpired:
		return &QuestionExpiredEvent{}
	case EventQuestionSkipped:
		return &QuestionSkippedEvent{}
	}
	return nil
}

func questionEvent(q *Question, typ ExecutionEventType, at time.Time, details any) *Event {
	b, err := json.Marshal(details)
	if err != nil {
		panic("domain: event payload: " + err.Error()) // plain structs: cannot happen
	}
	return &Event{ProjectID: q.ProjectID, RunID: q.RunID, TaskID: q.TaskID, AgentID: q.AgentID, Type: typ,
		Payload: JSON(b), OccurredAt: at}
}

// NewQuestionAsked is the event of q being asked.
func NewQuestionAsked(q *Question, at time.Time) *Event {
	return questionEvent(q, EventQuestionAsked, at, &QuestionAskedEvent{QuestionID: q.ID})
}

// NewQuestionAnswered is the event of q being answered (its answer set).
func NewQuestionAnswered(q *Question, at time.Time) *Event {
	return questionEvent(q, EventQuestionAnswered, at, &QuestionAnsweredEvent{QuestionID: q.ID,
		Answer: derefStr(q.Answer), ByTimeout: q.AnsweredByTimeout})
}

// NewQuestionExpired is the event of q expiring.
func NewQuestionExpired(q *Question, at time.Time) *Event {
	return questionEvent(q, EventQuestionExpired, at, &QuestionExpiredEvent{QuestionID: q.ID, TimeoutAction: q.TimeoutAction})
}

// NewQuestionSkipped is the event of q being skipped for reason.
func NewQuestionSkipped(q *Question, reason *string, at time.Time) *Event {
	return questionEvent(q, EventQuestionSkipped, at, &QuestionSkippedEvent{QuestionID: q.ID, Reason: reason})
}

func derefStr(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
