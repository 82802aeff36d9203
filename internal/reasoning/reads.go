package reasoning

import (
	"context"

	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/auth"
	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/loader"
	"github.com/taskgraph/taskgraph/internal/store"
)

// loaders are the request's batched reads of reasoning records: every nested
// field reads through one of them, so a query costs one statement per level
// whatever the number of passes, issues or steps.
type loaders struct {
	projects          *loader.Loader[string, *domain.Project]
	executions        *loader.Loader[string, *domain.ReasoningExecution]
	profiles          *loader.Loader[string, *domain.TaskProfile]
	profilesByExec    *loader.Loader[string, []*domain.TaskProfile]
	passes            *loader.Loader[string, *domain.ExecutionPass]
	passesByExec      *loader.Loader[string, []*domain.ExecutionPass]
	assessmentsByPass *loader.Loader[string, *domain.ConvergenceAssessment]
	assessmentsByExec *loader.Loader[string, []*domain.ConvergenceAssessment]
	reports           *loader.Loader[string, *domain.SemanticValidationReport]
	reportsByPass     *loader.Loader[string, *domain.SemanticValidationReport]
	issuesByReport    *loader.Loader[string, []*domain.ValidationIssue]
	refinements       *loader.Loader[string, *domain.RefinementAction]
	refinementsByPass *loader.Loader[string, []*domain.RefinementAction]
	refinementCounts  *loader.Loader[string, int]
	steps             *loader.Loader[string, *domain.ReasoningStep]
	stepsByExec       *loader.Loader[string, []*domain.ReasoningStep]
	all               []app.Clearer
}

type loadersKey struct{}

func newLoaders(s *Service, w loader.Timing) *loaders {
	q := &s.db.Q
	r := q.Reasoning
	l := &loaders{}
	l.projects = loader.New(w, app.ByID(q.Projects.ProjectsByIDs, func(v *domain.Project) string { return v.ID }))
	l.executions = loader.New(w, app.ByID(r.ReasoningExecutionsByIDs, func(v *domain.ReasoningExecution) string { return v.ID }))
	l.profiles = loader.New(w, app.ByID(r.TaskProfilesByIDs, func(v *domain.TaskProfile) string { return v.ID }))
	l.profilesByExec = loader.New(w, app.GroupedBy(r.TaskProfilesByExecutions, func(v *domain.TaskProfile) string { return v.ExecutionID }))
	l.passes = loader.New(w, app.ByID(r.ExecutionPassesByIDs, func(v *domain.ExecutionPass) string { return v.ID }))
	l.passesByExec = loader.New(w, app.GroupedBy(r.ExecutionPassesByExecutions, func(v *domain.ExecutionPass) string { return v.ExecutionID }))
	l.assessmentsByPass = loader.New(w, app.ByID(r.AssessmentsByPasses, func(v *domain.ConvergenceAssessment) string { return v.PassID }))
	l.assessmentsByExec = loader.New(w, app.GroupedBy(r.AssessmentsByExecutions, func(v *domain.ConvergenceAssessment) string { return v.ExecutionID }))
	l.reports = loader.New(w, app.ByID(r.ValidationReportsByIDs, func(v *domain.SemanticValidationReport) string { return v.ID }))
	l.reportsByPass = loader.New(w, app.ByID(r.ValidationReportsByPasses, func(v *domain.SemanticValidationReport) string { return v.PassID }))
	l.issuesByReport = loader.New(w, app.GroupedBy(r.ValidationIssuesByReports, func(v *domain.ValidationIssue) string { return v.ReportID }))
	l.refinements = loader.New(w, app.ByID(r.RefinementsByIDs, func(v *domain.RefinementAction) string { return v.ID }))
	l.refinementsByPass = loader.New(w, app.GroupedBy(r.RefinementsByPasses, func(v *domain.RefinementAction) string { return v.PassID }))
	l.refinementCounts = loader.New(w, r.CountRefinementsByExecutions)
	l.steps = loader.New(w, app.ByID(r.ReasoningStepsByIDs, func(v *domain.ReasoningStep) string { return v.ID }))
	l.stepsByExec = loader.New(w, app.GroupedBy(r.ReasoningStepsByExecutions, func(v *domain.ReasoningStep) string { return v.ExecutionID }))
	l.all = []app.Clearer{l.projects, l.executions, l.profiles, l.profilesByExec, l.passes, l.passesByExec, l.assessmentsByPass,
		l.assessmentsByExec, l.reports, l.reportsByPass, l.issuesByReport, l.refinements, l.refinementsByPass, l.refinementCounts,
		l.steps, l.stepsByExec}
	return l
}

// Clear forgets every cached read.
func (l *loaders) Clear() {
	for _, c := range l.all {
		c.Clear()
	}
}

// load returns the request's reasoning loaders.
func (s *Service) load(ctx context.Context) *loaders {
	return app.Set(ctx, loadersKey{}, func(w loader.Timing) *loaders { return newLoaders(s, w) })
}

// visible reports whether p may read the records of execution e.
func (s *Service) visible(ctx context.Context, p *auth.Principal, e *domain.ReasoningExecution) (bool, error) {
	if e == nil {
		return false, nil
	}
	project, err := s.load(ctx).projects.Load(ctx, e.ProjectID)
	if err != nil {
		return false, err
	}
	return app.CanSee(p, project), nil
}

// ReasoningExecution finds an execution by global id; nil when absent or
// not visible.
func (s *Service) ReasoningExecution(ctx context.Context, gid string) (*domain.ReasoningExecution, error) {
	p, err := app.Caller(ctx)
	if err != nil {
		return nil, err
	}
	kind, id, ok := domain.ParseGlobalID(gid)
	if !ok {
		return nil, domain.InputError("id", "%q is not a valid id", gid)
	}
	if kind != domain.KindReasoningExecution {
		return nil, nil
	}
	e, err := s.load(ctx).executions.Load(ctx, id)
	if err != nil {
		return nil, err
	}
	if ok, err := s.visible(ctx, p, e); err != nil || !ok {
		return nil, err
	}
	return e, nil
}

// ReasoningExecutionsArgs are the arguments of the reasoningExecutions query.
type ReasoningExecutionsArgs struct {
	ProjectID string
	// Status keeps the executions in these statuses (empty: all).
	Status []domain.ReasoningStatus
	// TaskID and RunID, global ids, keep the executions about that task or of
	// that run, which must be the project's (NOT_FOUND naming the argument).
	TaskID, RunID *string
	Page          domain.PageArgs
}

// ReasoningExecutions pages a project's executions, oldest first, filtered
// by status, task and run when given.
func (s *Service) ReasoningExecutions(ctx context.Context, args ReasoningExecutionsArgs) (domain.Page[*domain.ReasoningExecution], error) {
	projectGID, statuses := args.ProjectID, args.Status
	var none domain.Page[*domain.ReasoningExecution]
	p, err := app.Caller(ctx)
	if err != nil {
		return none, err
	}
	projectID, err := decode(domain.KindProject, projectGID, "projectId", "project")
	if err != nil {
		return none, err
	}
	project, err := s.load(ctx).projects.Load(ctx, projectID)
	if err != nil {
		return none, err
	}
	if !app.CanSee(p, project) {
		return none, notFound("projectId", "project")
	}
	if len(statuses) > len(domain.ReasoningStatuses) {
		return none, domain.InputError("status", "at most %d statuses", len(domain.ReasoningStatuses))
	}
	st := make([]string, len(statuses))
	for i, v := range statuses {
		st[i] = string(v)
	}
	filter := store.ReasoningExecutionFilter{ProjectID: projectID, Statuses: st}
	if filter.TaskID, err = s.taskOfProject(ctx, args.TaskID, projectID); err != nil {
		return none, err
	}
	if filter.RunID, err = s.runOfProject(ctx, args.RunID, projectID); err != nil {
		return none, err
	}
	return s.db.Reasoning.ReasoningExecutionsOfProject(ctx, filter, args.Page)
}

// taskOfProject decodes the taskId argument: nil without one, NOT_FOUND
// (field taskId) unless it names a task of the project.
func (s *Service) taskOfProject(ctx context.Context, gid *string, projectID string) (*string, error) {
	id, err := domain.DecodeOptionalID(domain.KindTask, gid, "taskId")
	if domain.ErrorCode(err) == domain.CodeNotFound {
		return nil, notFound("taskId", "task")
	} else if err != nil || id == nil {
		return nil, err
	}
	tasks, err := s.db.Tasks.TasksByIDs(ctx, []string{*id})
	if err != nil {
		return nil, err
	}
	if len(tasks) == 0 || tasks[0].ProjectID != projectID {
		return nil, notFound("taskId", "task")
	}
	return id, nil
}

// runOfProject decodes the runId argument: nil without one, NOT_FOUND
// (field runId) unless it names a run of the project.
func (s *Service) runOfProject(ctx context.Context, gid *string, projectID string) (*string, error) {
	id, err := domain.DecodeOptionalID(domain.KindExecutionRun, gid, "runId")
	if domain.ErrorCode(err) == domain.CodeNotFound {
		return nil, notFound("runId", "execution run")
	} else if err != nil || id == nil {
		return nil, err
	}
	runs, err := s.db.Runs.RunsByIDs(ctx, []string{*id})
	if err != nil {
		return nil, err
	}
	if len(runs) == 0 || runs[0].ProjectID != projectID {
		return nil, notFound("runId", "execution run")
	}
	return id, nil
}

// NodeOf loads a reasoning record by kind (an app.NodeSource): nil when the
// caller may not see its project; ok is false for other kinds.
func (s *Service) NodeOf(ctx context.Context, p *auth.Principal, kind domain.Kind, id string) (domain.Node, bool, error) {
	l := s.load(ctx)
	var (
		node   domain.Node
		execID string
	)
	switch kind {
	case domain.KindReasoningExecution:
		e, err := l.executions.Load(ctx, id)
		if err != nil || e == nil {
			return nil, true, err
		}
		node, execID = e, e.ID
	case domain.KindTaskProfile:
		v, err := l.profiles.Load(ctx, id)
		if err != nil || v == nil {
			return nil, true, err
		}
		node, execID = v, v.ExecutionID
	case domain.KindExecutionPass:
		v, err := l.passes.Load(ctx, id)
		if err != nil || v == nil {
			return nil, true, err
		}
		node, execID = v, v.ExecutionID
	case domain.KindValidationReport:
		v, err := l.reports.Load(ctx, id)
		if err != nil || v == nil {
			return nil, true, err
		}
		node, execID = v, v.ExecutionID
	case domain.KindRefinementAction:
		v, err := l.refinements.Load(ctx, id)
		if err != nil || v == nil {
			return nil, true, err
		}
		node, execID = v, v.ExecutionID
	case domain.KindReasoningStep:
		v, err := l.steps.Load(ctx, id)
		if err != nil || v == nil {
			return nil, true, err
		}
		node, execID = v, v.ExecutionID
	default:
		return nil, false, nil
	}
	e, err := l.executions.Load(ctx, execID)
	if err != nil {
		return nil, true, err
	}
	if ok, err := s.visible(ctx, p, e); err != nil || !ok {
		return nil, true, err
	}
	return node, true, nil
}

// Nested reads: resolvers of related fields call these; the entry point
// already checked the caller.

// ExecutionByID loads an execution for nested fields.
func (s *Service) ExecutionByID(ctx context.Context, id string) (*domain.ReasoningExecution, error) {
	return s.load(ctx).executions.Load(ctx, id)
}

// ProfileByID loads a profile for nested fields.
func (s *Service) ProfileByID(ctx context.Context, id string) (*domain.TaskProfile, error) {
	return s.load(ctx).profiles.Load(ctx, id)
}

// PassByID loads a pass for nested fields.
func (s *Service) PassByID(ctx context.Context, id string) (*domain.ExecutionPass, error) {
	return s.load(ctx).passes.Load(ctx, id)
}

// ProfilesOf is an execution's profiles, by version.
func (s *Service) ProfilesOf(ctx context.Context, executionID string) ([]*domain.TaskProfile, error) {
	out, err := s.load(ctx).profilesByExec.Load(ctx, executionID)
	if out == nil && err == nil {
		out = []*domain.TaskProfile{}
	}
	return out, err
}

// CurrentProfile is an execution's newest profile.
func (s *Service) CurrentProfile(ctx context.Context, executionID string) (*domain.TaskProfile, error) {
	all, err := s.ProfilesOf(ctx, executionID)
	if err != nil || len(all) == 0 {
		return nil, err
	}
	return all[len(all)-1], nil
}

// PassesOf is an execution's passes, by number.
func (s *Service) PassesOf(ctx context.Context, executionID string) ([]*domain.ExecutionPass, error) {
	out, err := s.load(ctx).passesByExec.Load(ctx, executionID)
	if out == nil && err == nil {
		out = []*domain.ExecutionPass{}
	}
	return out, err
}

// StepsOf is an execution's plan, in order.
func (s *Service) StepsOf(ctx context.Context, executionID string) ([]*domain.ReasoningStep, error) {
	out, err := s.load(ctx).stepsByExec.Load(ctx, executionID)
	if out == nil && err == nil {
		out = []*domain.ReasoningStep{}
	}
	return out, err
}

// Statistics sums an execution up from its rows (passes, assessments,
// refinements), batched across executions.
func (s *Service) Statistics(ctx context.Context, executionID string) (*domain.ReasoningStatistics, error) {
	l := s.load(ctx)
	passes, err := l.passesByExec.Load(ctx, executionID)
	if err != nil {
		return nil, err
	}
	assessments, err := l.assessmentsByExec.Load(ctx, executionID)
	if err != nil {
		return nil, err
	}
	refinements, err := l.refinementCounts.Load(ctx, executionID)
	if err != nil {
		return nil, err
	}
	return domain.ComputeReasoningStatistics(passes, assessments, refinements), nil
}

// AssessmentOf is a pass's convergence assessment, nil before it has one.
func (s *Service) AssessmentOf(ctx context.Context, passID string) (*domain.ConvergenceAssessment, error) {
	return s.load(ctx).assessmentsByPass.Load(ctx, passID)
}

// ReportOf is a pass's validation report, nil before it has one.
func (s *Service) ReportOf(ctx context.Context, passID string) (*domain.SemanticValidationReport, error) {
	return s.load(ctx).reportsByPass.Load(ctx, passID)
}

// RefinementsOf is a pass's refinements, oldest first.
func (s *Service) RefinementsOf(ctx context.Context, passID string) ([]*domain.RefinementAction, error) {
	out, err := s.load(ctx).refinementsByPass.Load(ctx, passID)
	if out == nil && err == nil {
		out = []*domain.RefinementAction{}
	}
	return out, err
}

// IssuesOf is a report's issues, in reported order.
func (s *Service) IssuesOf(ctx context.Context, reportID string) ([]*domain.ValidationIssue, error) {
	out, err := s.load(ctx).issuesByReport.Load(ctx, reportID)
	if out == nil && err == nil {
		out = []*domain.ValidationIssue{}
	}
	return out, err
}
