package mcp

import (
	"context"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

type taskListIn struct {
	TaskList string `json:"taskList" jsonschema:"The task list's id."`
}

type startRunIn struct {
	TaskList string `json:"taskList" jsonschema:"The task list's id."`
	Reason   string `json:"reason,omitempty" jsonschema:"Why the run starts (kept in its RUN_STARTED event)."`
}

type getRunIn struct {
	Run string `json:"run" jsonschema:"The run's id (start_run and claim_task return it)."`
}

type claimTaskIn struct {
	Run              string `json:"run,omitempty" jsonschema:"The run to claim from (its id)."`
	TaskList         string `json:"taskList,omitempty" jsonschema:"Or the task list: its active run is used."`
	Hostname         string `json:"hostname,omitempty" jsonschema:"The machine you work on, shown to people watching the run."`
	WorkingDirectory string `json:"workingDirectory,omitempty" jsonschema:"The directory you work in."`
}

// waitAdvice tells a model what to do after each waitReason of claimTask.
var waitAdvice = map[string]string{
	"NO_READY_TASK":       "Every ready task is taken and the rest wait on tasks still running: wait about 30 seconds and call claim_task again.",
	"CONCURRENCY_LIMIT":   "The run already has its maximum of agents working: wait about 30 seconds and call claim_task again.",
	"RUN_NOT_RUNNING":     "The run is paused or not started: wait a minute and call claim_task again, or stop.",
	"RUN_FINISHED":        "The run is over: there is nothing left to claim in it. Stop, or report get_run's outcome.",
	"WAITING_ON_QUESTION": "The ready tasks wait on questions to people: wait a minute and call claim_task again.",
}

const runFields = `id runNumber status schedule maxParallelAgents tasksTotal tasksCompleted tasksFailed tasksSkipped tasksBlocked
  wavesTotal wavesCompleted currentWave agentsActive failureReason startedAt completedAt taskList { id name }`

func (t *tools) addRunTools(s *sdk.Server) {
	add(s, t, &sdk.Tool{Name: "plan_waves", Title: "Plan a task list's waves", Annotations: readOnly(),
		Description: `Dry-runs the plan of a task list's unfinished tasks: waves of tasks that may run in parallel (dependencies in earlier waves, tasks touching the same files apart), the conflicts, the critical path and the tasks that cannot be planned (with why). Changes nothing.
Call it before start_run to check the plan. Returns {waves: [{number, tasks}], conflicts, criticalPath, unplannable, totalTasks, estimatedHours}.`},
		func(ctx context.Context, c *call, in taskListIn) (any, error) {
			var out struct{ WavePlan map[string]any }
			err := c.do(ctx, `query($l: ID!) { wavePlan(taskListId: $l) {
  totalTasks estimatedHours
  waves { number tasks { id displayId title priorityScore } }
  conflicts { type filePath operations taskA { displayId } taskB { displayId } }
  criticalPath { estimatedHours tasks { displayId title } }
  unplannable { reason task { displayId title } }
} }`, vars{"l": in.TaskList}, &out)
			if err != nil {
				return nil, err
			}
			return out.WavePlan, nil
		},
		maxLen(maxID, "taskList"))

	add(s, t, &sdk.Tool{Name: "start_run", Title: "Start a run", Annotations: writes(false),
		Description: `Starts an execution run of a task list: its plan becomes the run's waves and wave 1 opens for claims. Needs an ADMIN or MEMBER token.
Returns {run: {id, status, ...}}; agents then call claim_task with the run's id. CONFLICT when the list already has an active run (claim from it instead).`},
		func(ctx context.Context, c *call, in startRunIn) (any, error) {
			var out struct{ StartExecutionRun struct{ Run map[string]any } }
			err := c.do(ctx, `mutation($in: StartExecutionRunInput!) { startExecutionRun(input: $in) { run { `+runFields+` } } }`,
				vars{"in": map[string]any(vars{"taskListId": in.TaskList}.str("reason", in.Reason))}, &out)
			if err != nil {
				return nil, err
			}
			return map[string]any{"run": out.StartExecutionRun.Run}, nil
		},
		maxLen(maxID, "taskList"), maxLen(2000, "reason"))

	add(s, t, &sdk.Tool{Name: "get_run", Title: "Get a run", Annotations: readOnly(),
		Description: `Reads a run: its status (PENDING, RUNNING, PAUSED, COMPLETED, FAILED, CANCELLED), counters, waves and live agents.
Call it to follow progress or to learn why a run ended (failureReason). Returns {run}.`},
		func(ctx context.Context, c *call, in getRunIn) (any, error) {
			var out struct{ ExecutionRun map[string]any }
			err := c.do(ctx, `query($r: ID!) { executionRun(id: $r) { `+runFields+`
  waves { waveNumber status taskCount completedCount failedCount skippedCount }
  agents { id status progressPercent currentStep task { displayId title status } }
} }`, vars{"r": in.Run}, &out)
			if err != nil {
				return nil, err
			}
			if out.ExecutionRun == nil {
				return nil, notFound("run", "run")
			}
			return map[string]any{"run": out.ExecutionRun}, nil
		},
		maxLen(maxID, "run"))

	add(s, t, &sdk.Tool{Name: "claim_task", Title: "Claim a task", Annotations: writes(false),
		Description: `Claims the best ready task of a run (give run, or taskList for the list's active run) for you to work on; you become its build agent and hold a lease on it.
Returns either {agentId, runId, attemptNumber, waveNumber, task} — the task in full (description, acceptance criteria, declared tests, file impacts, dependencies, relevant lessons); keep agentId, every later call about the task needs it — or {waitReason, advice} when nothing can be claimed now: follow the advice (RUN_FINISHED means stop).
Keep the lease: call heartbeat at least every 10 seconds while you work (or as often as your server asks).`},
		func(ctx context.Context, c *call, in claimTaskIn) (any, error) {
			run := in.Run
			switch {
			case run == "" && in.TaskList == "":
				return nil, badInput("run", "give run or taskList")
			case run == "":
				var err error
				if run, err = c.activeRunOf(ctx, "taskList", in.TaskList); err != nil {
					return nil, err
				}
			}
			hostname, dir := in.Hostname, in.WorkingDirectory
			if hostname == "" {
				hostname = c.t.opts.Hostname
			}
			if dir == "" {
				dir = c.t.opts.WorkingDirectory
			}
			input := vars{"runId": run}.str("hostname", hostname).str("workingDirectory", dir).str("processId", c.t.opts.ProcessID)
			var out struct {
				ClaimTask struct {
					Agent      *struct{ ID string }
					Task       map[string]any
					Execution  *struct{ AttemptNumber int }
					Wave       *struct{ WaveNumber int }
					WaitReason *string
				}
			}
			err := c.do(ctx, `mutation($in: ClaimTaskInput!) { claimTask(input: $in) {
  agent { id } execution { attemptNumber } wave { waveNumber } waitReason
  task { `+TaskDetail+` }
} }`, vars{"in": map[string]any(input)}, &out)
			if err != nil {
				return nil, err
			}
			ct := out.ClaimTask
			if ct.Agent == nil {
				reason := ""
				if ct.WaitReason != nil {
					reason = *ct.WaitReason
				}
				return map[string]any{"runId": run, "waitReason": reason, "advice": waitAdvice[reason]}, nil
			}
			c.t.leases.keep(ct.Agent.ID)
			res := map[string]any{"agentId": ct.Agent.ID, "runId": run, "task": ct.Task,
				"next": "Work on the task. Call heartbeat at least every 10 seconds, append_log as you go, record_test_result for each declared test, then complete_task (or fail_task)."}
			if ct.Execution != nil {
				res["attemptNumber"] = ct.Execution.AttemptNumber
			}
			if ct.Wave != nil {
				res["waveNumber"] = ct.Wave.WaveNumber
			}
			return res, nil
		},
		maxLen(maxID, "run", "taskList"), maxLen(maxHostname, "hostname"), maxLen(maxDirectory, "workingDirectory"))
}
