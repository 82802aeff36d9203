package domain

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRunActions(t *testing.T) {
	allowed := map[RunAction][]RunStatus{
		ActionPause:  {RunRunning},
		ActionResume: {RunPaused},
		ActionCancel: {RunPending, RunRunning, RunPaused},
		ActionRetry:  {RunFailed, RunCancelled},
	}
	all := []RunStatus{RunPending, RunRunning, RunPaused, RunCompleted, RunFailed, RunCancelled}
	for action, ok := range allowed {
		for _, s := range all {
			want := false
			for _, o := range ok {
				want = want || o == s
			}
			require.Equal(t, want, s.Allows(action), "%s a %s run", action, s)
		}
	}
	require.False(t, RunRunning.Allows("explode"))
}

func TestClaimWait(t *testing.T) {
	wave := 1
	for _, c := range []struct {
		name   string
		status RunStatus
		wave   *int
		live   int
		want   WaitReason // "" = look for a task
	}{
		{"finished", RunCompleted, &wave, 0, WaitRunFinished},
		{"cancelled", RunCancelled, &wave, 0, WaitRunFinished},
		{"paused", RunPaused, &wave, 0, WaitRunNotRunning},
		{"no current wave", RunRunning, nil, 0, WaitRunNotRunning},
		{"at the limit", RunRunning, &wave, 2, WaitConcurrencyLimit},
		{"over the limit", RunRunning, &wave, 3, WaitConcurrencyLimit},
		{"room left", RunRunning, &wave, 1, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := ClaimWait(&ExecutionRun{Status: c.status, CurrentWave: c.wave, MaxParallelAgents: 2}, c.live)
			if c.want == "" {
				require.Nil(t, got)
				return
			}
			require.NotNil(t, got)
			require.Equal(t, c.want, *got)
		})
	}
}

func TestDirective(t *testing.T) {
	require.Equal(t, DirectiveContinue, DirectiveFor(RunRunning))
	require.Equal(t, DirectivePause, DirectiveFor(RunPaused))
	require.Equal(t, DirectiveCancel, DirectiveFor(RunCancelled))
	require.Equal(t, DirectiveContinue, DirectiveFor(RunCompleted), "a finished run's agents are fenced, not cancelled")
}

func TestHeartbeatIsNews(t *testing.T) {
	step := "compiling"
	other := "testing"
	fresh := &BuildAgent{}
	seen := &BuildAgent{HeartbeatCount: 3, ProgressPercent: 40, CurrentStep: &step}
	forty, fifty := 40, 50
	require.True(t, HeartbeatIsNews(fresh, nil, nil), "the first heartbeat")
	require.False(t, HeartbeatIsNews(seen, nil, nil), "a bare pulse")
	require.False(t, HeartbeatIsNews(seen, &forty, &step), "the same progress and step")
	require.True(t, HeartbeatIsNews(seen, &fifty, nil), "progress moved")
	require.True(t, HeartbeatIsNews(seen, nil, &other), "step moved")
	require.True(t, HeartbeatIsNews(&BuildAgent{HeartbeatCount: 1}, nil, &step), "a first step")
}

// waveOf is a wave of tasks in the given statuses, its counters moved by
// WaveCountDelta as each task reached its status from PENDING.
func waveOf(statuses ...WaveStatus) *Wave {
	w := &Wave{TaskCount: len(statuses)}
	for _, s := range statuses {
		c, f, k := WaveCountDelta(WavePending, s)
		w.CompletedCount, w.FailedCount, w.SkippedCount = w.CompletedCount+c, w.FailedCount+f, w.SkippedCount+k
	}
	return w
}

func TestWaveCountDelta(t *testing.T) {
	for _, c := range []struct {
		from, to WaveStatus
		want     [3]int
	}{
		{WavePending, WaveInProgress, [3]int{0, 0, 0}},
		{WaveInProgress, WavePending, [3]int{0, 0, 0}},
		{WaveInProgress, WaveCompleted, [3]int{1, 0, 0}},
		{WaveInProgress, WaveFailed, [3]int{0, 1, 0}},
		{WavePending, WaveFailed, [3]int{0, 1, 0}},
		{WavePending, WaveSkipped, [3]int{0, 0, 1}},
		{WaveFailed, WavePending, [3]int{0, -1, 0}},
		{WaveCompleted, WaveCompleted, [3]int{0, 0, 0}},
	} {
		c1, f, k := WaveCountDelta(c.from, c.to)
		require.Equal(t, c.want, [3]int{c1, f, k}, "%s -> %s", c.from, c.to)
	}
}

func TestAdvanceWave(t *testing.T) {
	for _, c := range []struct {
		name      string
		status    WaveStatus
		tasks     []WaveStatus
		next      WaveStatus
		holds     bool
		eager     WaveStatus // AdvanceEagerWave's answer
		completed int
		failed    int
		skipped   int
	}{
		{"pending wave with work starts", WavePending, []WaveStatus{WavePending, WaveSkipped}, WaveInProgress, true, WavePending, 0, 0, 1},
		{"pending wave all skipped never runs", WavePending, []WaveStatus{WaveSkipped, WaveSkipped}, WaveSkipped, false, WaveSkipped, 0, 0, 2},
		{"running wave with a task left holds", WaveInProgress, []WaveStatus{WaveCompleted, WaveInProgress}, WaveInProgress, true, WaveInProgress, 1, 0, 0},
		{"running wave with a pending retry holds", WaveInProgress, []WaveStatus{WaveCompleted, WavePending}, WaveInProgress, true, WaveInProgress, 1, 0, 0},
		{"all done completes", WaveInProgress, []WaveStatus{WaveCompleted, WaveCompleted, WaveSkipped}, WaveCompleted, false, WaveCompleted, 2, 0, 1},
		{"a failure fails the wave", WaveInProgress, []WaveStatus{WaveCompleted, WaveFailed}, WaveFailed, false, WaveFailed, 1, 1, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			tally := waveOf(c.tasks...).Tally()
			require.Equal(t, [3]int{c.completed, c.failed, c.skipped}, [3]int{tally.Completed, tally.Failed, tally.Skipped})
			next, holds := AdvanceWave(c.status, tally)
			require.Equal(t, c.next, next)
			require.Equal(t, c.holds, holds)
			require.Equal(t, c.eager, AdvanceEagerWave(c.status, tally), "EAGER")
		})
	}
}

func TestRunOutcome(t *testing.T) {
	st, reason := RunOutcome(2, 2)
	require.Equal(t, RunCompleted, st)
	require.Nil(t, reason)
	st, reason = RunOutcome(3, 1)
	require.Equal(t, RunFailed, st)
	require.Equal(t, "2 of 3 tasks did not complete", *reason)
	st, _ = RunOutcome(0, 0)
	require.Equal(t, RunCompleted, st, "a run with nothing to do completes")
}

func TestShouldRetry(t *testing.T) {
	require.True(t, ShouldRetry(true, 1, 3, RunRunning))
	require.True(t, ShouldRetry(true, 2, 3, RunPaused))
	require.False(t, ShouldRetry(true, 3, 3, RunRunning), "attempts exhausted")
	require.False(t, ShouldRetry(false, 1, 3, RunRunning), "not retryable")
	require.False(t, ShouldRetry(true, 1, 3, RunCancelled), "the run was cancelled")
}

func TestUnpassedTests(t *testing.T) {
	task := &Task{CodebaseTests: Strings{"go test"}, APITests: Strings{"curl health"}, UITests: Strings{}}
	result := func(level TestLevel, i int, st TestStatus) *TaskTestResult {
		return &TaskTestResult{TestLevel: level, TestIndex: i, Status: st}
	}
	require.Equal(t, []string{`CODEBASE test 0 "go test" has no result`, `API test 0 "curl health" has no result`},
		UnpassedTests(task, nil))
	require.Equal(t, []string{`API test 0 "curl health" is FAILED`},
		UnpassedTests(task, []*TaskTestResult{result(TestCodebase, 0, TestPassed), result(TestAPI, 0, TestFailed)}))
	require.Empty(t, UnpassedTests(task, []*TaskTestResult{
		result(TestCodebase, 0, TestFailed), result(TestCodebase, 0, TestPassed), result(TestAPI, 0, TestPassed)}),
		"the latest result of a test counts")
	require.Empty(t, UnpassedTests(&Task{}, nil), "a task without tests passes the gate")
}

func TestDependentsToSkip(t *testing.T) {
	link := func(src, dst string, typ RelationshipType) *TaskRelationship {
		return &TaskRelationship{SourceTaskID: src, TargetTaskID: dst, Type: typ}
	}
	// b DEPENDS_ON a; a BLOCKS c; d DEPENDS_ON b; e RELATED_TO a; f DEPENDS_ON c.
	waiting := WaitingOn([]*TaskRelationship{
		link("b", "a", RelDependsOn), link("a", "c", RelBlocks), link("d", "b", RelDependsOn),
		link("e", "a", RelRelatedTo), link("f", "c", RelDependsOn),
	})
	require.ElementsMatch(t, []string{"b", "c"}, waiting["a"])
	pending := map[string]bool{"b": true, "c": true, "d": true, "e": true}
	require.Equal(t, []string{"b", "c", "d"}, DependentsToSkip(waiting, "a", pending),
		"transitive dependents that are still pending; f is not pending, e does not wait")
	require.Empty(t, DependentsToSkip(waiting, "d", pending))
}

func TestCheckManualTransition(t *testing.T) {
	require.NoError(t, CheckManualTransition(StatusPending, StatusBlocked, 0, false))
	err := CheckManualTransition(StatusPending, StatusBlocked, 2, true)
	require.Error(t, err)
	e, _ := AsError(err)
	require.Equal(t, CodeInvalidTransition, e.Code)
	require.Contains(t, e.Message, "execution run 2")
	e, _ = AsError(CheckManualTransition(StatusCompleted, StatusPending, 2, true))
	require.Equal(t, "a COMPLETED task is final", e.Message, "the lifecycle speaks first")
	e, _ = AsError(CheckManualTransition(StatusInProgress, StatusPending, 0, false))
	require.Contains(t, e.Message, "only the execution engine")
}

func TestImpactAccuracy(t *testing.T) {
	impacts := []*TaskFileImpact{{ID: "1", FilePath: "a.go"}, {ID: "2", FilePath: "b.go"}, {ID: "3", FilePath: "a.go"}}
	accurate, inaccurate := ImpactAccuracy(impacts, []string{"a.go", "c.go"})
	require.Equal(t, []string{"1", "3"}, accurate)
	require.Equal(t, []string{"2"}, inaccurate)
	accurate, inaccurate = ImpactAccuracy(impacts, nil)
	require.Empty(t, accurate)
	require.Len(t, inaccurate, 3)
}
