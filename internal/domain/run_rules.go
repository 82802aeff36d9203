package domain

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// The rules of execution runs, waves and agents. The service reads rows,
// asks these functions what follows, and writes the answer; the store takes
// the status sets below as parameters instead of spelling them again in SQL.

// ActiveRunStatuses are the statuses of a run that is not finished: a list
// has at most one run in them.
var ActiveRunStatuses = []RunStatus{RunPending, RunRunning, RunPaused}

// FinishedWaveStatuses are the statuses of a wave, or of a task's place in
// one, that is over.
var FinishedWaveStatuses = []WaveStatus{WaveCompleted, WaveFailed, WaveSkipped}

// OpenWaveStatuses are the statuses of a task's place in a wave that is not
// over: the run still owns the task.
var OpenWaveStatuses = []WaveStatus{WavePending, WaveInProgress}

// Finished reports whether a wave, or a task's place in one, is over.
func (s WaveStatus) Finished() bool { return slices.Contains(FinishedWaveStatuses, s) }

// Live reports whether an agent still holds its task.
func (s AgentStatus) Live() bool { return s != AgentTerminated }

// RunAction is a control action on a run.
type RunAction string

// The run actions.
const (
	ActionPause  RunAction = "pause"
	ActionResume RunAction = "resume"
	ActionCancel RunAction = "cancel"
	ActionRetry  RunAction = "retry"
)

// Allows reports whether a run in status s may take action a: pause a
// running run, resume a paused one, cancel any unfinished one, retry one that
// failed or was cancelled.
func (s RunStatus) Allows(a RunAction) bool {
	switch a {
	case ActionPause:
		return s == RunRunning
	case ActionResume:
		return s == RunPaused
	case ActionCancel:
		return !s.Finished()
	case ActionRetry:
		return s == RunFailed || s == RunCancelled
	}
	return false
}

// ClaimWait says why a claim on run gets nothing before any task is looked
// at, given its live agents; nil: look for a ready task of the current wave.
func ClaimWait(run *ExecutionRun, liveAgents int) *WaitReason {
	var w WaitReason
	switch {
	case run.Status.Finished():
		w = WaitRunFinished
	case run.Status != RunRunning || run.CurrentWave == nil:
		w = WaitRunNotRunning
	case liveAgents >= run.MaxParallelAgents:
		w = WaitConcurrencyLimit
	default:
		return nil
	}
	return &w
}

// NoTaskWait is why a claim that found no task it could take waits, given
// the run's live agents, the claimable tasks that claims in flight hold
// (inFlight: the claim's reads saw them claimable, its locks found them
// taken) and whether blocking questions hold back tasks it could claim
// (held). When the claims in flight fill the run's slots, CONCURRENCY_LIMIT:
// had they committed first, that is what this claim would have seen.
// Otherwise WAITING_ON_QUESTION when questions hold tasks back, else
// NO_READY_TASK.
func NoTaskWait(run *ExecutionRun, live, inFlight int, held bool) WaitReason {
	switch {
	case inFlight > 0 && live+inFlight >= run.MaxParallelAgents:
		return WaitConcurrencyLimit
	case held:
		return WaitOnQuestion
	}
	return WaitNoReadyTask
}

// RunNeedsAdvance reports whether an active run's waves have moved past
// what its row says: under WAVES its current wave has no open task left;
// under EAGER a wave that is not over has none; or every wave is over and
// the run has not ended. The transaction that closes a wave advances the
// run after it commits; this catches one whose advance never ran.
func RunNeedsAdvance(run *ExecutionRun, waves []*Wave) bool {
	if run.Status.Finished() {
		return false
	}
	over := 0
	for _, w := range waves {
		if w.Status.Finished() {
			over++
			continue
		}
		current := run.CurrentWave != nil && *run.CurrentWave == w.WaveNumber
		if !w.Tally().Open && (run.Schedule == ScheduleEager || current) {
			return true
		}
	}
	return over == len(waves) && run.Status == RunRunning
}

// DirectiveFor is what a heartbeat tells an agent of a run in status s.
func DirectiveFor(s RunStatus) AgentDirective {
	switch s {
	case RunPaused:
		return DirectivePause
	case RunCancelled:
		return DirectiveCancel
	}
	return DirectiveContinue
}

// HeartbeatIsNews reports whether a heartbeat tells watchers something: the
// agent's first, and any that moves its progress or step. The others only
// keep the agent alive; an event each would put every agent's pulse through
// the project's event sequence and into every subscriber's stream.
func HeartbeatIsNews(a *BuildAgent, progress *int, step *string) bool {
	return a.HeartbeatCount == 0 ||
		(progress != nil && *progress != a.ProgressPercent) ||
		(step != nil && (a.CurrentStep == nil || *step != *a.CurrentStep))
}

// WaveTally counts the tasks of a wave by where they stand.
type WaveTally struct {
	Open                       bool // a task is pending or running
	Completed, Failed, Skipped int
}

// Tally is the wave's tally from its counters: the tasks of the wave that
// are neither completed, failed nor skipped are open. The counters move with
// each task's outcome, under the wave's row lock, so the transaction whose
// outcome closes the wave's last open task is the one that sees it close.
func (w *Wave) Tally() WaveTally {
	return WaveTally{Open: w.CompletedCount+w.FailedCount+w.SkippedCount < w.TaskCount,
		Completed: w.CompletedCount, Failed: w.FailedCount, Skipped: w.SkippedCount}
}

// WaveCountDelta is how a task's place in a wave moving from one status to
// another changes the wave's counters (completed, failed, skipped).
func WaveCountDelta(from, to WaveStatus) (completed, failed, skipped int) {
	count := func(s WaveStatus, sign int) {
		switch s {
		case WaveCompleted:
			completed += sign
		case WaveFailed:
			failed += sign
		case WaveSkipped:
			skipped += sign
		}
	}
	count(from, -1)
	count(to, 1)
	return completed, failed, skipped
}

// AdvanceWave is the wave barrier: what a wave that is not over becomes,
// given its tally, and whether the run stops at it (holds) or goes on to the
// next wave. A pending wave with open tasks starts and holds; one whose
// tasks were all skipped is SKIPPED without running. A wave in progress
// holds while a task is open, then ends FAILED when one of its tasks failed,
// else COMPLETED.
func AdvanceWave(status WaveStatus, t WaveTally) (next WaveStatus, holds bool) {
	switch {
	case status == WavePending && t.Open:
		return WaveInProgress, true
	case status == WavePending:
		return WaveSkipped, false
	case t.Open:
		return status, true
	case t.Failed > 0:
		return WaveFailed, false
	default:
		return WaveCompleted, false
	}
}

// RunOutcome is how a run whose waves are all over ends, given its tasks
// and how many of them completed: COMPLETED when every planned task
// completed, else FAILED with the reason.
func RunOutcome(total, completed int) (RunStatus, *string) {
	if completed >= total {
		return RunCompleted, nil
	}
	reason := fmt.Sprintf("%d of %d tasks did not complete", total-completed, total)
	return RunFailed, &reason
}

// ShouldRetry decides whether a task whose attempt failed goes back to
// PENDING: only when the failure is retryable, attempts remain and the run
// was not cancelled.
func ShouldRetry(retryable bool, attempt, maxAttempts int, run RunStatus) bool {
	return retryable && attempt < maxAttempts && run != RunCancelled
}

// DeclaredTests are a task's tests of a level.
func (t *Task) DeclaredTests(level TestLevel) []string {
	switch level {
	case TestCodebase:
		return t.CodebaseTests
	case TestAPI:
		return t.APITests
	default:
		return t.UITests
	}
}

// UnpassedTests is the test gate of completeTask: it names each test the
// task declares that has no PASSED result among results (the latest result
// of a test counts). None: the task completes.
func UnpassedTests(t *Task, results []*TaskTestResult) []string {
	latest := map[string]TestStatus{}
	for _, r := range results {
		latest[fmt.Sprintf("%s#%d", r.TestLevel, r.TestIndex)] = r.Status
	}
	var bad []string
	for _, level := range []TestLevel{TestCodebase, TestAPI, TestUI} {
		for i, name := range t.DeclaredTests(level) {
			st, ok := latest[fmt.Sprintf("%s#%d", level, i)]
			switch {
			case !ok:
				bad = append(bad, fmt.Sprintf("%s test %d %q has no result", level, i, name))
			case st != TestPassed:
				bad = append(bad, fmt.Sprintf("%s test %d %q is %s", level, i, name, st))
			}
		}
	}
	return bad
}

// Who waits on whom: the source of a DEPENDS_ON link waits on its target
// (A DEPENDS_ON B: B first); the target of a BLOCKS link waits on its source
// (A BLOCKS B: A first). These sets are the one statement of that rule: the
// planner, blocksCount and the skipping of a failed task's dependents all
// read it, the SQL through parameters.
var (
	SourceWaitsOnTarget = []RelationshipType{RelDependsOn}
	TargetWaitsOnSource = []RelationshipType{RelBlocks}
)

// PlanningLinkTypes are the links a plan reads: the ordering links and
// CONFLICTS_WITH.
var PlanningLinkTypes = []RelationshipType{RelDependsOn, RelBlocks, RelConflictsWith}

// EndedTaskStatuses are the statuses in which a task's work has ended for
// now: its deadline no longer moves its score, and its list counts it as
// completed or failed.
var EndedTaskStatuses = []TaskStatus{StatusCompleted, StatusFailed}

// WaitingOn maps each task to the tasks that wait on it under the planning
// links among links.
func WaitingOn(links []*TaskRelationship) map[string][]string {
	out := map[string][]string{}
	for _, l := range links {
		switch {
		case slices.Contains(SourceWaitsOnTarget, l.Type):
			out[l.TargetTaskID] = append(out[l.TargetTaskID], l.SourceTaskID)
		case slices.Contains(TargetWaitsOnSource, l.Type):
			out[l.SourceTaskID] = append(out[l.SourceTaskID], l.TargetTaskID)
		}
	}
	return out
}

// DependentsToSkip are the tasks among pending that wait, directly or
// transitively, on failed: a failed task's dependents are skipped. Sorted.
func DependentsToSkip(waitingOn map[string][]string, failed string, pending map[string]bool) []string {
	seen := map[string]bool{failed: true}
	queue := []string{failed}
	var skip []string
	for len(queue) > 0 {
		id := queue[0]
		queue = queue[1:]
		for _, d := range waitingOn[id] {
			if !seen[d] {
				seen[d] = true
				queue = append(queue, d)
				if pending[d] {
					skip = append(skip, d)
				}
			}
		}
	}
	slices.Sort(skip)
	return skip
}

// ImpactAccuracy splits a task's declared file impacts by whether the agent
// reported touching their file: a declared impact was accurate when its path
// is among filesModified.
func ImpactAccuracy(impacts []*TaskFileImpact, filesModified []string) (accurate, inaccurate []string) {
	touched := make(map[string]bool, len(filesModified))
	for _, f := range filesModified {
		touched[f] = true
	}
	for _, fi := range impacts {
		if touched[fi.FilePath] {
			accurate = append(accurate, fi.ID)
		} else {
			inaccurate = append(inaccurate, fi.ID)
		}
	}
	return accurate, inaccurate
}

// The build agent's lifecycle: SPAWNING (claimed, no heartbeat yet) →
// RUNNING (its first heartbeat) ⇄ IDLE (waiting on an unanswered blocking
// question) → COMPLETING (completeTask or failTask received, while the
// result is settled) → TERMINATED, with an AgentEndReason.

// AfterHeartbeat is the status of a live agent in status s once it
// heartbeats: a SPAWNING agent starts RUNNING; the others keep theirs.
func (s AgentStatus) AfterHeartbeat() AgentStatus {
	if s == AgentSpawning {
		return AgentRunning
	}
	return s
}

// AfterQuestion is the status of a live agent in status s when it starts
// (waiting) or stops waiting on a blocking question: RUNNING and SPAWNING
// agents go IDLE, IDLE ones go back to RUNNING; the others keep theirs.
func (s AgentStatus) AfterQuestion(waiting bool) AgentStatus {
	switch {
	case waiting && (s == AgentRunning || s == AgentSpawning):
		return AgentIdle
	case !waiting && s == AgentIdle:
		return AgentRunning
	}
	return s
}

// MissedHeartbeats is how many whole heartbeat intervals have passed
// without a heartbeat after silence since the last one.
func MissedHeartbeats(silence, interval time.Duration) int {
	if interval <= 0 || silence < interval {
		return 0
	}
	return int(silence / interval)
}

// EndAgentFor is the end reason of an agent whose task settled with outcome
// after the agent reported it (completeTask / failTask).
func EndAgentFor(outcome TaskStatus) AgentEndReason {
	if outcome == StatusCompleted {
		return EndTaskCompleted
	}
	return EndTaskFailed
}

// EndAgent terminates a live agent at now for reason (text: its
// terminationReason): it records why it ended, how long it lived and the
// outcome of its task — completed for TASK_COMPLETED, not counted when its
// run was cancelled (the task goes back to PENDING), failed otherwise.
func EndAgent(a *BuildAgent, reason AgentEndReason, text string, now time.Time) {
	a.Status, a.TerminatedAt, a.TerminationReason, a.EndReason = AgentTerminated, &now, &text, &reason
	d := max(0, int(now.Sub(a.SpawnedAt).Milliseconds()))
	a.TotalDurationMs = &d
	switch reason {
	case EndTaskCompleted:
		a.TasksCompleted++
	case EndRunCancelled:
	default:
		a.TasksFailed++
	}
}

// ExecutionLogEntry is one finished execution in Task.executionLog.
type ExecutionLogEntry struct {
	Attempt   int             `json:"attempt"`
	Status    ExecutionStatus `json:"status"`
	AgentID   string          `json:"agentId"`
	StartedAt time.Time       `json:"startedAt"`
	EndedAt   time.Time       `json:"endedAt"`
	Summary   string          `json:"summary"`
}

// MaxExecutionLogEntries bounds a task's executionLog: the newest entries
// are kept.
const MaxExecutionLogEntries = 100

// ExecutionSummary is the summary of a finished execution in its task's
// executionLog: the agent's notes, else its last error, else its status.
func ExecutionSummary(e *TaskExecution, notes *string) string {
	switch {
	case notes != nil && *notes != "":
		return *notes
	case e.LastError != nil && *e.LastError != "":
		return *e.LastError
	}
	return "execution " + string(e.Status)
}

// AppendExecutionLog adds the entry of finished execution e (of agent
// agentGID) to a task's executionLog, an array oldest first; a log that is
// not an array starts again, and past MaxExecutionLogEntries the oldest
// entries go.
func AppendExecutionLog(log JSON, e *TaskExecution, agentGID string, notes *string) (JSON, error) {
	var entries []json.RawMessage
	if len(log) > 0 && json.Unmarshal(log, &entries) != nil {
		entries = nil
	}
	ended := e.StartedAt
	if e.EndedAt != nil {
		ended = *e.EndedAt
	}
	b, err := json.Marshal(ExecutionLogEntry{Attempt: e.AttemptNumber, Status: e.Status, AgentID: agentGID,
		StartedAt: e.StartedAt, EndedAt: ended, Summary: Clip(ExecutionSummary(e, notes), MaxErrorTextBytes)})
	if err != nil {
		return nil, err
	}
	entries = append(entries, b)
	if n := len(entries) - MaxExecutionLogEntries; n > 0 {
		entries = entries[n:]
	}
	out, err := json.Marshal(entries)
	return JSON(out), err
}
