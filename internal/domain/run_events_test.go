package domain

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Each execution kind survives its constructor, the stored JSON and DecodeEvent.
func TestRunEventsRoundTrip(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	const (
		project = "0195f0a8-0000-7000-8000-000000000002"
		runID   = "0195f0a8-0000-7000-8000-0000000000r1"
		taskID  = "0195f0a8-0000-7000-8000-0000000000aa"
		agentID = "0195f0a8-0000-7000-8000-0000000000ag"
	)
	run := &ExecutionRun{ID: runID, ProjectID: project, Status: RunRunning, DurationMs: ptrTo(1500),
		FailureReason: ptrTo("1 of 2 tasks did not complete")}
	wave := &Wave{WaveNumber: 2, Status: WaveFailed, TaskCount: 3, CompletedCount: 1, FailedCount: 1, SkippedCount: 1,
		DurationMs: ptrTo(900)}
	exec := &TaskExecution{TaskID: taskID, AgentID: agentID, AttemptNumber: 2, LogLines: 10}
	hb := &AgentHeartbeat{TaskID: taskID, AgentID: agentID, ProgressPercent: ptrTo(40), CurrentStep: ptrTo("compiling"),
		MemoryMb: ptrTo(512), CPUPercent: ptrTo(12.5), RecordedAt: now}
	result := &TaskTestResult{TaskID: taskID, AgentID: agentID, TestLevel: TestAPI, TestIndex: 1,
		TestName: ptrTo("GET /health"), Status: TestFailed, DurationMs: ptrTo(30), ExecutedAt: now}

	for _, tc := range []struct {
		ev    *Event
		typ   ExecutionEventType
		about bool // carries the task and agent
		want  ExecutionEvent
	}{
		{ev: NewRunStarted(run, ptrTo("go"), now), typ: EventRunStarted,
			want: &RunStartedEvent{RunReason: RunReason{Reason: ptrTo("go")}}},
		{ev: NewRunStarted(run, nil, now), typ: EventRunStarted, want: &RunStartedEvent{}},
		{ev: NewRunPaused(run, ptrTo("lunch"), now), typ: EventRunPaused,
			want: &RunPausedEvent{RunReason: RunReason{Reason: ptrTo("lunch")}}},
		{ev: NewRunResumed(run, nil, now), typ: EventRunResumed, want: &RunResumedEvent{}},
		{ev: NewRunCancelled(run, ptrTo("wrong list"), now), typ: EventRunCancelled,
			want: &RunCancelledEvent{RunReason: RunReason{Reason: ptrTo("wrong list")}}},
		{ev: NewRunCompleted(run, now), typ: EventRunCompleted, want: &RunCompletedEvent{DurationMs: ptrTo(1500)}},
		{ev: NewRunFailed(run, now), typ: EventRunFailed,
			want: &RunFailedEvent{FailureReason: "1 of 2 tasks did not complete", DurationMs: ptrTo(1500)}},
		{ev: NewWaveStarted(run, wave, now), typ: EventWaveStarted, want: &WaveStartedEvent{WaveNumber: 2, TaskCount: ptrTo(3)}},
		{ev: NewWaveCompleted(run, wave, now), typ: EventWaveCompleted, want: &WaveCompletedEvent{WaveNumber: 2,
			WaveStatus: WaveFailed, TaskCount: ptrTo(3), CompletedCount: ptrTo(1), FailedCount: ptrTo(1),
			SkippedCount: ptrTo(1), DurationMs: ptrTo(900)}},
		{ev: NewTaskClaimed(run, wave, exec, now), typ: EventTaskClaimed, about: true,
			want: &TaskClaimedEvent{WaveNumber: 2, AttemptNumber: 2}},
		{ev: NewAgentHeartbeat(run, hb), typ: EventAgentHeartbeat, about: true, want: &AgentHeartbeatEvent{
			ProgressPercent: ptrTo(40), CurrentStep: ptrTo("compiling"), MemoryMb: ptrTo(512), CPUPercent: ptrTo(12.5)}},
		{ev: NewAgentHeartbeat(run, &AgentHeartbeat{TaskID: taskID, AgentID: agentID, RecordedAt: now}),
			typ: EventAgentHeartbeat, about: true, want: &AgentHeartbeatEvent{}},
		{ev: NewAgentTerminated(run, exec, EndMissedHeartbeats, "no heartbeat", now), typ: EventAgentTerminated, about: true,
			want: &AgentTerminatedEvent{TerminationReason: "no heartbeat", AttemptNumber: 2, EndReason: ptrTo(EndMissedHeartbeats)}},
		{ev: NewLogAppended(run, exec, 11, []string{"a", "b"}, 0, now), typ: EventLogAppended, about: true,
			want: &LogAppendedEvent{Lines: []string{"a", "b"}, FirstLine: ptrTo(11), LineCount: 2}},
		{ev: NewLogAppended(run, exec, 11, nil, 3, now), typ: EventLogAppended, about: true,
			want: &LogAppendedEvent{Lines: []string{}, FirstLine: ptrTo(11), DroppedLines: 3}},
		{ev: NewLogAppended(run, exec, 1, []string{"1", "2", "3", "4", "5", "6", strings.Repeat("x", 600)}, 0, now), typ: EventLogAppended, about: true,
			want: &LogAppendedEvent{Lines: []string{"1", "2", "3", "4", "5"}, FirstLine: ptrTo(1), LineCount: 7}},
		{ev: NewTestResultRecorded(run, result), typ: EventTestResultRecorded, about: true,
			want: &TestResultRecordedEvent{Level: TestAPI, TestIndex: 1, TestName: ptrTo("GET /health"),
				TestStatus: TestFailed, DurationMs: ptrTo(30)}},
	} {
		t.Run(string(tc.typ), func(t *testing.T) {
			require.Equal(t, tc.typ, tc.ev.Type)
			tc.ev.Seq = 9
			got, err := DecodeEvent(tc.ev)
			require.NoError(t, err)
			rec := got.Record()
			require.Equal(t, EventCursor(project, 9), rec.Cursor())
			require.Equal(t, now, rec.OccurredAt)
			require.Equal(t, runID, *rec.RunID)
			if tc.about {
				require.Equal(t, taskID, *rec.TaskID)
				require.Equal(t, agentID, *rec.AgentID)
			} else {
				require.Nil(t, rec.TaskID)
				require.Nil(t, rec.AgentID)
			}
			// The details: the decoded value with its record taken out.
			*got.Record() = Event{}
			require.Equal(t, tc.want, got)
		})
	}
}

// Payloads stored before each kind had a type of its own (one shared bag of
// details: message, waveNumber, attemptNumber, progressPercent, currentStep,
// status, lines) still decode, into the new types.
func TestDecodeOldActivityPayloads(t *testing.T) {
	for _, tc := range []struct {
		typ     ExecutionEventType
		payload string
		want    ExecutionEvent
	}{
		{EventRunStarted, `{"message":"go","status":"RUNNING"}`, &RunStartedEvent{RunReason: RunReason{Reason: ptrTo("go")}}},
		{EventRunStarted, `{"status":"RUNNING"}`, &RunStartedEvent{}},
		{EventRunPaused, `{"message":"lunch"}`, &RunPausedEvent{RunReason: RunReason{Reason: ptrTo("lunch")}}},
		{EventRunResumed, `{}`, &RunResumedEvent{}},
		{EventRunCancelled, `{"message":"stop"}`, &RunCancelledEvent{RunReason: RunReason{Reason: ptrTo("stop")}}},
		{EventRunCompleted, `{"status":"COMPLETED"}`, &RunCompletedEvent{}},
		{EventRunFailed, `{"message":"1 of 2 tasks did not complete","status":"FAILED"}`,
			&RunFailedEvent{FailureReason: "1 of 2 tasks did not complete"}},
		{EventWaveStarted, `{"waveNumber":2}`, &WaveStartedEvent{WaveNumber: 2}},
		{EventWaveCompleted, `{"waveNumber":2,"status":"COMPLETED"}`, &WaveCompletedEvent{WaveNumber: 2, WaveStatus: WaveCompleted}},
		{EventTaskClaimed, `{"waveNumber":1,"attemptNumber":3}`, &TaskClaimedEvent{WaveNumber: 1, AttemptNumber: 3}},
		{EventAgentHeartbeat, `{"progressPercent":50,"currentStep":"testing"}`,
			&AgentHeartbeatEvent{ProgressPercent: ptrTo(50), CurrentStep: ptrTo("testing")}},
		{EventAgentHeartbeat, `{}`, &AgentHeartbeatEvent{}},
		{EventAgentTerminated, `{"message":"no heartbeat for 3s","attemptNumber":1}`,
			&AgentTerminatedEvent{TerminationReason: "no heartbeat for 3s", AttemptNumber: 1}},
		{EventLogAppended, `{"lines":["x","y"]}`, &LogAppendedEvent{Lines: []string{"x", "y"}, LineCount: 2}},
		{EventLogAppended, `{}`, &LogAppendedEvent{Lines: []string{}}},
		{EventTestResultRecorded, `{"message":"CODEBASE test 2","status":"PASSED"}`,
			&TestResultRecordedEvent{Level: TestCodebase, TestIndex: 2, TestStatus: TestPassed}},
	} {
		got, err := DecodeEvent(&Event{Type: tc.typ, Payload: JSON(tc.payload)})
		require.NoError(t, err, "%s %s", tc.typ, tc.payload)
		require.Equal(t, tc.typ, got.Record().Type)
		*got.Record() = Event{}
		require.Equal(t, tc.want, got, "%s %s", tc.typ, tc.payload)
	}

	_, err := DecodeEvent(&Event{Type: EventTestResultRecorded, Payload: JSON(`{"message":"garbled","status":"PASSED"}`)})
	require.ErrorContains(t, err, "names no test")
	_, err = DecodeEvent(&Event{Type: EventWaveStarted, Payload: JSON(`{"waveNumber":"two"}`)})
	require.ErrorContains(t, err, "bad payload")
}
