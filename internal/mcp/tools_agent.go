package mcp

import (
	"context"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/taskgraph/taskgraph/internal/domain"
)

type heartbeatIn struct {
	AgentID         string `json:"agentId" jsonschema:"The agentId claim_task returned."`
	ProgressPercent *int   `json:"progressPercent,omitempty" jsonschema:"How far along you are, 0-100."`
	CurrentStep     string `json:"currentStep,omitempty" jsonschema:"What you are doing now, in a few words."`
}

type appendLogIn struct {
	AgentID string   `json:"agentId" jsonschema:"The agentId claim_task returned."`
	Lines   []string `json:"lines" jsonschema:"Log lines to append, oldest first (commands run, their output, decisions)."`
}

type recordTestResultIn struct {
	AgentID    string `json:"agentId" jsonschema:"The agentId claim_task returned."`
	Level      string `json:"level" jsonschema:"CODEBASE for the task's codebaseTests, API for apiTests, UI for uiTests."`
	TestIndex  int    `json:"testIndex" jsonschema:"The test's index (from 0) in that list of the task."`
	TestName   string `json:"testName,omitempty" jsonschema:"The test's name as you ran it."`
	Status     string `json:"status" jsonschema:"The outcome."`
	Output     string `json:"output,omitempty" jsonschema:"What the test printed (the tail when long)."`
	Error      string `json:"error,omitempty" jsonschema:"Why it failed."`
	DurationMs *int   `json:"durationMs,omitempty" jsonschema:"How long it ran."`
}

type completeTaskIn struct {
	AgentID             string   `json:"agentId" jsonschema:"The agentId claim_task returned."`
	FilesModified       []string `json:"filesModified,omitempty" jsonschema:"The files you changed."`
	GitCommits          []string `json:"gitCommits,omitempty" jsonschema:"The commits you made."`
	ActualEffortMinutes *int     `json:"actualEffortMinutes,omitempty" jsonschema:"How long the work took."`
}

type failTaskIn struct {
	AgentID   string `json:"agentId" jsonschema:"The agentId claim_task returned."`
	Error     string `json:"error" jsonschema:"What went wrong, for the next attempt and for people."`
	Retryable *bool  `json:"retryable,omitempty" jsonschema:"True when another attempt may succeed (the task goes back to PENDING while attempts remain)."`
}

// directiveAdvice tells a model what each heartbeat directive means.
var directiveAdvice = map[string]string{
	"CONTINUE": "Go on working; heartbeat again within 10 seconds.",
	"PAUSE":    "The run is paused: stop making changes, keep calling heartbeat every 10 seconds until it says CONTINUE.",
	"CANCEL":   "The run was cancelled: stop working on the task now; do not complete or fail it.",
}

const leaseNote = " LEASE_LOST means you no longer hold the task: stop working on it and claim again."

func (t *tools) addAgentTools(s *sdk.Server) {
	add(s, t, &sdk.Tool{Name: "heartbeat", Title: "Heartbeat", Annotations: writes(true),
		Description: `Tells Taskgraph you are alive and working on your claimed task, and keeps your lease: call it at least every 10 seconds from claim_task until complete_task or fail_task, with your progress.
Returns {directive, advice}: CONTINUE (go on), PAUSE (stop changing things, keep heartbeating), CANCEL (stop now).` + leaseNote},
		func(ctx context.Context, c *call, in heartbeatIn) (any, error) {
			input := vars{"agentId": in.AgentID}.opt("progressPercent", in.ProgressPercent).str("currentStep", in.CurrentStep)
			var out struct{ Heartbeat struct{ Directive string } }
			if err := c.do(ctx, `mutation($in: HeartbeatInput!) { heartbeat(input: $in) { directive } }`, vars{"in": map[string]any(input)}, &out); err != nil {
				c.dropLeaseOn(in.AgentID, err)
				return nil, err
			}
			d := out.Heartbeat.Directive
			if d == "CANCEL" {
				c.t.leases.drop(in.AgentID)
			}
			return map[string]any{"directive": d, "advice": directiveAdvice[d]}, nil
		},
		maxLen(maxID, "agentId"), between("progressPercent", 0, 100), maxLen(domain.MaxCurrentStep, "currentStep"))

	add(s, t, &sdk.Tool{Name: "append_log", Title: "Append to the task's log", Annotations: writes(false),
		Description: `Appends lines to the log of your claimed task's execution, which people watch live: commands you ran, their output, your decisions. At most 1,000 lines and 1 MiB per call, 8 KiB per line.
Returns {logLines}: the log's length.` + leaseNote},
		func(ctx context.Context, c *call, in appendLogIn) (any, error) {
			var out struct {
				AppendExecutionLog struct{ Execution struct{ LogLines int } }
			}
			if err := c.do(ctx, `mutation($in: AppendExecutionLogInput!) { appendExecutionLog(input: $in) { execution { logLines } } }`,
				vars{"in": map[string]any{"agentId": in.AgentID, "lines": in.Lines}}, &out); err != nil {
				return nil, err
			}
			return map[string]any{"logLines": out.AppendExecutionLog.Execution.LogLines}, nil
		},
		maxLen(maxID, "agentId"), maxItems(domain.MaxLogLinesPerCall, "lines"), maxLen(domain.MaxLogLineBytes, "lines"))

	add(s, t, &sdk.Tool{Name: "record_test_result", Title: "Record a test result", Annotations: writes(true),
		Description: `Records the outcome of one of your task's declared tests (its codebaseTests, apiTests or uiTests, by level and index from 0). complete_task completes the task only when every declared test PASSED in this execution (else the task FAILS), so run and record each one first; a test may be recorded again, its latest result counts.
Returns {testResult}. BAD_USER_INPUT with field testIndex: no such declared test.` + leaseNote},
		func(ctx context.Context, c *call, in recordTestResultIn) (any, error) {
			input := vars{"agentId": in.AgentID, "level": in.Level, "testIndex": in.TestIndex, "status": in.Status}.
				str("testName", in.TestName).str("output", in.Output).str("error", in.Error).opt("durationMs", in.DurationMs)
			var out struct {
				RecordTestResult struct{ TestResult map[string]any }
			}
			if err := c.do(ctx, `mutation($in: RecordTestResultInput!) { recordTestResult(input: $in) { testResult { id testLevel testIndex testName status } } }`,
				vars{"in": map[string]any(input)}, &out); err != nil {
				return nil, err
			}
			return map[string]any{"testResult": out.RecordTestResult.TestResult}, nil
		},
		maxLen(maxID, "agentId"), enum("level", testLevels...), enum("status", testStatuses...), between("testIndex", 0, domain.MaxListItems),
		maxLen(domain.MaxListEntry, "testName"), maxLen(domain.MaxTestOutputBytes, "output"), maxLen(domain.MaxErrorTextBytes, "error"),
		between("durationMs", 0, 1<<31-1))

	add(s, t, &sdk.Tool{Name: "complete_task", Title: "Complete the task", Annotations: writes(false),
		Description: `Reports your claimed task done, with the files you changed and your commits. The task is COMPLETED only when every declared test has a PASSED result in this execution (record_test_result): otherwise it is FAILED, with execution.lastError naming the missing or failing tests — so run and record every declared test first.
Returns {task: {displayId, status}, execution: {status, lastError}}; your lease ends either way. Then call claim_task for the next task.` + leaseNote},
		func(ctx context.Context, c *call, in completeTaskIn) (any, error) {
			input := vars{"agentId": in.AgentID}.list("filesModified", in.FilesModified).list("gitCommits", in.GitCommits).
				opt("actualEffortMinutes", in.ActualEffortMinutes)
			var out struct{ CompleteTask map[string]any }
			if err := c.do(ctx, `mutation($in: CompleteTaskInput!) { completeTask(input: $in) {
  task { id displayId title status } execution { attemptNumber status durationMs lastError } } }`, vars{"in": map[string]any(input)}, &out); err != nil {
				c.dropLeaseOn(in.AgentID, err)
				return nil, err
			}
			c.t.leases.drop(in.AgentID)
			if task, _ := out.CompleteTask["task"].(map[string]any); task != nil && task["status"] == "FAILED" {
				out.CompleteTask["advice"] = "The task FAILED: execution.lastError names the declared tests without a PASSED result. Claim again for the next task."
			}
			return out.CompleteTask, nil
		},
		maxLen(maxID, "agentId"), maxItems(domain.MaxReportedFiles, "filesModified", "gitCommits"),
		maxLen(domain.MaxPathLength, "filesModified"), maxLen(maxID, "gitCommits"), between("actualEffortMinutes", 0, 1<<31-1))

	add(s, t, &sdk.Tool{Name: "fail_task", Title: "Fail the task", Annotations: writes(false),
		Description: `Reports that you could not finish your claimed task, with why. With retryable true the task goes back to PENDING for another attempt while attempts remain; otherwise it is FAILED and the tasks that depend on it are skipped.
Returns {task: {displayId, status}, execution: {status}}; your lease ends. Then call claim_task for other work.` + leaseNote},
		func(ctx context.Context, c *call, in failTaskIn) (any, error) {
			input := vars{"agentId": in.AgentID, "error": in.Error}.opt("retryable", in.Retryable)
			var out struct{ FailTask map[string]any }
			if err := c.do(ctx, `mutation($in: FailTaskInput!) { failTask(input: $in) {
  task { id displayId title status } execution { attemptNumber status lastError } } }`, vars{"in": map[string]any(input)}, &out); err != nil {
				c.dropLeaseOn(in.AgentID, err)
				return nil, err
			}
			c.t.leases.drop(in.AgentID)
			return out.FailTask, nil
		},
		maxLen(maxID, "agentId"), maxLen(domain.MaxErrorTextBytes, "error"))
}

// dropLeaseOn stops keeping the agent's lease when err says it is lost.
func (c *call) dropLeaseOn(agentID string, err error) {
	if asToolError(err).Code == "LEASE_LOST" {
		c.t.leases.drop(agentID)
	}
}
