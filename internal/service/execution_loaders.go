package service

import (
	"context"

	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/loader"
)

// executionLoaders are the request's batched reads of runs and their parts, so
// nested execution fields cost one statement per level. They hang off the
// request's loaders like the catalog's, created on first use.
type executionLoaders struct {
	runs           *loader.Loader[string, *domain.ExecutionRun]
	agents         *loader.Loader[string, *domain.BuildAgent]
	execOfAgent    *loader.Loader[string, *domain.TaskExecution]
	runsOfList     *loader.Loader[string, []*domain.ExecutionRun]
	wavesOfRun     *loader.Loader[string, []*domain.Wave]
	agentsOfRun    *loader.Loader[string, []*domain.BuildAgent]
	execsOfRun     *loader.Loader[string, []*domain.TaskExecution]
	assignsOfWave  *loader.Loader[string, []*domain.WaveTaskAssignment]
	resultsOfExecs *loader.Loader[string, []*domain.TaskTestResult]
	// The history's ends: waves and executions by id, a wave's agents and
	// executions.
	waves        *loader.Loader[string, *domain.Wave]
	execs        *loader.Loader[string, *domain.TaskExecution]
	agentsOfWave *loader.Loader[string, []*domain.BuildAgent]
	execsOfWave  *loader.Loader[string, []*domain.TaskExecution]
	// The parallelism analysis: rows by id, and each task's current rows.
	analyses        *loader.Loader[string, *domain.ParallelismAnalysis]
	conflictsOfTask *loader.Loader[string, []*domain.ParallelismAnalysis]
	all             []app.Clearer
}

type executionLoadersKey struct{}

func newExecutionLoaders(s *Service, w loader.Timing) *executionLoaders {
	q := &s.db.Q
	e := &executionLoaders{}
	e.runs = loader.New(w, app.ByID(q.Runs.RunsByIDs, func(v *domain.ExecutionRun) string { return v.ID }))
	e.agents = loader.New(w, app.ByID(q.Runs.AgentsByIDs, func(v *domain.BuildAgent) string { return v.ID }))
	e.execOfAgent = loader.New(w, app.ByID(q.Runs.ExecutionsOfAgents, func(v *domain.TaskExecution) string { return v.AgentID }))
	e.runsOfList = loader.New(w, app.GroupedBy(q.Runs.RunsOfLists, func(v *domain.ExecutionRun) string { return v.TaskListID }))
	e.wavesOfRun = loader.New(w, app.GroupedBy(q.Runs.WavesOfRuns, func(v *domain.Wave) string { return v.RunID }))
	e.agentsOfRun = loader.New(w, app.GroupedBy(q.Runs.AgentsOfRuns, func(v *domain.BuildAgent) string { return v.RunID }))
	e.execsOfRun = loader.New(w, app.GroupedBy(q.Runs.ExecutionsOfRuns, func(v *domain.TaskExecution) string { return v.RunID }))
	e.assignsOfWave = loader.New(w, app.GroupedBy(q.Runs.AssignmentsOfWaves, func(v *domain.WaveTaskAssignment) string { return v.WaveID }))
	e.resultsOfExecs = loader.New(w, app.GroupedBy(q.Runs.TestResultsOfExecutions, func(v *domain.TaskTestResult) string { return v.ExecutionID }))
	e.waves = loader.New(w, app.ByID(q.Runs.WavesByIDs, func(v *domain.Wave) string { return v.ID }))
	e.execs = loader.New(w, app.ByID(q.Runs.ExecutionsByIDs, func(v *domain.TaskExecution) string { return v.ID }))
	e.agentsOfWave = loader.New(w, app.GroupedBy(q.Runs.AgentsOfWaves, func(v *domain.BuildAgent) string { return v.WaveID }))
	e.execsOfWave = loader.New(w, app.GroupedBy(q.Runs.ExecutionsOfWaves, func(v *domain.TaskExecution) string { return v.WaveID }))
	e.analyses = loader.New(w, app.ByID(q.Planning.AnalysesByIDs, func(v *domain.ParallelismAnalysis) string { return v.ID }))
	e.conflictsOfTask = loader.New(w, app.Grouped(q.Planning.CurrentAnalysesOfTasks, func(v *domain.ParallelismAnalysis) []string {
		return []string{v.TaskAID, v.TaskBID}
	}))
	e.all = []app.Clearer{e.runs, e.agents, e.execOfAgent, e.runsOfList, e.wavesOfRun, e.agentsOfRun, e.execsOfRun,
		e.assignsOfWave, e.resultsOfExecs, e.waves, e.execs, e.agentsOfWave, e.execsOfWave, e.analyses, e.conflictsOfTask}
	return e
}

// Clear forgets every cached execution read.
func (e *executionLoaders) Clear() {
	for _, l := range e.all {
		l.Clear()
	}
}

// exec returns the request's execution loaders.
func (s *Service) exec(ctx context.Context) *executionLoaders {
	return app.Set(ctx, executionLoadersKey{}, func(w loader.Timing) *executionLoaders { return newExecutionLoaders(s, w) })
}

// children loads the children of one parent through ld; never nil.
func children[T any](ctx context.Context, ld *loader.Loader[string, []*T], parent string) ([]*T, error) {
	out, err := ld.Load(ctx, parent)
	if out == nil && err == nil {
		out = []*T{}
	}
	return out, err
}
