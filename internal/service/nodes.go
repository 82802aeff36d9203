package service

import (
	"context"

	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/auth"
	"github.com/taskgraph/taskgraph/internal/domain"
)

// Node resolves a global id of the core's kinds the caller may see; nil
// otherwise.
func (s *Service) Node(ctx context.Context, gid string) (domain.Node, error) {
	return app.NewNodes(s.NodeOf).Node(ctx, gid)
}

// Nodes is Node for several ids, in order.
func (s *Service) Nodes(ctx context.Context, gids []string) ([]domain.Node, error) {
	return app.NewNodes(s.NodeOf).Nodes(ctx, gids)
}

// NodeOf loads an entity of the core's kinds (an app.NodeSource) and checks
// that its project (or owner) is visible.
func (s *Service) NodeOf(ctx context.Context, p *auth.Principal, kind domain.Kind, id string) (domain.Node, bool, error) {
	if !coreKinds[kind] {
		return nil, false, nil
	}
	node, err := s.node(ctx, p, kind, id)
	return node, true, err
}

// coreKinds are the kinds of the core's entities.
var coreKinds = map[domain.Kind]bool{
	domain.KindUser: true, domain.KindAPIToken: true, domain.KindTemplate: true, domain.KindProject: true,
	domain.KindIdea: true, domain.KindTaskList: true, domain.KindTask: true, domain.KindExecutionRun: true,
	domain.KindWave: true, domain.KindWaveAssignment: true, domain.KindBuildAgent: true, domain.KindAgentHeartbeat: true,
	domain.KindTaskExecution: true, domain.KindTaskTestResult: true, domain.KindTaskListItem: true,
	domain.KindRelationship: true, domain.KindStateChange: true, domain.KindTaskBlock: true, domain.KindFileImpact: true,
	domain.KindParallelismAnalysis: true,
}

// node loads one entity and checks that its project (or owner) is visible.
func (s *Service) node(ctx context.Context, p *auth.Principal, kind domain.Kind, id string) (domain.Node, error) {
	l := s.load(ctx)
	var (
		projectID string
		node      domain.Node
	)
	switch kind {
	case domain.KindUser:
		u, err := l.users.Load(ctx, id)
		if err != nil || u == nil || !canSeeUser(p, u.ID) {
			return nil, err
		}
		return u, nil
	case domain.KindAPIToken:
		t, err := l.tokens.Load(ctx, id)
		if err != nil || t == nil || !(p.IsAdmin() || t.UserID == p.UserID) {
			return nil, err
		}
		return t, nil
	case domain.KindTemplate:
		t, err := l.templates.Load(ctx, id)
		if err != nil || t == nil {
			return nil, err
		}
		if ok, err := s.Tasks.canUseTemplate(ctx, p, t); err != nil || !ok {
			return nil, err
		}
		return t, nil
	case domain.KindProject:
		projectID = id
		v, err := l.projects.Load(ctx, id)
		if err != nil || v == nil {
			return nil, err
		}
		node = v
	case domain.KindIdea:
		v, err := l.ideas.Load(ctx, id)
		if err != nil || v == nil {
			return nil, err
		}
		node, projectID = v, v.ProjectID
	case domain.KindTaskList:
		v, err := l.lists.Load(ctx, id)
		if err != nil || v == nil {
			return nil, err
		}
		node, projectID = v, v.ProjectID
	case domain.KindTask:
		v, err := l.tasks.Load(ctx, id)
		if err != nil || v == nil {
			return nil, err
		}
		node, projectID = v, v.ProjectID
	case domain.KindExecutionRun, domain.KindWave, domain.KindWaveAssignment, domain.KindBuildAgent,
		domain.KindAgentHeartbeat, domain.KindTaskExecution, domain.KindTaskTestResult:
		v, pid, err := s.executionNode(ctx, kind, id)
		if err != nil || v == nil {
			return nil, err
		}
		node, projectID = v, pid
	default:
		var (
			taskID string
			err    error
		)
		if node, taskID, err = s.taskChild(ctx, kind, id); err != nil || node == nil {
			return nil, err
		}
		t, err := l.tasks.Load(ctx, taskID)
		if err != nil || t == nil {
			return nil, err
		}
		projectID = t.ProjectID
	}
	if err := s.Projects.visibleProjectID(ctx, p, projectID); err != nil {
		return nil, nil
	}
	return node, nil
}

// taskChild loads an entity that hangs off a task, with the task's id.
func (s *Service) taskChild(ctx context.Context, kind domain.Kind, id string) (domain.Node, string, error) {
	l := s.load(ctx)
	switch kind {
	case domain.KindTaskListItem:
		v, err := l.items.Load(ctx, id)
		if v == nil {
			return nil, "", err
		}
		return v, v.TaskID, err
	case domain.KindRelationship:
		v, err := l.relationships.Load(ctx, id)
		if v == nil {
			return nil, "", err
		}
		return v, v.SourceTaskID, err
	case domain.KindStateChange:
		v, err := l.stateChanges.Load(ctx, id)
		if v == nil {
			return nil, "", err
		}
		return v, v.TaskID, err
	case domain.KindTaskBlock:
		v, err := l.blocks.Load(ctx, id)
		if v == nil {
			return nil, "", err
		}
		return v, v.TaskID, err
	case domain.KindFileImpact:
		v, err := l.impacts.Load(ctx, id)
		if v == nil {
			return nil, "", err
		}
		return v, v.TaskID, err
	case domain.KindParallelismAnalysis:
		// Both tasks of a pair are of one project (links and lists never
		// cross projects): task A stands for it.
		v, err := s.exec(ctx).analyses.Load(ctx, id)
		if v == nil {
			return nil, "", err
		}
		return v, v.TaskAID, err
	}
	return nil, "", nil
}

// executionNode loads a run or a part of one, with its project.
func (s *Service) executionNode(ctx context.Context, kind domain.Kind, id string) (domain.Node, string, error) {
	ids := []string{id}
	var (
		node  domain.Node
		runID = id // KindExecutionRun
		err   error
	)
	switch kind {
	case domain.KindWave:
		vs, e := s.db.Runs.WavesByIDs(ctx, ids)
		node, runID, err = runPart(vs, e, func(v *domain.Wave) string { return v.RunID })
	case domain.KindWaveAssignment:
		vs, e := s.db.Runs.AssignmentsByIDs(ctx, ids)
		node, runID, err = runPart(vs, e, func(v *domain.WaveTaskAssignment) string { return v.RunID })
	case domain.KindBuildAgent:
		vs, e := s.db.Runs.AgentsByIDs(ctx, ids)
		node, runID, err = runPart(vs, e, func(v *domain.BuildAgent) string { return v.RunID })
	case domain.KindAgentHeartbeat:
		vs, e := s.db.Runs.HeartbeatsByIDs(ctx, ids)
		node, runID, err = runPart(vs, e, func(v *domain.AgentHeartbeat) string { return v.RunID })
	case domain.KindTaskExecution:
		vs, e := s.db.Runs.ExecutionsByIDs(ctx, ids)
		node, runID, err = runPart(vs, e, func(v *domain.TaskExecution) string { return v.RunID })
	case domain.KindTaskTestResult:
		vs, e := s.db.Runs.TestResultsByIDs(ctx, ids)
		node, runID, err = runPart(vs, e, func(v *domain.TaskTestResult) string { return v.RunID })
	}
	if err != nil || runID == "" {
		return nil, "", err
	}
	run, err := s.Runs.RunByID(ctx, &runID)
	if err != nil || run == nil {
		return nil, "", err
	}
	if node == nil {
		node = run
	}
	return node, run.ProjectID, nil
}

// runPart is the row of a by-id load of a part of a run, with its run's id
// ("" when there is none).
func runPart[T domain.Node](rows []T, err error, runOf func(T) string) (domain.Node, string, error) {
	if err != nil || len(rows) == 0 {
		return nil, "", err
	}
	return rows[0], runOf(rows[0]), nil
}
