package service

import (
	"context"

	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/planning"
	"github.com/taskgraph/taskgraph/internal/store"
)

// WavePlan computes the plan of a task list: a dry
// run that changes nothing. Its reads are a constant number of statements, in
// one snapshot, whatever the size of the list; the tasks they return are primed
// into the request's loader, so the plan's Task fields cost no more.
func (s *Lists) WavePlan(ctx context.Context, listGID string) (*planning.Plan, error) {
	p, err := app.Caller(ctx)
	if err != nil {
		return nil, err
	}
	l, err := s.visibleList(ctx, p, listGID, "taskListId")
	if err != nil {
		return nil, err
	}
	var pd planData
	if err := s.db.InReadTx(ctx, func(q *store.Q) error {
		pd, err = loadPlanData(ctx, q, l.ID)
		return err
	}); err != nil {
		return nil, err
	}
	ld := s.load(ctx)
	for _, t := range append(pd.tasks, pd.outside...) {
		ld.tasks.Prime(t.ID, t)
	}
	return planning.Compute(pd.input), nil
}

// planData is what a list's plan is computed from, with the rows it was built of.
type planData struct {
	input   planning.Input
	tasks   []*domain.Task // the list's tasks
	outside []*domain.Task // tasks outside the list that its tasks wait on
}

// loadPlanData reads a list's planning input in four statements: its tasks,
// their file impacts, the planning links touching them, and the outside tasks
// they wait on. Run it in one transaction for a consistent plan.
func loadPlanData(ctx context.Context, q *store.Q, listID string) (planData, error) {
	var pd planData
	var err error
	if pd.tasks, err = q.Planning.TasksOfList(ctx, listID); err != nil {
		return pd, err
	}
	impacts, err := q.Planning.FileImpactsOfList(ctx, listID)
	if err != nil {
		return pd, err
	}
	links, err := q.Planning.PlanningLinksOfList(ctx, listID)
	if err != nil {
		return pd, err
	}
	if pd.outside, err = q.Planning.OutsideDependenciesOfList(ctx, listID); err != nil {
		return pd, err
	}
	files := map[string][]planning.FileImpact{}
	for _, fi := range impacts {
		files[fi.TaskID] = append(files[fi.TaskID], planning.FileImpact{Path: fi.FilePath, Operation: fi.Operation})
	}
	in := &pd.input
	in.Tasks = make([]planning.Task, len(pd.tasks))
	for i, t := range pd.tasks {
		in.Tasks[i] = planning.Task{ID: t.ID, DisplayID: t.DisplayID, Status: t.Status, PriorityScore: t.PriorityScore,
			Effort: t.Effort, Files: files[t.ID]}
	}
	in.Links = make([]planning.Link, len(links))
	for i, r := range links {
		in.Links[i] = planning.Link{Source: r.SourceTaskID, Target: r.TargetTaskID, Type: r.Type}
	}
	in.Outside = make([]planning.OutsideTask, len(pd.outside))
	for i, t := range pd.outside {
		in.Outside[i] = planning.OutsideTask{ID: t.ID, DisplayID: t.DisplayID, Status: t.Status}
	}
	return pd, nil
}

// PlannedTasks loads the tasks a plan names, in order (the plan's entry point
// primed them).
func (s *Lists) PlannedTasks(ctx context.Context, ids []string) ([]*domain.Task, error) {
	tasks, err := s.load(ctx).tasks.LoadMany(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := tasks[:0]
	for _, t := range tasks {
		if t != nil {
			out = append(out, t)
		}
	}
	return out, nil
}

// PlannedTask loads one task a plan names.
func (s *Lists) PlannedTask(ctx context.Context, id string) (*domain.Task, error) {
	t, err := s.load(ctx).tasks.Load(ctx, id)
	if err == nil && t == nil {
		return nil, domain.NotFound("task")
	}
	return t, err
}
