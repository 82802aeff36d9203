package domain

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ExecutionEventType is the kind of an event (the API's ExecutionEventType).
type ExecutionEventType string

// Event kinds. The question kinds come with questions; the others are
// recorded, each decoded into a type of its own.
const (
	EventRunStarted         ExecutionEventType = "RUN_STARTED"
	EventRunPaused          ExecutionEventType = "RUN_PAUSED"
	EventRunResumed         ExecutionEventType = "RUN_RESUMED"
	EventRunCompleted       ExecutionEventType = "RUN_COMPLETED"
	EventRunFailed          ExecutionEventType = "RUN_FAILED"
	EventRunCancelled       ExecutionEventType = "RUN_CANCELLED"
	EventWaveStarted        ExecutionEventType = "WAVE_STARTED"
	EventWaveCompleted      ExecutionEventType = "WAVE_COMPLETED"
	EventTaskCreated        ExecutionEventType = "TASK_CREATED"
	EventTaskUpdated        ExecutionEventType = "TASK_UPDATED"
	EventTaskStatusChanged  ExecutionEventType = "TASK_STATUS_CHANGED"
	EventTaskClaimed        ExecutionEventType = "TASK_CLAIMED"
	EventAgentHeartbeat     ExecutionEventType = "AGENT_HEARTBEAT"
	EventAgentTerminated    ExecutionEventType = "AGENT_TERMINATED"
	EventLogAppended        ExecutionEventType = "LOG_APPENDED"
	EventTestResultRecorded ExecutionEventType = "TEST_RESULT_RECORDED"
	EventQuestionAsked      ExecutionEventType = "QUESTION_ASKED"
	EventQuestionAnswered   ExecutionEventType = "QUESTION_ANSWERED"
)

// Event is one entry of a project's event log, as stored: Seq numbers the
// project's events 1, 2, 3, … in commit order, and Payload holds the details
// of the event's Type.
type Event struct {
	ProjectID  string             `db:"project_id"`
	Seq        int64              `db:"seq"`
	RunID      *string            `db:"run_id"`
	TaskID     *string            `db:"task_id"`
	AgentID    *string            `db:"agent_id"`
	SessionID  *string            `db:"session_id"` // the agent session it is about (session_events.go)
	Type       ExecutionEventType `db:"type"`
	Payload    JSON               `db:"payload"`
	OccurredAt time.Time          `db:"occurred_at"`

	cursor string // EventCursor, made once by DecodeEvent
}

// Cursor is the event's position in its project's log, as clients see it.
func (e *Event) Cursor() string {
	if e.cursor != "" {
		return e.cursor
	}
	return EventCursor(e.ProjectID, e.Seq)
}

// Record returns the stored event; every decoded kind embeds it.
func (e *Event) Record() *Event { return e }

// ExecutionEvent is an event decoded into the type of its kind (the GraphQL
// ExecutionEvent interface): TaskCreated, TaskUpdated, TaskStatusChanged, and
// the execution kinds of run_events.go.
type ExecutionEvent interface {
	Record() *Event
}

// TaskCreated: a task was created.
type TaskCreated struct {
	Event
	Title  string
	Status TaskStatus // the status it was created in
}

// TaskUpdated: updateTask changed a task (status changes have their own event).
type TaskUpdated struct {
	Event
	ChangedFields []string // GraphQL names of the fields that changed
}

// TaskStatusChanged: a task moved along its lifecycle.
type TaskStatusChanged struct {
	Event
	From   TaskStatus
	To     TaskStatus
	Reason *string
}

// The payloads of the kinds above.
type (
	taskCreatedPayload struct {
		Title  string     `json:"title"`
		Status TaskStatus `json:"status"`
	}
	taskUpdatedPayload struct {
		ChangedFields []string `json:"changedFields"`
	}
	taskStatusChangedPayload struct {
		From   TaskStatus `json:"from"`
		To     TaskStatus `json:"to"`
		Reason *string    `json:"reason,omitempty"`
	}
)

func taskEvent(t *Task, typ ExecutionEventType, at time.Time, payload any) *Event {
	b, err := json.Marshal(payload)
	if err != nil {
		panic("domain: event payload: " + err.Error()) // plain structs of strings: cannot happen
	}
	id := t.ID
	return &Event{ProjectID: t.ProjectID, TaskID: &id, Type: typ, Payload: JSON(b), OccurredAt: at}
}

// NewTaskCreated is the event of t's creation.
func NewTaskCreated(t *Task, at time.Time) *Event {
	return taskEvent(t, EventTaskCreated, at, taskCreatedPayload{Title: t.Title, Status: t.Status})
}

// NewTaskUpdated is the event of an update of t that changed fields.
func NewTaskUpdated(t *Task, fields []string, at time.Time) *Event {
	if fields == nil {
		fields = []string{}
	}
	return taskEvent(t, EventTaskUpdated, at, taskUpdatedPayload{ChangedFields: fields})
}

// NewTaskStatusChanged is the event of t moving from one status to another.
func NewTaskStatusChanged(t *Task, from, to TaskStatus, reason string, at time.Time) *Event {
	p := taskStatusChangedPayload{From: from, To: to}
	if reason != "" {
		p.Reason = &reason
	}
	return taskEvent(t, EventTaskStatusChanged, at, p)
}

// DecodeEvent turns a stored event into the type of its kind. It fails for a
// kind this version has no type for.
func DecodeEvent(e *Event) (ExecutionEvent, error) {
	// A decoded event is shared by every subscriber of its project: its
	// cursor is made once.
	rec := *e
	rec.cursor = EventCursor(e.ProjectID, e.Seq)
	e = &rec
	decode := func(dst any) error {
		dec := json.NewDecoder(bytes.NewReader(e.Payload))
		if err := dec.Decode(dst); err != nil {
			return fmt.Errorf("event %s #%d (%s): bad payload: %w", e.ProjectID, e.Seq, e.Type, err)
		}
		return nil
	}
	switch e.Type {
	case EventTaskCreated:
		var p taskCreatedPayload
		if err := decode(&p); err != nil {
			return nil, err
		}
		return &TaskCreated{Event: *e, Title: p.Title, Status: p.Status}, nil
	case EventTaskUpdated:
		var p taskUpdatedPayload
		if err := decode(&p); err != nil {
			return nil, err
		}
		if p.ChangedFields == nil {
			p.ChangedFields = []string{}
		}
		return &TaskUpdated{Event: *e, ChangedFields: p.ChangedFields}, nil
	case EventTaskStatusChanged:
		var p taskStatusChangedPayload
		if err := decode(&p); err != nil {
			return nil, err
		}
		return &TaskStatusChanged{Event: *e, From: p.From, To: p.To, Reason: p.Reason}, nil
	}
	ev := newRunKind(e.Type)
	if ev == nil {
		ev = newGroupingKind(e.Type)
	}
	if ev == nil {
		ev = newRoutingKind(e.Type) // routing_events.go
	}
	if ev != nil {
		*ev.Record() = *e
		if err := decode(ev); err != nil {
			return nil, err
		}
		if u, ok := ev.(upgrader); ok {
			var old legacyMessage
			if bytes.Contains(e.Payload, []byte(`"message"`)) {
				if err := decode(&old); err != nil {
					return nil, err
				}
			}
			if err := u.upgrade(old.Message); err != nil {
				return nil, fmt.Errorf("event %s #%d (%s): %w", e.ProjectID, e.Seq, e.Type, err)
			}
		}
		return ev, nil
	}
	return nil, fmt.Errorf("event %s #%d: no type for kind %q", e.ProjectID, e.Seq, e.Type)
}

// cursorPrefix versions the cursor format.
const cursorPrefix = "ev1:"

// EventCursor is the opaque cursor of event seq of a project (seq 0: before
// its first event). Subscriptions and Project.events share it, so a client can
// page, then subscribe from where it stopped.
func EventCursor(projectID string, seq int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte(cursorPrefix + projectID + ":" + strconv.FormatInt(seq, 10)))
}

// ParseEventCursor reads a cursor of EventCursor, given in input field field.
func ParseEventCursor(s, field string) (projectID string, seq int64, err error) {
	bad := InputError(field, "%q is not an event cursor", s)
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return "", 0, bad
	}
	rest, ok := strings.CutPrefix(string(raw), cursorPrefix)
	if !ok {
		return "", 0, bad
	}
	projectID, n, ok := strings.Cut(rest, ":")
	if !ok || !isUUID(projectID) {
		return "", 0, bad
	}
	seq, err = strconv.ParseInt(n, 10, 64)
	if err != nil || seq < 0 {
		return "", 0, bad
	}
	return projectID, seq, nil
}

// ChangedTaskFields lists, by GraphQL name, the fields an update changed from
// before to after. Status is left out: its changes are events of their own.
func ChangedTaskFields(before, after *Task) []string {
	var out []string
	add := func(name string, changed bool) {
		if changed {
			out = append(out, name)
		}
	}
	add("title", before.Title != after.Title)
	add("description", before.Description != after.Description)
	add("category", before.Category != after.Category)
	add("priority", before.Priority != after.Priority)
	add("riskLevel", before.RiskLevel != after.RiskLevel)
	add("effort", !eqPtr(before.Effort, after.Effort))
	add("owner", !eqPtr(before.Owner, after.Owner))
	add("phase", !eqPtr(before.Phase, after.Phase))
	add("deadline", !eqTime(before.Deadline, after.Deadline))
	add("acceptanceCriteria", !slices.Equal(before.AcceptanceCriteria, after.AcceptanceCriteria))
	add("codebaseTests", !slices.Equal(before.CodebaseTests, after.CodebaseTests))
	add("apiTests", !slices.Equal(before.APITests, after.APITests))
	add("uiTests", !slices.Equal(before.UITests, after.UITests))
	add("affectedFiles", !slices.Equal(before.AffectedFiles, after.AffectedFiles))
	add("actualEffortMinutes", !eqPtr(before.ActualEffortMinutes, after.ActualEffortMinutes))
	add("embedding", !bytes.Equal(before.Embedding, after.Embedding))
	add("embeddingModel", !eqPtr(before.EmbeddingModel, after.EmbeddingModel))
	add("taskListId", !eqPtr(before.TaskListID, after.TaskListID))
	add("inEvaluationQueue", before.InEvaluationQueue() != after.InEvaluationQueue())
	add("parentTaskId", !eqPtr(before.ParentTaskID, after.ParentTaskID))
	add("ideaId", !eqPtr(before.IdeaID, after.IdeaID))
	add("supersedesTaskId", !eqPtr(before.SupersedesTaskID, after.SupersedesTaskID))
	return out
}

func eqPtr[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func eqTime(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Equal(*b)
}
