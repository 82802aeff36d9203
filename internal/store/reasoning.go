package store

import (
	"context"
	"time"

	"github.com/taskgraph/taskgraph/internal/domain"
)

// Reasoning records: executions, their profiles, passes, assessments,
// validation reports with issues, refinements and plan steps
// (db/migrations/*/0011_reasoning.sql).

const reasoningExecutionColumns = `id, project_id, session_id, task_id, run_id, task_input, configuration,
	completeness_threshold, coherence_threshold, ttl, status, final_result, created_by, created_at, updated_at, completed_at`

// InsertReasoningExecution inserts an execution.
func (q ReasoningQueries) InsertReasoningExecution(ctx context.Context, e *domain.ReasoningExecution) error {
	_, err := q.namedExec(ctx, `INSERT INTO reasoning_executions (`+reasoningExecutionColumns+`) VALUES (`+
		namedList(reasoningExecutionColumns)+`)`, e)
	return err
}

// ReasoningExecutionsByIDs loads executions by id.
func (q ReasoningQueries) ReasoningExecutionsByIDs(ctx context.Context, ids []string) ([]*domain.ReasoningExecution, error) {
	return byIDs[domain.ReasoningExecution](ctx, q.Q, "reasoning_executions", ids)
}

// ReasoningExecutionForUpdate loads an execution, locking its row in a
// PostgreSQL transaction: the changes of one execution queue behind each other.
func (q ReasoningQueries) ReasoningExecutionForUpdate(ctx context.Context, id string) (*domain.ReasoningExecution, error) {
	var e domain.ReasoningExecution
	if err := q.get(ctx, &e, `SELECT * FROM reasoning_executions WHERE id = ?`+q.forUpdate(), id); err != nil {
		return nil, err
	}
	return &e, nil
}

// FinishReasoningExecution writes an execution's final status and result.
func (q ReasoningQueries) FinishReasoningExecution(ctx context.Context, e *domain.ReasoningExecution) error {
	_, err := q.exec(ctx, `UPDATE reasoning_executions SET status = ?, final_result = ?, completed_at = ?, updated_at = ? WHERE id = ?`,
		e.Status, e.FinalResult, e.CompletedAt, e.UpdatedAt, e.ID)
	return err
}

// TouchReasoningExecution marks an execution changed at `at`.
func (q ReasoningQueries) TouchReasoningExecution(ctx context.Context, id string, at time.Time) error {
	_, err := q.exec(ctx, `UPDATE reasoning_executions SET updated_at = ? WHERE id = ?`, at, id)
	return err
}

// ReasoningExecutionFilter selects a project's executions: those in
// Statuses (empty: all), about TaskID and of RunID when set.
type ReasoningExecutionFilter struct {
	ProjectID     string
	Statuses      []string
	TaskID, RunID *string
}

// ReasoningExecutionsOfProject pages a project's executions that f keeps,
// oldest first (the task_id and run_id indexes serve the filters).
func (q ReasoningQueries) ReasoningExecutionsOfProject(ctx context.Context, f ReasoningExecutionFilter, page domain.PageArgs) (domain.Page[*domain.ReasoningExecution], error) {
	pq := createdPage("re", "reasoning_executions", func(e *domain.ReasoningExecution) time.Time { return e.CreatedAt },
		func(e *domain.ReasoningExecution) string { return e.ID }, page)
	pq.filter("re.project_id = ?", f.ProjectID)
	if len(f.Statuses) > 0 {
		pq.filter("re.status IN (?)", f.Statuses)
	}
	if f.TaskID != nil {
		pq.filter("re.task_id = ?", *f.TaskID)
	}
	if f.RunID != nil {
		pq.filter("re.run_id = ?", *f.RunID)
	}
	return rootPage(ctx, q.Q, pq)
}

const taskProfileColumns = `id, execution_id, profile_version, reasoning_depth, information_sufficiency, expected_tool_usage,
	output_breadth, confidence_requirement, raw_inference, is_default, created_at`

// InsertTaskProfile inserts a profile version.
func (q ReasoningQueries) InsertTaskProfile(ctx context.Context, p *domain.TaskProfile) error {
	_, err := q.namedExec(ctx, `INSERT INTO reasoning_profiles (`+taskProfileColumns+`) VALUES (`+namedList(taskProfileColumns)+`)`, p)
	return err
}

// TaskProfilesByIDs loads profiles by id.
func (q ReasoningQueries) TaskProfilesByIDs(ctx context.Context, ids []string) ([]*domain.TaskProfile, error) {
	return byIDs[domain.TaskProfile](ctx, q.Q, "reasoning_profiles", ids)
}

// TaskProfilesByExecutions loads the profiles of executions, by version.
func (q ReasoningQueries) TaskProfilesByExecutions(ctx context.Context, ids []string) ([]*domain.TaskProfile, error) {
	return byColumn[domain.TaskProfile](ctx, q.Q, "reasoning_profiles", "execution_id", ids, "execution_id, profile_version")
}

// LatestTaskProfile is an execution's newest profile.
func (q ReasoningQueries) LatestTaskProfile(ctx context.Context, executionID string) (*domain.TaskProfile, error) {
	var p domain.TaskProfile
	if err := q.get(ctx, &p, `SELECT * FROM reasoning_profiles WHERE execution_id = ? ORDER BY profile_version DESC LIMIT 1`, executionID); err != nil {
		return nil, err
	}
	return &p, nil
}

const executionPassColumns = `id, execution_id, pass_number, phase, profile_id, plan_state, execution_results,
	evaluation_results, refinement_changes, ttl_remaining, started_at, ended_at, duration_ms`

// InsertExecutionPass inserts a pass.
func (q ReasoningQueries) InsertExecutionPass(ctx context.Context, p *domain.ExecutionPass) error {
	_, err := q.namedExec(ctx, `INSERT INTO reasoning_passes (`+executionPassColumns+`) VALUES (`+namedList(executionPassColumns)+`)`, p)
	return err
}

// ExecutionPassesByIDs loads passes by id.
func (q ReasoningQueries) ExecutionPassesByIDs(ctx context.Context, ids []string) ([]*domain.ExecutionPass, error) {
	return byIDs[domain.ExecutionPass](ctx, q.Q, "reasoning_passes", ids)
}

// ExecutionPassesByExecutions loads the passes of executions, by number.
func (q ReasoningQueries) ExecutionPassesByExecutions(ctx context.Context, ids []string) ([]*domain.ExecutionPass, error) {
	return byColumn[domain.ExecutionPass](ctx, q.Q, "reasoning_passes", "execution_id", ids, "execution_id, pass_number")
}

// LastExecutionPass is an execution's newest pass (ErrNotFound: none).
func (q ReasoningQueries) LastExecutionPass(ctx context.Context, executionID string) (*domain.ExecutionPass, error) {
	var p domain.ExecutionPass
	if err := q.get(ctx, &p, `SELECT * FROM reasoning_passes WHERE execution_id = ? ORDER BY pass_number DESC LIMIT 1`, executionID); err != nil {
		return nil, err
	}
	return &p, nil
}

// CompleteExecutionPass writes what a pass ended with.
func (q ReasoningQueries) CompleteExecutionPass(ctx context.Context, p *domain.ExecutionPass) error {
	_, err := q.namedExec(ctx, `UPDATE reasoning_passes SET execution_results = :execution_results,
		evaluation_results = :evaluation_results, refinement_changes = :refinement_changes, ended_at = :ended_at,
		duration_ms = :duration_ms WHERE id = :id`, p)
	return err
}

const assessmentColumns = `pass_id, execution_id, converged, reason_codes, completeness_score, coherence_score,
	consistency_status, detected_issues, metadata, created_at`

// InsertConvergenceAssessment inserts a pass's assessment (ErrUnique: the
// pass has one).
func (q ReasoningQueries) InsertConvergenceAssessment(ctx context.Context, a *domain.ConvergenceAssessment) error {
	_, err := q.namedExec(ctx, `INSERT INTO reasoning_assessments (`+assessmentColumns+`) VALUES (`+namedList(assessmentColumns)+`)`, a)
	return err
}

// AssessmentsByPasses loads the assessments of passes.
func (q ReasoningQueries) AssessmentsByPasses(ctx context.Context, ids []string) ([]*domain.ConvergenceAssessment, error) {
	return byColumn[domain.ConvergenceAssessment](ctx, q.Q, "reasoning_assessments", "pass_id", ids, "pass_id")
}

// AssessmentsByExecutions loads the assessments of executions' passes.
func (q ReasoningQueries) AssessmentsByExecutions(ctx context.Context, ids []string) ([]*domain.ConvergenceAssessment, error) {
	return byColumn[domain.ConvergenceAssessment](ctx, q.Q, "reasoning_assessments", "execution_id", ids, "execution_id, created_at")
}

const reportColumns = `id, pass_id, execution_id, validation_id, artifact_type, overall_severity, issue_summary,
	proposed_repairs, created_at`

const issueColumns = `report_id, position, issue_id, type, severity, description, location, proposed_repair`

// InsertValidationReport inserts a report and its issues (ErrUnique: the
// pass has one).
func (q ReasoningQueries) InsertValidationReport(ctx context.Context, r *domain.SemanticValidationReport, issues []*domain.ValidationIssue) error {
	if _, err := q.namedExec(ctx, `INSERT INTO reasoning_validation_reports (`+reportColumns+`) VALUES (`+namedList(reportColumns)+`)`, r); err != nil {
		return err
	}
	if len(issues) == 0 {
		return nil
	}
	_, err := q.namedExec(ctx, `INSERT INTO reasoning_validation_issues (`+issueColumns+`) VALUES (`+namedList(issueColumns)+`)`, issues)
	return err
}

// ValidationReportsByIDs loads reports by id.
func (q ReasoningQueries) ValidationReportsByIDs(ctx context.Context, ids []string) ([]*domain.SemanticValidationReport, error) {
	return byIDs[domain.SemanticValidationReport](ctx, q.Q, "reasoning_validation_reports", ids)
}

// ValidationReportsByPasses loads the reports of passes.
func (q ReasoningQueries) ValidationReportsByPasses(ctx context.Context, ids []string) ([]*domain.SemanticValidationReport, error) {
	return byColumn[domain.SemanticValidationReport](ctx, q.Q, "reasoning_validation_reports", "pass_id", ids, "pass_id")
}

// ValidationIssuesByReports loads the issues of reports, in reported order.
func (q ReasoningQueries) ValidationIssuesByReports(ctx context.Context, ids []string) ([]*domain.ValidationIssue, error) {
	return byColumn[domain.ValidationIssue](ctx, q.Q, "reasoning_validation_issues", "report_id", ids, "report_id, position")
}

const refinementColumns = `id, pass_id, execution_id, action_type, target_step_id, target_plan_section, new_step, changes,
	reason, semantic_validation_input, inconsistency_detected, created_at`

// CountPassRefinements counts the refinements a pass recorded.
func (q ReasoningQueries) CountPassRefinements(ctx context.Context, passID string) (int, error) {
	var n int
	err := q.get(ctx, &n, `SELECT COUNT(*) FROM reasoning_refinements WHERE pass_id = ?`, passID)
	return n, err
}

// InsertRefinement inserts a refinement.
func (q ReasoningQueries) InsertRefinement(ctx context.Context, r *domain.RefinementAction) error {
	_, err := q.namedExec(ctx, `INSERT INTO reasoning_refinements (`+refinementColumns+`) VALUES (`+namedList(refinementColumns)+`)`, r)
	return err
}

// RefinementsByIDs loads refinements by id.
func (q ReasoningQueries) RefinementsByIDs(ctx context.Context, ids []string) ([]*domain.RefinementAction, error) {
	return byIDs[domain.RefinementAction](ctx, q.Q, "reasoning_refinements", ids)
}

// RefinementsByPasses loads the refinements of passes, oldest first.
func (q ReasoningQueries) RefinementsByPasses(ctx context.Context, ids []string) ([]*domain.RefinementAction, error) {
	return byColumn[domain.RefinementAction](ctx, q.Q, "reasoning_refinements", "pass_id", ids, "pass_id, created_at, id")
}

// CountRefinementsByExecutions counts the refinements of executions.
func (q ReasoningQueries) CountRefinementsByExecutions(ctx context.Context, ids []string) (map[string]int, error) {
	out := make(map[string]int, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	query, args := in(`SELECT execution_id, COUNT(*) AS n FROM reasoning_refinements WHERE execution_id IN (?) GROUP BY execution_id`, ids)
	var rows []struct {
		ExecutionID string `db:"execution_id"`
		N           int    `db:"n"`
	}
	if err := q.selectx(ctx, &rows, query, args...); err != nil {
		return nil, err
	}
	for _, r := range rows {
		out[r.ExecutionID] = r.N
	}
	return out, nil
}

const reasoningStepColumns = `id, execution_id, step_id, step_index, total_steps, incoming_context, handoff_to_next,
	description, dependencies, provides, status, step_output, clarity_state, created_at, updated_at, history`

// InsertReasoningSteps inserts plan steps.
func (q ReasoningQueries) InsertReasoningSteps(ctx context.Context, steps []*domain.ReasoningStep) error {
	if len(steps) == 0 {
		return nil
	}
	_, err := q.namedExec(ctx, `INSERT INTO reasoning_steps (`+reasoningStepColumns+`) VALUES (`+namedList(reasoningStepColumns)+`)`, steps)
	return err
}

// UpdateReasoningStep writes a step's place in the plan, content and state.
func (q ReasoningQueries) UpdateReasoningStep(ctx context.Context, s *domain.ReasoningStep) error {
	_, err := q.namedExec(ctx, `UPDATE reasoning_steps SET step_index = :step_index, total_steps = :total_steps,
		incoming_context = :incoming_context, handoff_to_next = :handoff_to_next, description = :description,
		dependencies = :dependencies, provides = :provides, status = :status, step_output = :step_output,
		clarity_state = :clarity_state, updated_at = :updated_at, history = :history WHERE id = :id`, s)
	return err
}

// DeleteReasoningSteps deletes steps by id.
func (q ReasoningQueries) DeleteReasoningSteps(ctx context.Context, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	query, args := in(`DELETE FROM reasoning_steps WHERE id IN (?)`, ids)
	_, err := q.exec(ctx, query, args...)
	return err
}

// ReasoningStepsByIDs loads steps by id.
func (q ReasoningQueries) ReasoningStepsByIDs(ctx context.Context, ids []string) ([]*domain.ReasoningStep, error) {
	return byIDs[domain.ReasoningStep](ctx, q.Q, "reasoning_steps", ids)
}

// ReasoningStepsByExecutions loads the steps of executions, in plan order.
func (q ReasoningQueries) ReasoningStepsByExecutions(ctx context.Context, ids []string) ([]*domain.ReasoningStep, error) {
	return byColumn[domain.ReasoningStep](ctx, q.Q, "reasoning_steps", "execution_id", ids, "execution_id, step_index")
}
