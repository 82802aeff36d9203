package domain

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestEventCursorRoundTrip(t *testing.T) {
	const project = "0195f0a8-0000-7000-8000-000000000002"
	for _, seq := range []int64{0, 1, 42, 1 << 40} {
		p, got, err := ParseEventCursor(EventCursor(project, seq), "after")
		require.NoError(t, err)
		require.Equal(t, project, p)
		require.Equal(t, seq, got)
	}
	for _, bad := range []string{"", "nope", EventCursor("not-a-uuid", 1), "ZXYxOjE", // "ev1:1"
		EventCursor(project, 1)[:10]} {
		_, _, err := ParseEventCursor(bad, "after")
		require.Error(t, err, bad)
		require.Equal(t, CodeBadUserInput, ErrorCode(err))
	}
}

func TestDecodeEvent(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	task := &Task{ID: "0195f0a8-0000-7000-8000-0000000000aa", ProjectID: "0195f0a8-0000-7000-8000-000000000002",
		Title: "t", Status: StatusDraft}
	for _, tc := range []struct {
		ev   *Event
		want ExecutionEvent
	}{
		{NewTaskCreated(task, now), &TaskCreated{Title: "t", Status: StatusDraft}},
		{NewTaskUpdated(task, nil, now), &TaskUpdated{ChangedFields: []string{}}},
		{NewTaskUpdated(task, []string{"title"}, now), &TaskUpdated{ChangedFields: []string{"title"}}},
		{NewTaskStatusChanged(task, StatusDraft, StatusPending, "", now), &TaskStatusChanged{From: StatusDraft, To: StatusPending}},
		{NewTaskStatusChanged(task, StatusPending, StatusBlocked, "why", now),
			&TaskStatusChanged{From: StatusPending, To: StatusBlocked, Reason: ptrTo("why")}},
	} {
		tc.ev.Seq = 7
		got, err := DecodeEvent(tc.ev)
		require.NoError(t, err)
		rec := got.Record()
		require.Equal(t, tc.ev.Type, rec.Type)
		require.Equal(t, task.ID, *rec.TaskID)
		require.Equal(t, EventCursor(task.ProjectID, 7), rec.Cursor())
		switch want := tc.want.(type) {
		case *TaskCreated:
			g := got.(*TaskCreated)
			require.Equal(t, want.Title, g.Title)
			require.Equal(t, want.Status, g.Status)
		case *TaskUpdated:
			require.Equal(t, want.ChangedFields, got.(*TaskUpdated).ChangedFields)
		case *TaskStatusChanged:
			g := got.(*TaskStatusChanged)
			require.Equal(t, want.From, g.From)
			require.Equal(t, want.To, g.To)
			require.Equal(t, want.Reason, g.Reason)
		}
	}
	_, err := DecodeEvent(&Event{Type: "NO_SUCH_KIND", Payload: JSON(`{}`)})
	require.Error(t, err, "no type for an unknown kind")
	_, err = DecodeEvent(&Event{Type: EventTaskCreated, Payload: JSON(`[`)})
	require.Error(t, err)
}

func TestChangedTaskFields(t *testing.T) {
	effort := EffortSmall
	list := "0195f0a8-0000-7000-8000-0000000000bb"
	before := &Task{Title: "a", Priority: PriorityP3, AcceptanceCriteria: Strings{"x"}}
	after := *before
	require.Empty(t, ChangedTaskFields(before, &after))
	after.Title, after.Priority, after.Effort = "b", PriorityP1, &effort
	after.AcceptanceCriteria = Strings{"x", "y"}
	after.TaskListID = &list
	require.Equal(t, []string{"title", "priority", "effort", "acceptanceCriteria", "taskListId"}, ChangedTaskFields(before, &after))
}

func ptrTo[T any](v T) *T { return &v }
