package domain_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/domain"
)

func TestRoutingTransitions(t *testing.T) {
	routers := []domain.RouterStatus{domain.RouterActive, domain.RouterProcessing, domain.RouterCompleted, domain.RouterFailed, domain.RouterArchived}
	okRouter := map[[2]domain.RouterStatus]bool{
		{domain.RouterActive, domain.RouterProcessing}: true, {domain.RouterProcessing, domain.RouterActive}: true,
		{domain.RouterActive, domain.RouterCompleted}: true, {domain.RouterActive, domain.RouterFailed}: true,
		{domain.RouterProcessing, domain.RouterCompleted}: true, {domain.RouterProcessing, domain.RouterFailed}: true,
		{domain.RouterActive, domain.RouterArchived}: true, {domain.RouterProcessing, domain.RouterArchived}: true,
		{domain.RouterCompleted, domain.RouterArchived}: true, {domain.RouterFailed, domain.RouterArchived}: true,
	}
	for _, from := range routers {
		for _, to := range routers {
			err := domain.CheckRouterTransition(from, to)
			if okRouter[[2]domain.RouterStatus{from, to}] {
				require.NoError(t, err, "%s -> %s", from, to)
			} else {
				require.Equal(t, domain.CodeInvalidTransition, domain.ErrorCode(err), "%s -> %s", from, to)
			}
		}
	}
	planners := []domain.PlannerStatus{domain.PlannerPlanning, domain.PlannerExecuting, domain.PlannerCompleted, domain.PlannerFailed}
	okPlanner := map[[2]domain.PlannerStatus]bool{
		{domain.PlannerPlanning, domain.PlannerExecuting}: true, {domain.PlannerExecuting, domain.PlannerCompleted}: true,
		{domain.PlannerExecuting, domain.PlannerFailed}: true,
	}
	for _, from := range planners {
		for _, to := range planners {
			require.Equal(t, okPlanner[[2]domain.PlannerStatus{from, to}], domain.CheckPlannerTransition(from, to) == nil, "%s -> %s", from, to)
		}
	}
	workers := []domain.WorkerTaskStatus{domain.WorkerPending, domain.WorkerInProgress, domain.WorkerCompleted, domain.WorkerFailedValidation, domain.WorkerRecorded}
	okWorker := map[[2]domain.WorkerTaskStatus]bool{
		{domain.WorkerPending, domain.WorkerInProgress}: true, {domain.WorkerInProgress, domain.WorkerCompleted}: true,
		{domain.WorkerInProgress, domain.WorkerFailedValidation}: true, {domain.WorkerCompleted, domain.WorkerRecorded}: true,
		{domain.WorkerFailedValidation, domain.WorkerPending}: true,
	}
	for _, from := range workers {
		for _, to := range workers {
			require.Equal(t, okWorker[[2]domain.WorkerTaskStatus{from, to}], domain.CheckWorkerTransition(from, to) == nil, "%s -> %s", from, to)
		}
	}
}

func TestCheckFilePathMap(t *testing.T) {
	for _, ok := range []string{`{}`, `{"a":"/x"}`, `null`} {
		_, err := domain.CheckFilePathMap("f", domain.JSON(ok))
		require.NoError(t, err, ok)
	}
	for _, bad := range []string{`[]`, `"x"`, `{"a":1}`, `{"a":{"b":"c"}}`, `{"":"x"}`, `{"a":null}`} {
		_, err := domain.CheckFilePathMap("f", domain.JSON(bad))
		e, ok := domain.AsError(err)
		require.True(t, ok, bad)
		require.Equal(t, "f", e.Field, bad)
	}
	got, err := domain.CheckFilePathMap("f", nil)
	require.NoError(t, err)
	require.Nil(t, got, "absent stays absent")
}

func TestQueueItemFail(t *testing.T) {
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	it := &domain.QueueItem{Status: domain.QueueInProgress, Attempt: 2, MaxAttempts: 3}
	require.True(t, it.Fail("x", true, now))
	require.Equal(t, domain.QueuePending, it.Status)
	require.Equal(t, now.Add(16*time.Second), it.ScheduledAt)
	it.Attempt = 3
	require.False(t, it.Fail("y", true, now))
	require.Equal(t, domain.QueueFailed, it.Status)
	require.Len(t, it.Errors, 2)
	for a, want := range map[int]time.Duration{1: time.Second, 2: 16 * time.Second, 3: 81 * time.Second, 5: 625 * time.Second} {
		require.Equal(t, want, domain.QueueBackoff(a))
	}
}

func TestRoutingEventsRoundTrip(t *testing.T) {
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	it := &domain.QueueItem{ID: "i", ProjectID: "p", FunctionName: "f", Attempt: 2, MaxAttempts: 3, Status: domain.QueueInProgress}
	it.Fail("boom", true, now)
	pl := &domain.Planner{ID: "pl", ProjectID: "p", Status: domain.PlannerFailed}
	w := &domain.Worker{ID: "w", PlannerID: "pl", ProjectID: "p", TaskStatus: domain.WorkerPending, CurrentAttempt: 2}
	cases := []struct {
		ev    *domain.Event
		check func(domain.ExecutionEvent)
	}{
		{domain.NewRouterMessageAdded(&domain.RouterMessage{ID: "m", RouterID: "r", ProjectID: "p", Role: domain.RouterMessageUser, CreatedAt: now}),
			func(e domain.ExecutionEvent) {
				require.Equal(t, "m", e.(*domain.RouterMessageAddedEvent).MessageID)
			}},
		{domain.NewPlannerStatusChanged(pl, domain.PlannerExecuting, "limit", now), func(e domain.ExecutionEvent) {
			p := e.(*domain.PlannerStatusChangedEvent)
			require.Equal(t, domain.PlannerExecuting, p.FromPlannerStatus)
			require.Equal(t, domain.PlannerFailed, p.ToPlannerStatus)
			require.Equal(t, "limit", *p.Reason)
		}},
		{domain.NewWorkerStatusChanged(w, domain.WorkerFailedValidation, now), func(e domain.ExecutionEvent) {
			require.Equal(t, 2, e.(*domain.WorkerStatusChangedEvent).CurrentAttempt)
		}},
		{domain.NewQueueItemFailed(it, true, now), func(e domain.ExecutionEvent) {
			f := e.(*domain.QueueItemFailedEvent)
			require.True(t, f.WillRetry)
			require.Equal(t, 2, f.Attempt)
			require.Equal(t, now.Add(16*time.Second), *f.ScheduledAt)
		}},
		{domain.NewQueueItemCancelled(it, domain.QueuePending, now), func(e domain.ExecutionEvent) {
			require.Equal(t, domain.QueuePending, e.(*domain.QueueItemCancelledEvent).FromItemStatus)
		}},
	}
	for i, c := range cases {
		c.ev.Seq = int64(i + 1)
		c.ev.ProjectID = "00000000-0000-4000-8000-000000000001"
		got, err := domain.DecodeEvent(c.ev)
		require.NoError(t, err, c.ev.Type)
		require.Equal(t, c.ev.Type, got.Record().Type)
		c.check(got)
	}
}
