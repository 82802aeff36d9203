package domain

import (
	"encoding/json"
	"fmt"
	"time"
)

// A task list's lifecycle: the one home of its moves. By hand
// (setTaskListStatus) a list goes DRAFT ⇄ READY, and any list goes ARCHIVED
// unless a run of it is active. Its runs move it: a run starting takes a
// DRAFT or READY list to IN_PROGRESS, pausing and resuming the run take it to
// PAUSED and back, and the run's end takes it to COMPLETED (the run completed
// and so did every task of the list) or back to READY. An ARCHIVED list stays
// so: it takes no tasks and no runs. An autoExecute list starts a run (AUTO)
// when it is moved to READY by hand — not when a run's end brings it back to
// READY, which would retry failing work forever.

// EventTaskListStatusChanged: a task list moved along its lifecycle.
const EventTaskListStatusChanged ExecutionEventType = "TASK_LIST_STATUS_CHANGED"

// The causes of a list's moves.
type ListMove string

const (
	ListMoveByHand    ListMove = "BY_HAND"    // setTaskListStatus
	ListMoveRunStart  ListMove = "RUN_START"  // a run of it started
	ListMoveRunPause  ListMove = "RUN_PAUSE"  // its run paused
	ListMoveRunResume ListMove = "RUN_RESUME" // its run resumed
	ListMoveRunEnd    ListMove = "RUN_END"    // its run ended
)

// CheckListMoveByHand checks setTaskListStatus moving a list from one status
// to another; activeRun says whether a run of the list is active.
func CheckListMoveByHand(from, to TaskListStatus, activeRun bool) error {
	details := map[string]any{"from": string(from), "to": string(to)}
	switch {
	case from == ListArchived:
		return &Error{Code: CodeInvalidTransition, Field: "status", Message: "an archived task list stays archived",
			Details: details}
	case to == ListArchived:
		if activeRun {
			return &Error{Code: CodeConflict, Field: "status",
				Message: "the task list has an active run; cancel it or let it end before archiving", Details: details}
		}
		return nil
	case from == ListDraft && to == ListReady, from == ListReady && to == ListDraft:
		return nil
	}
	return &Error{Code: CodeInvalidTransition, Field: "status",
		Message: fmt.Sprintf("a task list cannot be moved from %s to %s by hand: only DRAFT ⇄ READY and any → ARCHIVED; its runs move it otherwise", from, to),
		Details: details}
}

// CheckListTakesRun checks that a list in status may start a run: any but
// an ARCHIVED one (CONFLICT). DRAFT and READY lists are the usual start; a
// COMPLETED list that took new tasks may run them; an IN_PROGRESS or PAUSED
// list has an active run, which refuses a second one.
func CheckListTakesRun(status TaskListStatus) error {
	if status == ListArchived {
		return &Error{Code: CodeConflict, Field: "taskListId", Message: "the task list is archived: it takes no runs",
			Details: map[string]any{"status": string(status)}}
	}
	return nil
}

// CheckListTakesTasks checks that a list in status may take tasks: every
// list but an ARCHIVED one.
func CheckListTakesTasks(status TaskListStatus, field string) error {
	if status == ListArchived {
		return &Error{Code: CodeConflict, Field: field, Message: "the task list is archived: it takes no tasks",
			Details: map[string]any{"status": string(status)}}
	}
	return nil
}

// ListStatusAfterRun is where a run's move takes a list in status from: the
// new status, and whether it moves at all. allDone says, for a run's end,
// whether the run COMPLETED and every task of the list is COMPLETED.
func ListStatusAfterRun(status TaskListStatus, move ListMove, allDone bool) (TaskListStatus, bool) {
	if status == ListArchived {
		return status, false
	}
	var to TaskListStatus
	switch move {
	case ListMoveRunStart, ListMoveRunResume:
		to = ListInProgress
	case ListMoveRunPause:
		to = ListPaused
	case ListMoveRunEnd:
		to = ListReady
		if allDone {
			to = ListCompleted
		}
	default:
		return status, false
	}
	return to, to != status
}

// MoveList sets l's status to "to" at now, with startedAt set on its first
// start and completedAt when it completes, and returns the event of the move.
// runID names the run that caused it, when one did.
func MoveList(l *TaskList, to TaskListStatus, reason *string, runID *string, now time.Time) *Event {
	from := l.Status
	l.Status, l.UpdatedAt = to, now
	if to == ListInProgress && l.StartedAt == nil {
		l.StartedAt = &now
	}
	if to == ListCompleted {
		l.CompletedAt = &now
	}
	b, err := json.Marshal(&TaskListStatusChangedEvent{TaskListID: l.ID, From: from, To: to, Reason: reason, ByRunID: runID})
	if err != nil {
		panic("domain: event payload: " + err.Error()) // strings only: cannot happen
	}
	return &Event{ProjectID: l.ProjectID, Type: EventTaskListStatusChanged, Payload: JSON(b), OccurredAt: now}
}

// TaskListStatusChangedEvent: a task list moved along its lifecycle
// (TASK_LIST_STATUS_CHANGED). It is a project event, not one of a run's: the
// run that moved the list, if one did, is in the payload (ByRunID), and the
// row names no run, so that a run's own stream keeps to the run's progress.
type TaskListStatusChangedEvent struct {
	Event      `json:"-"`
	TaskListID string         `json:"taskListId"`
	From       TaskListStatus `json:"from"`
	To         TaskListStatus `json:"to"`
	Reason     *string        `json:"reason,omitempty"`
	ByRunID    *string        `json:"runId,omitempty"`
}

// MaxRunSchedule bounds a list's runSchedule expression.
const MaxRunSchedule = 200
