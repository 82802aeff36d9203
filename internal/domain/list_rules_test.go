package domain

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestCheckListMoveByHand(t *testing.T) {
	all := []TaskListStatus{ListDraft, ListReady, ListInProgress, ListPaused, ListCompleted, ListArchived}
	allowed := map[[2]TaskListStatus]bool{
		{ListDraft, ListReady}: true, {ListReady, ListDraft}: true,
		{ListDraft, ListArchived}: true, {ListReady, ListArchived}: true, {ListInProgress, ListArchived}: true,
		{ListPaused, ListArchived}: true, {ListCompleted, ListArchived}: true,
	}
	for _, from := range all {
		for _, to := range all {
			err := CheckListMoveByHand(from, to, false)
			if allowed[[2]TaskListStatus{from, to}] {
				require.NoError(t, err, "%s -> %s", from, to)
				continue
			}
			require.Equal(t, CodeInvalidTransition, ErrorCode(err), "%s -> %s", from, to)
		}
	}
	for _, from := range []TaskListStatus{ListInProgress, ListPaused, ListCompleted} {
		require.Equal(t, CodeConflict, ErrorCode(CheckListMoveByHand(from, ListArchived, true)), from)
	}
}

func TestListStatusAfterRun(t *testing.T) {
	for _, c := range []struct {
		from    TaskListStatus
		move    ListMove
		allDone bool
		to      TaskListStatus
		moves   bool
	}{
		{ListDraft, ListMoveRunStart, false, ListInProgress, true},
		{ListReady, ListMoveRunStart, false, ListInProgress, true},
		{ListInProgress, ListMoveRunPause, false, ListPaused, true},
		{ListPaused, ListMoveRunResume, false, ListInProgress, true},
		{ListInProgress, ListMoveRunEnd, true, ListCompleted, true},
		{ListInProgress, ListMoveRunEnd, false, ListReady, true},
		{ListPaused, ListMoveRunEnd, false, ListReady, true},
		{ListArchived, ListMoveRunEnd, true, ListArchived, false},
		{ListReady, ListMoveRunEnd, false, ListReady, false},
	} {
		to, moves := ListStatusAfterRun(c.from, c.move, c.allDone)
		require.Equal(t, c.to, to, "%+v", c)
		require.Equal(t, c.moves, moves, "%+v", c)
	}
	require.Error(t, CheckListTakesRun(ListArchived))
	require.NoError(t, CheckListTakesRun(ListReady))
	require.Error(t, CheckListTakesTasks(ListArchived, "taskListId"))
}

func TestMoveListSetsTimesOnce(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l := &TaskList{ID: "l", ProjectID: "p", Status: ListReady}
	e := MoveList(l, ListInProgress, nil, nil, t0)
	require.Equal(t, EventTaskListStatusChanged, e.Type)
	require.Equal(t, t0, *l.StartedAt)
	MoveList(l, ListReady, nil, nil, t0.Add(time.Hour))
	MoveList(l, ListInProgress, nil, nil, t0.Add(2*time.Hour))
	require.Equal(t, t0, *l.StartedAt, "set by the first run only")
	run := "r"
	e = MoveList(l, ListCompleted, nil, &run, t0.Add(3*time.Hour))
	require.Equal(t, t0.Add(3*time.Hour), *l.CompletedAt)
	require.Nil(t, e.RunID, "a project event, not in the run's stream")
	require.JSONEq(t, `{"taskListId":"l","from":"IN_PROGRESS","to":"COMPLETED","runId":"r"}`, string(e.Payload))
}
