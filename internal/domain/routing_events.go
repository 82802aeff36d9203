package domain

import (
	"encoding/json"
	"time"
)

// Event kinds of routing and the function queue.
const (
	EventRouterMessageAdded   ExecutionEventType = "ROUTER_MESSAGE_ADDED"
	EventPlannerStatusChanged ExecutionEventType = "PLANNER_STATUS_CHANGED"
	EventWorkerStatusChanged  ExecutionEventType = "WORKER_STATUS_CHANGED"
	EventQueueItemEnqueued    ExecutionEventType = "QUEUE_ITEM_ENQUEUED"
	EventQueueItemClaimed     ExecutionEventType = "QUEUE_ITEM_CLAIMED"
	EventQueueItemCompleted   ExecutionEventType = "QUEUE_ITEM_COMPLETED"
	EventQueueItemFailed      ExecutionEventType = "QUEUE_ITEM_FAILED"
	EventQueueItemCancelled   ExecutionEventType = "QUEUE_ITEM_CANCELLED"
)

// Like the execution kinds (run_events.go), each type below is both the
// GraphQL type of its kind and its stored payload.

// RouterMessageAddedEvent: a message was added to a router (ROUTER_MESSAGE_ADDED).
type RouterMessageAddedEvent struct {
	Event     `json:"-"`
	RouterID  string            `json:"routerId"`
	MessageID string            `json:"messageId"`
	Role      RouterMessageRole `json:"role"`
}

// PlannerStatusChangedEvent: a planner moved (PLANNER_STATUS_CHANGED); Reason
// says why when the engine moved it (the failed-task limit).
type PlannerStatusChangedEvent struct {
	Event             `json:"-"`
	PlannerID         string        `json:"plannerId"`
	FromPlannerStatus PlannerStatus `json:"from"`
	ToPlannerStatus   PlannerStatus `json:"to"`
	Reason            *string       `json:"reason,omitempty"`
}

// WorkerStatusChangedEvent: a worker's task moved (WORKER_STATUS_CHANGED).
type WorkerStatusChangedEvent struct {
	Event            `json:"-"`
	WorkerID         string           `json:"workerId"`
	PlannerID        string           `json:"plannerId"`
	FromWorkerStatus WorkerTaskStatus `json:"from"`
	ToWorkerStatus   WorkerTaskStatus `json:"to"`
	CurrentAttempt   int              `json:"currentAttempt"`
}

// QueueItemEnqueuedEvent: an item was added to the queue (QUEUE_ITEM_ENQUEUED).
type QueueItemEnqueuedEvent struct {
	Event        `json:"-"`
	ItemID       string    `json:"itemId"`
	FunctionName string    `json:"functionName"`
	ScheduledAt  time.Time `json:"scheduledAt"`
}

// QueueItemClaimedEvent: a worker claimed an item (QUEUE_ITEM_CLAIMED).
type QueueItemClaimedEvent struct {
	Event        `json:"-"`
	ItemID       string `json:"itemId"`
	FunctionName string `json:"functionName"`
	Attempt      int    `json:"attempt"`
	ClaimedBy    string `json:"claimedBy"`
}

// QueueItemCompletedEvent: an item completed (QUEUE_ITEM_COMPLETED).
type QueueItemCompletedEvent struct {
	Event        `json:"-"`
	ItemID       string `json:"itemId"`
	FunctionName string `json:"functionName"`
	Attempt      int    `json:"attempt"`
}

// QueueItemFailedEvent: an attempt failed (QUEUE_ITEM_FAILED); WillRetry says
// the item is PENDING again, due at ScheduledAt.
type QueueItemFailedEvent struct {
	Event        `json:"-"`
	ItemID       string     `json:"itemId"`
	FunctionName string     `json:"functionName"`
	Attempt      int        `json:"attempt"`
	WillRetry    bool       `json:"willRetry"`
	Error        string     `json:"error"`
	ScheduledAt  *time.Time `json:"scheduledAt,omitempty"`
}

// QueueItemCancelledEvent: an item was cancelled (QUEUE_ITEM_CANCELLED).
type QueueItemCancelledEvent struct {
	Event          `json:"-"`
	ItemID         string          `json:"itemId"`
	FunctionName   string          `json:"functionName"`
	FromItemStatus QueueItemStatus `json:"from"`
}

// newRoutingKind returns an empty event of a routing kind, nil for others.
func newRoutingKind(t ExecutionEventType) ExecutionEvent {
	switch t {
	case EventRouterMessageAdded:
		return &RouterMessageAddedEvent{}
	case EventPlannerStatusChanged:
		return &PlannerStatusChangedEvent{}
	case EventWorkerStatusChanged:
		return &WorkerStatusChangedEvent{}
	case EventQueueItemEnqueued:
		return &QueueItemEnqueuedEvent{}
	case EventQueueItemClaimed:
		return &QueueItemClaimedEvent{}
	case EventQueueItemCompleted:
		return &QueueItemCompletedEvent{}
	case EventQueueItemFailed:
		return &QueueItemFailedEvent{}
	case EventQueueItemCancelled:
		return &QueueItemCancelledEvent{}
	}
	return nil
}

func projectEvent(projectID string, typ ExecutionEventType, at time.Time, details any) *Event {
	b, err := json.Marshal(details)
	if err != nil {
		panic("domain: event payload: " + err.Error()) // plain structs: cannot happen
	}
	return &Event{ProjectID: projectID, Type: typ, Payload: JSON(b), OccurredAt: at}
}

// NewRouterMessageAdded is the event of m added to its router.
func NewRouterMessageAdded(m *RouterMessage) *Event {
	return projectEvent(m.ProjectID, EventRouterMessageAdded, m.CreatedAt,
		&RouterMessageAddedEvent{RouterID: m.RouterID, MessageID: m.ID, Role: m.Role})
}

// NewPlannerStatusChanged is the event of p moving from one status to its current one.
func NewPlannerStatusChanged(p *Planner, from PlannerStatus, reason string, at time.Time) *Event {
	e := &PlannerStatusChangedEvent{PlannerID: p.ID, FromPlannerStatus: from, ToPlannerStatus: p.Status}
	if reason != "" {
		e.Reason = &reason
	}
	return projectEvent(p.ProjectID, EventPlannerStatusChanged, at, e)
}

// NewWorkerStatusChanged is the event of w moving from one status to its current one.
func NewWorkerStatusChanged(w *Worker, from WorkerTaskStatus, at time.Time) *Event {
	return projectEvent(w.ProjectID, EventWorkerStatusChanged, at, &WorkerStatusChangedEvent{
		WorkerID: w.ID, PlannerID: w.PlannerID, FromWorkerStatus: from, ToWorkerStatus: w.TaskStatus, CurrentAttempt: w.CurrentAttempt})
}

// NewQueueItemEnqueued is the event of i added to the queue.
func NewQueueItemEnqueued(i *QueueItem) *Event {
	return projectEvent(i.ProjectID, EventQueueItemEnqueued, i.CreatedAt,
		&QueueItemEnqueuedEvent{ItemID: i.ID, FunctionName: i.FunctionName, ScheduledAt: i.ScheduledAt})
}

// NewQueueItemClaimed is the event of i claimed.
func NewQueueItemClaimed(i *QueueItem, at time.Time) *Event {
	return projectEvent(i.ProjectID, EventQueueItemClaimed, at, &QueueItemClaimedEvent{
		ItemID: i.ID, FunctionName: i.FunctionName, Attempt: i.Attempt, ClaimedBy: derefString(i.ClaimedBy)})
}

// NewQueueItemCompleted is the event of i completed.
func NewQueueItemCompleted(i *QueueItem, at time.Time) *Event {
	return projectEvent(i.ProjectID, EventQueueItemCompleted, at,
		&QueueItemCompletedEvent{ItemID: i.ID, FunctionName: i.FunctionName, Attempt: i.Attempt})
}

// NewQueueItemFailed is the event of a failed attempt of i (after Fail).
func NewQueueItemFailed(i *QueueItem, willRetry bool, at time.Time) *Event {
	e := &QueueItemFailedEvent{ItemID: i.ID, FunctionName: i.FunctionName, Attempt: i.Attempt,
		WillRetry: willRetry, Error: derefString(i.ErrorMessage)}
	if willRetry {
		t := i.ScheduledAt
		e.ScheduledAt = &t
	}
	return projectEvent(i.ProjectID, EventQueueItemFailed, at, e)
}

// NewQueueItemCancelled is the event of i cancelled from status from.
func NewQueueItemCancelled(i *QueueItem, from QueueItemStatus, at time.Time) *Event {
	return projectEvent(i.ProjectID, EventQueueItemCancelled, at,
		&QueueItemCancelledEvent{ItemID: i.ID, FunctionName: i.FunctionName, FromItemStatus: from})
}

func derefString(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
