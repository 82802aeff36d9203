package domain

import (
	"encoding/json"
	"fmt"
	"time"
)

// The execution kinds: one type per kind of a run's progress (RUN_*, WAVE_*,
// TASK_CLAIMED, AGENT_*, LOG_APPENDED, TEST_RESULT_RECORDED). Each type is both
// the GraphQL type of its kind and its stored payload: the embedded Event is
// the row (left out of the JSON), the other fields are the payload's keys, so
// the two cannot drift apart.
//
// The Go names end in Event because RunPaused, WaveCompleted, AgentTerminated,
// AgentHeartbeat and others already name statuses and rows; gqlgen.yml binds
// the GraphQL names (RunPaused, …) to them.
//
// Payloads stored before the kinds had types of their own were one shared bag
// of details; its keys waveNumber, attemptNumber, progressPercent,
// currentStep, status and lines keep their meaning here, and what it kept
// under "message" is read by upgrade (see legacyMessage).

// RunReason is the reason given to the mutation behind a run event.
type RunReason struct {
	Reason *string `json:"reason,omitempty"`
}

func (r *RunReason) upgrade(message *string) error {
	if r.Reason == nil {
		r.Reason = message
	}
	return nil
}

// RunStartedEvent: a run started (RUN_STARTED); Reason is that of
// startExecutionRun or retryExecutionRun.
type RunStartedEvent struct {
	Event `json:"-"`
	RunReason
}

// RunPausedEvent: a run was paused (RUN_PAUSED).
type RunPausedEvent struct {
	Event `json:"-"`
	RunReason
}

// RunResumedEvent: a paused run resumed (RUN_RESUMED).
type RunResumedEvent struct {
	Event `json:"-"`
	RunReason
}

// RunCancelledEvent: a run was cancelled (RUN_CANCELLED).
type RunCancelledEvent struct {
	Event `json:"-"`
	RunReason
}

// RunCompletedEvent: every task of a run completed (RUN_COMPLETED).
type RunCompletedEvent struct {
	Event      `json:"-"`
	DurationMs *int `json:"durationMs,omitempty"`
}

// RunFailedEvent: a run ended with tasks that did not complete (RUN_FAILED).
type RunFailedEvent struct {
	Event         `json:"-"`
	FailureReason string `json:"failureReason"`
	DurationMs    *int   `json:"durationMs,omitempty"`
}

func (e *RunFailedEvent) upgrade(message *string) error {
	if e.FailureReason == "" && message != nil {
		e.FailureReason = *message
	}
	return nil
}

// WaveStartedEvent: a wave of a run started (WAVE_STARTED). TaskCount is nil
// in events stored before it was recorded.
type WaveStartedEvent struct {
	Event      `json:"-"`
	WaveNumber int  `json:"waveNumber"`
	TaskCount  *int `json:"taskCount,omitempty"`
}

// WaveCompletedEvent: every task of a wave finished (WAVE_COMPLETED);
// WaveStatus is FAILED when one of them failed. The counts and DurationMs are
// nil in events stored before they were recorded.
type WaveCompletedEvent struct {
	Event          `json:"-"`
	WaveNumber     int        `json:"waveNumber"`
	WaveStatus     WaveStatus `json:"status"`
	TaskCount      *int       `json:"taskCount,omitempty"`
	CompletedCount *int       `json:"completedCount,omitempty"`
	FailedCount    *int       `json:"failedCount,omitempty"`
	SkippedCount   *int       `json:"skippedCount,omitempty"`
	DurationMs     *int       `json:"durationMs,omitempty"`
}

// TaskClaimedEvent: an agent claimed a task (TASK_CLAIMED).
type TaskClaimedEvent struct {
	Event         `json:"-"`
	WaveNumber    int `json:"waveNumber"`
	AttemptNumber int `json:"attemptNumber"`
}

// AgentHeartbeatEvent: an agent heartbeated (AGENT_HEARTBEAT); the fields are
// what that heartbeat reported (nil: not reported).
type AgentHeartbeatEvent struct {
	Event           `json:"-"`
	ProgressPercent *int     `json:"progressPercent,omitempty"`
	CurrentStep     *string  `json:"currentStep,omitempty"`
	MemoryMb        *int     `json:"memoryMb,omitempty"`
	CPUPercent      *float64 `json:"cpuPercent,omitempty"`
}

// AgentTerminatedEvent: an agent was ended from outside (AGENT_TERMINATED): the
// sweep found it silent, or its run was cancelled.
type AgentTerminatedEvent struct {
	Event             `json:"-"`
	TerminationReason string `json:"terminationReason"`
	AttemptNumber     int    `json:"attemptNumber"`
	// EndReason is the agent's endReason; nil in events stored before it was.
	EndReason *AgentEndReason `json:"endReason,omitempty"`
}

func (e *AgentTerminatedEvent) upgrade(message *string) error {
	if e.TerminationReason == "" && message != nil {
		e.TerminationReason = *message
	}
	return nil
}

// LogAppendedEvent: an agent appended lines to its execution's log
// (LOG_APPENDED). FirstLine is the 1-based number of Lines[0] in the log, so
// a client can stitch events together; nil in events stored before it was.
//
// Lines is a summary — the batch's first LogEventLines lines, clipped — so
// that an event stays small whatever an agent logs; LineCount is how many
// lines the batch appended, DroppedLines how many it lost to the execution's
// log being full. The whole log is TaskExecution.log.
type LogAppendedEvent struct {
	Event        `json:"-"`
	Lines        []string `json:"lines"`
	FirstLine    *int     `json:"firstLine,omitempty"`
	LineCount    int      `json:"lineCount"`
	DroppedLines int      `json:"droppedLines,omitempty"`
}

func (e *LogAppendedEvent) upgrade(*string) error {
	if e.Lines == nil {
		e.Lines = []string{} // stored with omitempty before: a list is never null
	}
	if e.LineCount == 0 {
		e.LineCount = len(e.Lines) // stored before summaries: every line
	}
	return nil
}

// TestResultRecordedEvent: an agent recorded the outcome of one of its task's
// declared tests (TEST_RESULT_RECORDED).
type TestResultRecordedEvent struct {
	Event      `json:"-"`
	Level      TestLevel  `json:"level"`
	TestIndex  int        `json:"testIndex"`
	TestName   *string    `json:"testName,omitempty"`
	TestStatus TestStatus `json:"status"`
	DurationMs *int       `json:"durationMs,omitempty"`
}

func (e *TestResultRecordedEvent) upgrade(message *string) error {
	if e.Level != "" || message == nil {
		return nil
	}
	// Stored as "<LEVEL> test <index>" before the test had fields of its own.
	if _, err := fmt.Sscanf(*message, "%s test %d", &e.Level, &e.TestIndex); err != nil {
		return fmt.Errorf("old message %q names no test: %w", *message, err)
	}
	return nil
}

// legacyMessage is the key of the old shared payload whose content now has
// a field of its own in some kinds.
type legacyMessage struct {
	Message *string `json:"message"`
}

// upgrader is a kind whose decoded payload needs completing: from the old
// "message" (nil when absent), or with defaults.
type upgrader interface {
	upgrade(message *string) error
}

// newRunKind is the empty decoded value of an execution kind, or of a
// session kind (session_events.go); nil for the other kinds.
func newRunKind(t ExecutionEventType) ExecutionEvent {
	switch t {
	case EventRunStarted:
		return &RunStartedEvent{}
	case EventRunPaused:
		return &RunPausedEvent{}
	case EventRunResumed:
		return &RunResumedEvent{}
	case EventRunCompleted:
		return &RunCompletedEvent{}
	case EventRunFailed:
		return &RunFailedEvent{}
	case EventRunCancelled:
		return &RunCancelledEvent{}
	case EventWaveStarted:
		return &WaveStartedEvent{}
	case EventWaveCompleted:
		return &WaveCompletedEvent{}
	case EventTaskClaimed:
		return &TaskClaimedEvent{}
	case EventAgentHeartbeat:
		return &AgentHeartbeatEvent{}
	case EventAgentTerminated:
		return &AgentTerminatedEvent{}
	case EventLogAppended:
		return &LogAppendedEvent{}
	case EventTestResultRecorded:
		return &TestResultRecordedEvent{}
	case EventTaskListStatusChanged:
		return &TaskListStatusChangedEvent{}
	}
	if k := newQuestionKind(t); k != nil {
		return k
	}
	if k := newSessionKind(t); k != nil {
		return k
	}
	return newReasoningKind(t)
}

// runEvent is an event of typ in run, about a task and an agent when their
// ids are not empty; details become its payload.
func runEvent(run *ExecutionRun, typ ExecutionEventType, taskID, agentID string, at time.Time, details ExecutionEvent) *Event {
	b, err := json.Marshal(details)
	if err != nil {
		panic("domain: event payload: " + err.Error()) // plain structs of strings and numbers: cannot happen
	}
	runID := run.ID
	e := &Event{ProjectID: run.ProjectID, RunID: &runID, Type: typ, Payload: JSON(b), OccurredAt: at}
	if taskID != "" {
		e.TaskID = &taskID
	}
	if agentID != "" {
		e.AgentID = &agentID
	}
	return e
}

// NewRunStarted is the event of run starting, for reason when given.
func NewRunStarted(run *ExecutionRun, reason *string, at time.Time) *Event {
	return runEvent(run, EventRunStarted, "", "", at, &RunStartedEvent{RunReason: RunReason{Reason: reason}})
}

// NewRunPaused is the event of run being paused, for reason when given.
func NewRunPaused(run *ExecutionRun, reason *string, at time.Time) *Event {
	return runEvent(run, EventRunPaused, "", "", at, &RunPausedEvent{RunReason: RunReason{Reason: reason}})
}

// NewRunResumed is the event of run resuming, for reason when given.
func NewRunResumed(run *ExecutionRun, reason *string, at time.Time) *Event {
	return runEvent(run, EventRunResumed, "", "", at, &RunResumedEvent{RunReason: RunReason{Reason: reason}})
}

// NewRunCancelled is the event of run being cancelled, for reason when given.
func NewRunCancelled(run *ExecutionRun, reason *string, at time.Time) *Event {
	return runEvent(run, EventRunCancelled, "", "", at, &RunCancelledEvent{RunReason: RunReason{Reason: reason}})
}

// NewRunCompleted is the event of run completing, once its duration is set.
func NewRunCompleted(run *ExecutionRun, at time.Time) *Event {
	return runEvent(run, EventRunCompleted, "", "", at, &RunCompletedEvent{DurationMs: run.DurationMs})
}

// NewRunFailed is the event of run failing, once its failure reason and
// duration are set.
func NewRunFailed(run *ExecutionRun, at time.Time) *Event {
	ev := &RunFailedEvent{DurationMs: run.DurationMs}
	if run.FailureReason != nil {
		ev.FailureReason = *run.FailureReason
	}
	return runEvent(run, EventRunFailed, "", "", at, ev)
}

// NewWaveStarted is the event of wave w of run starting.
func NewWaveStarted(run *ExecutionRun, w *Wave, at time.Time) *Event {
	n := w.TaskCount
	return runEvent(run, EventWaveStarted, "", "", at, &WaveStartedEvent{WaveNumber: w.WaveNumber, TaskCount: &n})
}

// NewWaveCompleted is the event of wave w of run ending, once its status and
// counts are final.
func NewWaveCompleted(run *ExecutionRun, w *Wave, at time.Time) *Event {
	total, done, failed, skipped := w.TaskCount, w.CompletedCount, w.FailedCount, w.SkippedCount
	return runEvent(run, EventWaveCompleted, "", "", at, &WaveCompletedEvent{WaveNumber: w.WaveNumber, WaveStatus: w.Status,
		TaskCount: &total, CompletedCount: &done, FailedCount: &failed, SkippedCount: &skipped, DurationMs: w.DurationMs})
}

// NewTaskClaimed is the event of exec's agent claiming its task in wave w.
func NewTaskClaimed(run *ExecutionRun, w *Wave, exec *TaskExecution, at time.Time) *Event {
	return runEvent(run, EventTaskClaimed, exec.TaskID, exec.AgentID, at,
		&TaskClaimedEvent{WaveNumber: w.WaveNumber, AttemptNumber: exec.AttemptNumber})
}

// NewAgentHeartbeat is the event of heartbeat hb of an agent of run.
func NewAgentHeartbeat(run *ExecutionRun, hb *AgentHeartbeat) *Event {
	return runEvent(run, EventAgentHeartbeat, hb.TaskID, hb.AgentID, hb.RecordedAt, &AgentHeartbeatEvent{
		ProgressPercent: hb.ProgressPercent, CurrentStep: hb.CurrentStep, MemoryMb: hb.MemoryMb, CPUPercent: hb.CPUPercent})
}

// NewAgentTerminated is the event of exec's agent being terminated for end
// (reason: its terminationReason).
func NewAgentTerminated(run *ExecutionRun, exec *TaskExecution, end AgentEndReason, reason string, at time.Time) *Event {
	return runEvent(run, EventAgentTerminated, exec.TaskID, exec.AgentID, at,
		&AgentTerminatedEvent{TerminationReason: reason, AttemptNumber: exec.AttemptNumber, EndReason: &end})
}

// NewLogAppended is the event of lines being appended to exec's log, the
// first of them as line firstLine (1-based), and of dropped more that the
// full log could not keep. It carries a summary of the lines (LogSummary).
func NewLogAppended(run *ExecutionRun, exec *TaskExecution, firstLine int, lines []string, dropped int, at time.Time) *Event {
	return runEvent(run, EventLogAppended, exec.TaskID, exec.AgentID, at, &LogAppendedEvent{Lines: LogSummary(lines),
		FirstLine: &firstLine, LineCount: len(lines), DroppedLines: dropped})
}

// NewTestResultRecorded is the event of test result r being recorded in run.
func NewTestResultRecorded(run *ExecutionRun, r *TaskTestResult) *Event {
	return runEvent(run, EventTestResultRecorded, r.TaskID, r.AgentID, r.ExecutedAt, &TestResultRecordedEvent{
		Level: r.TestLevel, TestIndex: r.TestIndex, TestName: r.TestName, TestStatus: r.Status, DurationMs: r.DurationMs})
}
