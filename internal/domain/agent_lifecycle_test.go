package domain

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestAgentStatusMoves(t *testing.T) {
	for _, c := range []struct {
		from                  AgentStatus
		heartbeat, wait, stop AgentStatus
	}{
		{AgentSpawning, AgentRunning, AgentIdle, AgentSpawning},
		{AgentRunning, AgentRunning, AgentIdle, AgentRunning},
		{AgentIdle, AgentIdle, AgentIdle, AgentRunning},
		{AgentCompleting, AgentCompleting, AgentCompleting, AgentCompleting},
		{AgentTerminated, AgentTerminated, AgentTerminated, AgentTerminated},
	} {
		require.Equal(t, c.heartbeat, c.from.AfterHeartbeat(), "heartbeat from %s", c.from)
		require.Equal(t, c.wait, c.from.AfterQuestion(true), "waiting from %s", c.from)
		require.Equal(t, c.stop, c.from.AfterQuestion(false), "done waiting from %s", c.from)
	}
}

func TestMissedHeartbeats(t *testing.T) {
	for _, c := range []struct {
		silence, interval time.Duration
		want              int
	}{
		{0, time.Second, 0},
		{999 * time.Millisecond, time.Second, 0},
		{time.Second, time.Second, 1},
		{3500 * time.Millisecond, time.Second, 3},
		{time.Hour, 0, 0},
	} {
		require.Equal(t, c.want, MissedHeartbeats(c.silence, c.interval), "%s / %s", c.silence, c.interval)
	}
}

func TestEndAgent(t *testing.T) {
	spawned := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		reason            AgentEndReason
		completed, failed int
	}{
		{EndTaskCompleted, 1, 0},
		{EndTaskFailed, 0, 1},
		{EndMissedHeartbeats, 0, 1},
		{EndQuestionTimeout, 0, 1},
		{EndLeaseLost, 0, 1},
		{EndRunCancelled, 0, 0},
	} {
		a := &BuildAgent{Status: AgentRunning, SpawnedAt: spawned}
		EndAgent(a, c.reason, "why", spawned.Add(1500*time.Millisecond))
		require.Equal(t, AgentTerminated, a.Status)
		require.Equal(t, c.reason, *a.EndReason)
		require.Equal(t, "why", *a.TerminationReason)
		require.Equal(t, 1500, *a.TotalDurationMs)
		require.Equal(t, c.completed, a.TasksCompleted, "%s", c.reason)
		require.Equal(t, c.failed, a.TasksFailed, "%s", c.reason)
	}
	require.Equal(t, EndTaskCompleted, EndAgentFor(StatusCompleted))
	require.Equal(t, EndTaskFailed, EndAgentFor(StatusFailed))
}

func TestAppendExecutionLog(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	end := start.Add(time.Minute)
	errText, notes, empty := "exit 2", "did it", ""
	exec := func(n int, st ExecutionStatus, lastErr *string) *TaskExecution {
		return &TaskExecution{AttemptNumber: n, Status: st, StartedAt: start, EndedAt: &end, LastError: lastErr}
	}
	entries := func(log JSON) []ExecutionLogEntry {
		var out []ExecutionLogEntry
		require.NoError(t, json.Unmarshal(log, &out))
		return out
	}
	log, err := AppendExecutionLog(nil, exec(1, ExecFailed, &errText), "agent-1", nil)
	require.NoError(t, err)
	log, err = AppendExecutionLog(log, exec(2, ExecCompleted, nil), "agent-2", &notes)
	require.NoError(t, err)
	log, err = AppendExecutionLog(log, exec(3, ExecInterrupted, nil), "agent-3", &empty)
	require.NoError(t, err)
	got := entries(log)
	require.Equal(t, []ExecutionLogEntry{
		{Attempt: 1, Status: ExecFailed, AgentID: "agent-1", StartedAt: start, EndedAt: end, Summary: "exit 2"},
		{Attempt: 2, Status: ExecCompleted, AgentID: "agent-2", StartedAt: start, EndedAt: end, Summary: "did it"},
		{Attempt: 3, Status: ExecInterrupted, AgentID: "agent-3", StartedAt: start, EndedAt: end, Summary: "execution INTERRUPTED"},
	}, got)

	// A log that is not an array starts again; past the cap the oldest go.
	log, err = AppendExecutionLog(JSON(`{"x": 1}`), exec(1, ExecCompleted, nil), "a", nil)
	require.NoError(t, err)
	require.Len(t, entries(log), 1)
	for i := range MaxExecutionLogEntries + 5 {
		if log, err = AppendExecutionLog(log, exec(i+2, ExecCompleted, nil), fmt.Sprint(i), nil); err != nil {
			t.Fatal(err)
		}
	}
	got = entries(log)
	require.Len(t, got, MaxExecutionLogEntries)
	require.Equal(t, MaxExecutionLogEntries+6, got[len(got)-1].Attempt)
}
