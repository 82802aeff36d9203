package domain

import (
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"time"
)

// QueueEntityType is the kind of entity a queue item works for.
type QueueEntityType string

// Queue entity types.
const (
	QueueEntityPlanner QueueEntityType = "PLANNER"
	QueueEntityWorker  QueueEntityType = "WORKER"
)

// Valid reports whether t is a queue entity type.
func (t QueueEntityType) Valid() bool { return t == QueueEntityPlanner || t == QueueEntityWorker }

// QueueItemStatus is where a queue item stands.
type QueueItemStatus string

// Queue item statuses.
const (
	QueuePending    QueueItemStatus = "PENDING"
	QueueInProgress QueueItemStatus = "IN_PROGRESS"
	QueueCompleted  QueueItemStatus = "COMPLETED"
	QueueFailed     QueueItemStatus = "FAILED"
	QueueCancelled  QueueItemStatus = "CANCELLED"
)

// Valid reports whether s is a queue item status.
func (s QueueItemStatus) Valid() bool {
	switch s {
	case QueuePending, QueueInProgress, QueueCompleted, QueueFailed, QueueCancelled:
		return true
	}
	return false
}

// Final reports whether nothing moves an item in s any more.
func (s QueueItemStatus) Final() bool {
	return s == QueueCompleted || s == QueueFailed || s == QueueCancelled
}

// QueueActiveStatuses are the statuses in which an item holds its unique key.
var QueueActiveStatuses = []QueueItemStatus{QueuePending, QueueInProgress}

// Queue limits and defaults.
const (
	DefaultQueueMaxAttempts  = 5
	DefaultQueueLeaseSeconds = 60
	MaxQueueAttempts         = 100
	MaxQueueLeaseSeconds     = 24 * 3600
	MaxQueueClaim            = 100
	MaxQueueFunctions        = 50 // function names in one claim
	MaxQueueError            = 64 * 1024
	MaxUniqueKey             = 500
	MaxQueueFunctionName     = 200
	MaxQueuePriority         = 1_000_000
)

// QueueFunction is a function workers may be asked to run.
type QueueFunction struct {
	ID           string    `db:"id"`
	Name         string    `db:"name"`
	MaxAttempts  int       `db:"max_attempts"`
	LeaseSeconds int       `db:"lease_seconds"`
	CreatedAt    time.Time `db:"created_at"`
	UpdatedAt    time.Time `db:"updated_at"`
}

// QueueError is one failed attempt of a queue item.
type QueueError struct {
	Attempt int       `json:"attempt"`
	Message string    `json:"message"`
	At      time.Time `json:"at"`
}

// QueueErrors is an item's error history, kept in one JSON column.
type QueueErrors []*QueueError

// Value stores the list as a JSON array.
func (e QueueErrors) Value() (driver.Value, error) {
	if e == nil {
		return "[]", nil
	}
	b, err := json.Marshal([]*QueueError(e))
	return string(b), err
}

// Scan reads a JSON array column.
func (e *QueueErrors) Scan(src any) error {
	b, err := jsonBytes(src)
	if err != nil {
		return err
	}
	out := QueueErrors{}
	if b != nil {
		if err := json.Unmarshal(b, &out); err != nil {
			return fmt.Errorf("scan QueueErrors: %w", err)
		}
	}
	*e = out
	return nil
}

// QueueItem is one call of a function for a planner or a worker. ClaimerID is
// the API token whose claim holds the current lease.
type QueueItem struct {
	ID             string          `db:"id"`
	ProjectID      string          `db:"project_id"`
	EntityType     QueueEntityType `db:"entity_type"`
	EntityRowID    string          `db:"entity_id"`
	FunctionName   string          `db:"function_name"`
	Payload        JSON            `db:"payload"`
	Status         QueueItemStatus `db:"status"`
	Priority       int             `db:"priority"`
	UniqueKey      *string         `db:"unique_key"`
	Attempt        int             `db:"attempt"`
	MaxAttempts    int             `db:"max_attempts"`
	LeaseSeconds   int             `db:"lease_seconds"`
	ScheduledAt    time.Time       `db:"scheduled_at"`
	ErrorMessage   *string         `db:"error_message"`
	Errors         QueueErrors     `db:"errors"`
	Result         JSON            `db:"result"`
	ClaimedBy      *string         `db:"claimed_by"`
	ClaimerID      *string         `db:"claimer_id"`
	LeaseExpiresAt *time.Time      `db:"lease_expires_at"`
	FinishedAt     *time.Time      `db:"finished_at"`
	CreatedAt      time.Time       `db:"created_at"`
	UpdatedAt      time.Time       `db:"updated_at"`
}

// GlobalID implementations of the queue.
func (f *QueueFunction) GlobalID() string { return GlobalID(KindQueueFunction, f.ID) }
func (i *QueueItem) GlobalID() string     { return GlobalID(KindQueueItem, i.ID) }

// EntityID is the global id of the planner or worker the item works for.
func (i *QueueItem) EntityID() string {
	if i.EntityType == QueueEntityPlanner {
		return GlobalID(KindPlanner, i.EntityRowID)
	}
	return GlobalID(KindWorker, i.EntityRowID)
}

// QueueBackoff is how long a retryable failure of attempt waits before the
// item is due again: attempt⁴ seconds (1s, 16s, 81s, 256s, …).
func QueueBackoff(attempt int) time.Duration {
	a := time.Duration(attempt)
	return a * a * a * a * time.Second
}

// Fail records a failed attempt at now: the error joins the history and the
// item goes back to PENDING after its backoff when retry is asked and
// attempts remain, else to FAILED. It reports whether the item will retry.
func (i *QueueItem) Fail(message string, retry bool, now time.Time) bool {
	i.Errors = append(i.Errors, &QueueError{Attempt: i.Attempt, Message: message, At: now})
	i.ErrorMessage = &message
	i.LeaseExpiresAt = nil
	i.ClaimerID = nil
	i.UpdatedAt = now
	if retry && i.Attempt < i.MaxAttempts {
		i.Status = QueuePending
		i.ScheduledAt = now.Add(QueueBackoff(i.Attempt))
		return true
	}
	i.Status = QueueFailed
	i.FinishedAt = &now
	return false
}

// LeaseExpiredMessage is the error a rescued attempt records.
const LeaseExpiredMessage = "lease expired"
