package domain

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestScheduleValid(t *testing.T) {
	require.True(t, ScheduleWaves.Valid())
	require.True(t, ScheduleEager.Valid())
	require.False(t, TaskListSchedule("SOON").Valid())
	require.False(t, TaskListSchedule("").Valid())
	require.Equal(t, ScheduleWaves, DefaultSchedule)
}

func TestEagerReady(t *testing.T) {
	for _, c := range []struct {
		name     string
		deps     []WaveStatus
		partners []TaskStatus
		want     bool
	}{
		{"nothing to wait for", nil, nil, true},
		{"every dependency completed", []WaveStatus{WaveCompleted, WaveCompleted}, nil, true},
		{"a dependency pending", []WaveStatus{WaveCompleted, WavePending}, nil, false},
		{"a dependency running", []WaveStatus{WaveInProgress}, nil, false},
		{"a dependency failed: never ready (skipped)", []WaveStatus{WaveFailed}, nil, false},
		{"a dependency skipped", []WaveStatus{WaveSkipped}, nil, false},
		{"a conflicting task running", nil, []TaskStatus{StatusPending, StatusInProgress}, false},
		{"a conflicting task validating", nil, []TaskStatus{StatusValidating}, false},
		{"conflicting tasks not running", nil, []TaskStatus{StatusPending, StatusCompleted, StatusFailed, StatusBlocked}, true},
		{"met dependency, busy partner", []WaveStatus{WaveCompleted}, []TaskStatus{StatusInProgress}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.want, EagerReady(c.deps, c.partners))
		})
	}
}

func TestRunDependencies(t *testing.T) {
	links := []*TaskRelationship{
		{SourceTaskID: "b", TargetTaskID: "a", Type: RelDependsOn}, // b waits on a
		{SourceTaskID: "a", TargetTaskID: "c", Type: RelBlocks},    // c waits on a
		{SourceTaskID: "c", TargetTaskID: "x", Type: RelDependsOn}, // x is not in the run
		{SourceTaskID: "b", TargetTaskID: "c", Type: RelRelatedTo}, // not an ordering link
		{SourceTaskID: "b", TargetTaskID: "a", Type: RelDependsOn}, // twice
		{SourceTaskID: "d", TargetTaskID: "d", Type: RelDependsOn}, // on itself
	}
	in := map[string]bool{"a": true, "b": true, "c": true, "d": true}
	require.Equal(t, []RunDependency{
		{RunID: "r", TaskID: "b", WaitsOnTaskID: "a"},
		{RunID: "r", TaskID: "c", WaitsOnTaskID: "a"},
	}, RunDependencies("r", links, in))
	require.Empty(t, RunDependencies("r", links, map[string]bool{"b": true}), "a dependency outside the run is not the run's")
}

func TestRunConflicts(t *testing.T) {
	require.Equal(t, []RunConflict{
		{RunID: "r", TaskID: "a", OtherTaskID: "b"},
		{RunID: "r", TaskID: "a", OtherTaskID: "c"},
		{RunID: "r", TaskID: "b", OtherTaskID: "a"},
		{RunID: "r", TaskID: "c", OtherTaskID: "a"},
	}, RunConflicts("r", [][2]string{{"b", "a"}, {"a", "c"}, {"a", "b"}, {"d", "d"}}))
	require.Empty(t, RunConflicts("r", nil))
}

func TestCriticalHours(t *testing.T) {
	// a -> b -> d, a -> c -> d (arrows: "is waited on by"); e alone.
	hours := map[string]float64{"a": 1, "b": 6, "c": 2, "d": 16, "e": 40}
	waitingOn := map[string][]string{"a": {"b", "c"}, "b": {"d"}, "c": {"d", "outside"}}
	require.Equal(t, map[string]float64{"a": 23, "b": 22, "c": 18, "d": 16, "e": 40}, CriticalHours(hours, waitingOn))

	// A cycle is cut where it closes; every task still gets its hours.
	cyc := CriticalHours(map[string]float64{"x": 1, "y": 2}, map[string][]string{"x": {"y"}, "y": {"x"}})
	require.Equal(t, 3.0, cyc["x"])
	require.Equal(t, 2.0, cyc["y"])

	// A chain longer than any recursion would like.
	long := map[string]float64{}
	chain := map[string][]string{}
	for i := range 20000 {
		id := string(rune(0x4e00 + i))
		long[id] = 1
		if i > 0 {
			prev := string(rune(0x4e00 + i - 1))
			chain[prev] = []string{id}
		}
	}
	require.Equal(t, 20000.0, CriticalHours(long, chain)[string(rune(0x4e00))])
}

func TestEagerRanks(t *testing.T) {
	plan := []string{"a", "b", "c", "d", "e"} // the plan's order
	critical := map[string]float64{"a": 6, "b": 12, "c": 6, "d": 40, "e": 12}
	require.Equal(t, map[string]int{"d": 1, "b": 2, "e": 3, "a": 4, "c": 5}, EagerRanks(plan, critical),
		"longest chain first; among equals, the plan's order")
	require.Empty(t, EagerRanks(nil, nil))
}

func TestStartsWave(t *testing.T) {
	require.True(t, StartsWave(WavePending))
	for _, s := range []WaveStatus{WaveInProgress, WaveCompleted, WaveFailed, WaveSkipped} {
		require.False(t, StartsWave(s), s)
	}
}

func TestEagerCurrentWave(t *testing.T) {
	waves := func(statuses ...WaveStatus) []*Wave {
		out := make([]*Wave, len(statuses))
		for i, s := range statuses {
			out[i] = &Wave{WaveNumber: i + 1, Status: s}
		}
		return out
	}
	at := func(ws []*Wave) any {
		if n := EagerCurrentWave(ws); n != nil {
			return *n
		}
		return nil
	}
	require.Equal(t, 1, at(waves(WaveInProgress, WaveInProgress, WavePending)))
	require.Equal(t, 2, at(waves(WaveCompleted, WavePending, WaveCompleted)), "a later wave ended first")
	require.Equal(t, 3, at(waves(WaveCompleted, WaveSkipped, WaveInProgress)))
	require.Equal(t, 3, at(waves(WaveCompleted, WaveFailed, WaveCompleted)), "all over: the last")
	require.Nil(t, at(nil))
}
