package domain

import "time"

// Kinds of the execution nodes.
const (
	KindExecutionRun   Kind = "ExecutionRun"
	KindWave           Kind = "Wave"
	KindWaveAssignment Kind = "WaveTaskAssignment"
	KindBuildAgent     Kind = "BuildAgent"
	KindAgentHeartbeat Kind = "HeartbeatRecord" // AgentHeartbeat names the event

	KindTaskExecution  Kind = "TaskExecution"
	KindTaskTestResult Kind = "TaskTestResult"
)

// RunStatus is the state of an execution run.
type RunStatus string

const (
	RunPending   RunStatus = "PENDING"
	RunRunning   RunStatus = "RUNNING"
	RunPaused    RunStatus = "PAUSED"
	RunCompleted RunStatus = "COMPLETED"
	RunFailed    RunStatus = "FAILED"
	RunCancelled RunStatus = "CANCELLED"
)

// Finished reports whether a run in status s has ended.
func (s RunStatus) Finished() bool { return s == RunCompleted || s == RunFailed || s == RunCancelled }

// RunTrigger says what started a run.
type RunTrigger string

const (
	TriggerUser     RunTrigger = "USER"
	TriggerAuto     RunTrigger = "AUTO"
	TriggerRetry    RunTrigger = "RETRY"
	TriggerSchedule RunTrigger = "SCHEDULE"
)

// WaveStatus is the state of a wave, and of a task's assignment to it.
type WaveStatus string

const (
	WavePending    WaveStatus = "PENDING"
	WaveInProgress WaveStatus = "IN_PROGRESS"
	WaveCompleted  WaveStatus = "COMPLETED"
	WaveFailed     WaveStatus = "FAILED"
	WaveSkipped    WaveStatus = "SKIPPED"
)

// AgentStatus is the state of a build agent.
type AgentStatus string

const (
	AgentSpawning   AgentStatus = "SPAWNING"
	AgentIdle       AgentStatus = "IDLE"
	AgentRunning    AgentStatus = "RUNNING"
	AgentCompleting AgentStatus = "COMPLETING"
	AgentTerminated AgentStatus = "TERMINATED"
)

// AgentEndReason says why a TERMINATED build agent ended.
type AgentEndReason string

const (
	EndTaskCompleted    AgentEndReason = "TASK_COMPLETED"
	EndTaskFailed       AgentEndReason = "TASK_FAILED"
	EndMissedHeartbeats AgentEndReason = "MISSED_HEARTBEATS"
	EndRunCancelled     AgentEndReason = "RUN_CANCELLED"
	EndQuestionTimeout  AgentEndReason = "QUESTION_TIMEOUT"
	EndLeaseLost        AgentEndReason = "LEASE_LOST"
)

// ExecutionStatus is the state of one attempt at a task.
type ExecutionStatus string

const (
	ExecRunning     ExecutionStatus = "RUNNING"
	ExecCompleted   ExecutionStatus = "COMPLETED"
	ExecFailed      ExecutionStatus = "FAILED"
	ExecInterrupted ExecutionStatus = "INTERRUPTED"
	ExecCancelled   ExecutionStatus = "CANCELLED"
)

// TestLevel is the kind of a declared task test.
type TestLevel string

const (
	TestCodebase TestLevel = "CODEBASE"
	TestAPI      TestLevel = "API"
	TestUI       TestLevel = "UI"
)

// TestStatus is the outcome of one test.
type TestStatus string

const (
	TestPassed  TestStatus = "PASSED"
	TestFailed  TestStatus = "FAILED"
	TestSkipped TestStatus = "SKIPPED"
	TestError   TestStatus = "ERROR"
)

// WaitReason says why claimTask handed out nothing.
type WaitReason string

const (
	WaitNoReadyTask      WaitReason = "NO_READY_TASK"
	WaitConcurrencyLimit WaitReason = "CONCURRENCY_LIMIT"
	WaitRunNotRunning    WaitReason = "RUN_NOT_RUNNING"
	WaitRunFinished      WaitReason = "RUN_FINISHED"
)

// AgentDirective is what a heartbeat tells its agent to do.
type AgentDirective string

const (
	DirectiveContinue AgentDirective = "CONTINUE"
	DirectivePause    AgentDirective = "PAUSE"
	DirectiveCancel   AgentDirective = "CANCEL"
)

// ExecutionRun is one execution of a task list's plan.
type ExecutionRun struct {
	ID                string     `db:"id"`
	TaskListID        string     `db:"task_list_id"`
	ProjectID         string     `db:"project_id"`
	RunNumber         int        `db:"run_number"`
	Status            RunStatus  `db:"status"`
	TriggeredBy       RunTrigger `db:"triggered_by"`
	TriggeredReason   *string    `db:"triggered_reason"`
	RetryOfRunID      *string    `db:"retry_of_run_id"`
	MaxParallelAgents int        `db:"max_parallel_agents"`
	// Schedule is the list's schedule when the run started: the run keeps it.
	Schedule           TaskListSchedule `db:"schedule"`
	TasksTotal         int              `db:"tasks_total"`
	TasksCompleted     int              `db:"tasks_completed"`
	TasksFailed        int              `db:"tasks_failed"`
	TasksSkipped       int              `db:"tasks_skipped"`
	TasksBlocked       int              `db:"tasks_blocked"`
	WavesTotal         int              `db:"waves_total"`
	WavesCompleted     int              `db:"waves_completed"`
	CurrentWave        *int             `db:"current_wave"`
	AgentsSpawned      int              `db:"agents_spawned"`
	AgentsActive       int              `db:"agents_active"`
	MaxParallelReached int              `db:"max_parallel_reached"`
	StartedAt          *time.Time       `db:"started_at"`
	CompletedAt        *time.Time       `db:"completed_at"`
	DurationMs         *int             `db:"duration_ms"`
	FailureReason      *string          `db:"failure_reason"`
	LastError          *string          `db:"last_error"`
	CreatedBy          *string          `db:"created_by"`
	CreatedAt          time.Time        `db:"created_at"`
	UpdatedAt          time.Time        `db:"updated_at"`
}

// Wave is one wave of a run: tasks that may run in parallel.
type Wave struct {
	ID             string     `db:"id"`
	RunID          string     `db:"run_id"`
	TaskListID     string     `db:"task_list_id"`
	WaveNumber     int        `db:"wave_number"`
	Status         WaveStatus `db:"status"`
	TaskCount      int        `db:"task_count"`
	CompletedCount int        `db:"completed_count"`
	FailedCount    int        `db:"failed_count"`
	SkippedCount   int        `db:"skipped_count"`
	StartedAt      *time.Time `db:"started_at"`
	CompletedAt    *time.Time `db:"completed_at"`
	DurationMs     *int       `db:"duration_ms"`
	CreatedAt      time.Time  `db:"created_at"`
}

// WaveTaskAssignment places a task in a wave of a run.
type WaveTaskAssignment struct {
	ID          string     `db:"id"`
	WaveID      string     `db:"wave_id"`
	RunID       string     `db:"run_id"`
	TaskID      string     `db:"task_id"`
	Position    int        `db:"position"`
	TaskStatus  WaveStatus `db:"task_status"`
	AssignedAt  time.Time  `db:"assigned_at"`
	StartedAt   *time.Time `db:"started_at"`
	CompletedAt *time.Time `db:"completed_at"`
	// ClaimRank is the place's turn in an EAGER run's claims (EagerRanks).
	ClaimRank int `db:"claim_rank"`
}

// BuildAgent is one agent working on one task of a run.
type BuildAgent struct {
	ID                          string      `db:"id"`
	RunID                       string      `db:"run_id"`
	WaveID                      string      `db:"wave_id"`
	TaskID                      string      `db:"task_id"`
	TaskListID                  string      `db:"task_list_id"`
	ProcessID                   *string     `db:"process_id"`
	Hostname                    *string     `db:"hostname"`
	WorkingDirectory            *string     `db:"working_directory"`
	Status                      AgentStatus `db:"status"`
	LastHeartbeatAt             time.Time   `db:"last_heartbeat_at"`
	HeartbeatCount              int         `db:"heartbeat_count"`
	ConsecutiveMissedHeartbeats int         `db:"consecutive_missed_heartbeats"`
	ProgressPercent             int         `db:"progress_percent"`
	CurrentStep                 *string     `db:"current_step"`
	MemoryMb                    *int        `db:"memory_mb"`
	CPUPercent                  *float64    `db:"cpu_percent"`
	SpawnedAt                   time.Time   `db:"spawned_at"`
	TerminatedAt                *time.Time  `db:"terminated_at"`
	TerminationReason           *string     `db:"termination_reason"`
	ErrorMessage                *string     `db:"error_message"`
	// EndReason says why a TERMINATED agent ended; nil while it lives.
	EndReason *AgentEndReason `db:"end_reason"`
	// TasksCompleted and TasksFailed count the agent's settled outcomes.
	TasksCompleted int `db:"tasks_completed"`
	TasksFailed    int `db:"tasks_failed"`
	// TotalDurationMs runs from the agent's spawn to its end.
	TotalDurationMs *int    `db:"total_duration_ms"`
	ClaimedBy       *string `db:"claimed_by"`
	// Slot is the run slot (1 … maxParallelAgents) the agent holds while it
	// is live; nil for agents that ended before slots existed.
	Slot *int `db:"slot"`
}

// AgentHeartbeat is one heartbeat of an agent.
type AgentHeartbeat struct {
	ID              string      `db:"id"`
	AgentID         string      `db:"agent_id"`
	RunID           string      `db:"run_id"`
	TaskID          string      `db:"task_id"`
	Status          AgentStatus `db:"status"` // the agent's, when it heartbeated
	ProgressPercent *int        `db:"progress_percent"`
	CurrentStep     *string     `db:"current_step"`
	MemoryMb        *int        `db:"memory_mb"`
	CPUPercent      *float64    `db:"cpu_percent"`
	RecordedAt      time.Time   `db:"recorded_at"`
}

// TaskExecution is one attempt at a task by one agent.
type TaskExecution struct {
	ID            string          `db:"id"`
	TaskID        string          `db:"task_id"`
	TaskListID    string          `db:"task_list_id"`
	RunID         string          `db:"run_id"`
	AgentID       string          `db:"agent_id"`
	WaveID        string          `db:"wave_id"`
	AttemptNumber int             `db:"attempt_number"`
	Status        ExecutionStatus `db:"status"`
	StartedAt     time.Time       `db:"started_at"`
	EndedAt       *time.Time      `db:"ended_at"`
	DurationMs    *int            `db:"duration_ms"`
	LastError     *string         `db:"last_error"`
	FilesModified Strings         `db:"files_modified"`
	GitCommits    Strings         `db:"git_commits"`
	LogLines      int             `db:"log_lines"`
	CreatedAt     time.Time       `db:"created_at"`
}

// TaskTestResult is the outcome of one declared test in one execution.
type TaskTestResult struct {
	ID          string     `db:"id"`
	TaskID      string     `db:"task_id"`
	TaskListID  string     `db:"task_list_id"`
	RunID       string     `db:"run_id"`
	ExecutionID string     `db:"execution_id"`
	AgentID     string     `db:"agent_id"`
	TestLevel   TestLevel  `db:"test_level"`
	TestIndex   int        `db:"test_index"`
	TestName    *string    `db:"test_name"`
	Status      TestStatus `db:"status"`
	Output      *string    `db:"output"`
	Error       *string    `db:"error"`
	DurationMs  *int       `db:"duration_ms"`
	ExecutedBy  *string    `db:"executed_by"`
	ExecutedAt  time.Time  `db:"executed_at"`
}

func (r *ExecutionRun) GlobalID() string       { return GlobalID(KindExecutionRun, r.ID) }
func (w *Wave) GlobalID() string               { return GlobalID(KindWave, w.ID) }
func (a *WaveTaskAssignment) GlobalID() string { return GlobalID(KindWaveAssignment, a.ID) }
func (a *BuildAgent) GlobalID() string         { return GlobalID(KindBuildAgent, a.ID) }
func (h *AgentHeartbeat) GlobalID() string     { return GlobalID(KindAgentHeartbeat, h.ID) }
func (e *TaskExecution) GlobalID() string      { return GlobalID(KindTaskExecution, e.ID) }
func (r *TaskTestResult) GlobalID() string     { return GlobalID(KindTaskTestResult, r.ID) }

// Inputs of the execution mutations.
type (
	StartExecutionRunInput struct {
		TaskListID string
		Reason     *string
	}
	RunActionInput struct {
		RunID  string
		Reason *string
	}
	ClaimTaskInput struct {
		RunID            string
		Hostname         *string
		ProcessID        *string
		WorkingDirectory *string
	}
	HeartbeatInput struct {
		AgentID         string
		ProgressPercent *int
		CurrentStep     *string
		MemoryMb        *int
		CPUPercent      *float64
	}
	AppendExecutionLogInput struct {
		AgentID string
		Lines   []string
	}
	RecordTestResultInput struct {
		AgentID    string
		Level      TestLevel
		TestIndex  int
		TestName   *string
		Status     TestStatus
		Output     *string
		Error      *string
		DurationMs *int
	}
	CompleteTaskInput struct {
		AgentID             string
		FilesModified       []string
		GitCommits          []string
		ActualEffortMinutes *int
		Notes               *string
	}
	FailTaskInput struct {
		AgentID   string
		Error     string
		Retryable *bool
		Notes     *string
	}
)

// ClaimResult is what claimTask hands out: an agent, its task, execution and
// wave, or only a reason to wait.
type ClaimResult struct {
	Agent      *BuildAgent
	Task       *Task
	Execution  *TaskExecution
	Wave       *Wave
	WaitReason *WaitReason
}
