package reasoning

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/store"
)

// StartReasoningExecution starts an execution in a project, optionally
// linked to a task and a run of that project, with the given profile as
// version 1 (the default profile without one). Event: REASONING_STARTED.
func (s *Service) StartReasoningExecution(ctx context.Context, in domain.StartReasoningExecutionInput) (*domain.ReasoningExecution, error) {
	p, err := writer(ctx)
	if err != nil {
		return nil, err
	}
	projectID, err := decode(domain.KindProject, in.ProjectID, "projectId", "project")
	if err != nil {
		return nil, err
	}
	taskInput, err := domain.CheckText("taskInput", in.TaskInput, domain.MaxReasoningText, true)
	if err != nil {
		return nil, err
	}
	e := &domain.ReasoningExecution{ID: app.NewID(), ProjectID: projectID, TaskInput: taskInput, TTL: in.TTL,
		CompletenessThreshold: domain.DefaultCompletenessThreshold, CoherenceThreshold: domain.DefaultCoherenceThreshold,
		Status: domain.ReasoningRunning, CreatedBy: app.Actor(p)}
	if in.CompletenessThreshold != nil {
		e.CompletenessThreshold = *in.CompletenessThreshold
	}
	if in.CoherenceThreshold != nil {
		e.CoherenceThreshold = *in.CoherenceThreshold
	}
	if err := domain.CheckUnit("completenessThreshold", &e.CompletenessThreshold); err != nil {
		return nil, err
	}
	if err := domain.CheckUnit("coherenceThreshold", &e.CoherenceThreshold); err != nil {
		return nil, err
	}
	if in.TTL < 1 || in.TTL > domain.MaxReasoningTTL {
		return nil, domain.InputError("ttl", "ttl must be between 1 and %d", domain.MaxReasoningTTL)
	}
	if e.Configuration, err = domain.CheckReasoningJSON("configuration", in.Configuration, "{}"); err != nil {
		return nil, err
	}
	profileIn, isDefault := domain.DefaultTaskProfile(), true
	if in.Profile != nil {
		if profileIn, err = domain.CheckTaskProfile("profile.", *in.Profile); err != nil {
			return nil, err
		}
		isDefault = false
	}
	taskID, err := domain.DecodeOptionalID(domain.KindTask, in.TaskID, "taskId")
	if domain.ErrorCode(err) == domain.CodeNotFound {
		return nil, notFound("taskId", "task")
	} else if err != nil {
		return nil, err
	}
	runID, err := domain.DecodeOptionalID(domain.KindExecutionRun, in.RunID, "runId")
	if domain.ErrorCode(err) == domain.CodeNotFound {
		return nil, notFound("runId", "execution run")
	} else if err != nil {
		return nil, err
	}
	e.TaskID, e.RunID = taskID, runID
	now := s.now()
	e.CreatedAt, e.UpdatedAt = now, now
	profile := newProfile(e.ID, 1, profileIn, isDefault, now)
	err = s.run.InTx(ctx, func(tx *app.Tx) error {
		projects, err := tx.Projects.ProjectsByIDs(ctx, []string{projectID})
		if err != nil {
			return err
		}
		if len(projects) == 0 || !app.CanSee(p, projects[0]) {
			return notFound("projectId", "project")
		}
		if taskID != nil {
			tasks, err := tx.Tasks.TasksByIDs(ctx, []string{*taskID})
			if err != nil {
				return err
			}
			if len(tasks) == 0 || tasks[0].ProjectID != projectID {
				return notFound("taskId", "task") // another project's task is not one of this project's
			}
		}
		if runID != nil {
			runs, err := tx.Runs.RunsByIDs(ctx, []string{*runID})
			if err != nil {
				return err
			}
			if len(runs) == 0 || runs[0].ProjectID != projectID {
				return notFound("runId", "execution run")
			}
		}
		if err := tx.Reasoning.InsertReasoningExecution(ctx, e); err != nil {
			return err
		}
		if err := tx.Reasoning.InsertTaskProfile(ctx, profile); err != nil {
			return err
		}
		tx.Record(domain.NewReasoningStarted(e))
		return nil
	})
	if err != nil {
		return nil, err
	}
	return e, nil
}

func newProfile(executionID string, version int, in domain.TaskProfileInput, isDefault bool, at time.Time) *domain.TaskProfile {
	return &domain.TaskProfile{ID: app.NewID(), ExecutionID: executionID, ProfileVersion: version,
		ReasoningDepth: in.ReasoningDepth, InformationSufficiency: in.InformationSufficiency,
		ExpectedToolUsage: in.ExpectedToolUsage, OutputBreadth: in.OutputBreadth,
		ConfidenceRequirement: in.ConfidenceRequirement, RawInference: in.RawInference, IsDefault: isDefault, CreatedAt: at}
}

// running refuses changes to a finished execution (CONFLICT naming field).
func running(e *domain.ReasoningExecution, field string) error {
	if e.Status.Finished() {
		return conflict(field, fmt.Sprintf("the execution finished %s: it changes no more", e.Status))
	}
	return nil
}

// SetTaskProfile adds the next version of an execution's profile; passes
// started after it run with it.
func (s *Service) SetTaskProfile(ctx context.Context, in domain.SetTaskProfileInput) (*domain.TaskProfile, error) {
	p, err := writer(ctx)
	if err != nil {
		return nil, err
	}
	id, err := decode(domain.KindReasoningExecution, in.ExecutionID, "executionId", "reasoning execution")
	if err != nil {
		return nil, err
	}
	checked, err := domain.CheckTaskProfile("", domain.TaskProfileInput{ReasoningDepth: in.ReasoningDepth,
		InformationSufficiency: in.InformationSufficiency, ExpectedToolUsage: in.ExpectedToolUsage,
		OutputBreadth: in.OutputBreadth, ConfidenceRequirement: in.ConfidenceRequirement, RawInference: in.RawInference})
	if err != nil {
		return nil, err
	}
	var profile *domain.TaskProfile
	err = s.run.InTx(ctx, func(tx *app.Tx) error {
		e, err := lockExecution(ctx, tx, p, id, "executionId")
		if err != nil {
			return err
		}
		if err := running(e, "executionId"); err != nil {
			return err
		}
		latest, err := tx.Reasoning.LatestTaskProfile(ctx, e.ID)
		if err != nil {
			return err
		}
		now := s.now()
		profile = newProfile(e.ID, latest.ProfileVersion+1, checked, false, now)
		if err := tx.Reasoning.InsertTaskProfile(ctx, profile); err != nil {
			return err
		}
		return tx.Reasoning.TouchReasoningExecution(ctx, e.ID, now)
	})
	if err != nil {
		return nil, err
	}
	return profile, nil
}

// StartExecutionPass opens the execution's next pass (numbered 0, 1, …) with
// its newest profile. Event: PASS_STARTED.
func (s *Service) StartExecutionPass(ctx context.Context, in domain.StartExecutionPassInput) (*domain.ExecutionPass, error) {
	p, err := writer(ctx)
	if err != nil {
		return nil, err
	}
	id, err := decode(domain.KindReasoningExecution, in.ExecutionID, "executionId", "reasoning execution")
	if err != nil {
		return nil, err
	}
	if !in.Phase.Valid() {
		return nil, domain.InputError("phase", "unknown phase %q", in.Phase)
	}
	planState, err := domain.CheckReasoningJSON("planState", in.PlanState, "{}")
	if err != nil {
		return nil, err
	}
	var pass *domain.ExecutionPass
	err = s.run.InTx(ctx, func(tx *app.Tx) error {
		e, err := lockExecution(ctx, tx, p, id, "executionId")
		if err != nil {
			return err
		}
		last, err := lastPass(ctx, tx, e.ID)
		if err != nil {
			return err
		}
		if err := domain.CheckPassStart(e.Status, e.TTL, last, in.TTLRemaining); err != nil {
			return err
		}
		profile, err := tx.Reasoning.LatestTaskProfile(ctx, e.ID)
		if err != nil {
			return err
		}
		now := s.now()
		pass = &domain.ExecutionPass{ID: app.NewID(), ExecutionID: e.ID, PassNumber: domain.NextPassNumber(last), Phase: in.Phase,
			ProfileID: profile.ID, PlanState: planState, ExecutionResults: domain.JSON("[]"), EvaluationResults: domain.JSON("{}"),
			RefinementChanges: domain.JSON("[]"), TTLRemaining: in.TTLRemaining, StartedAt: now}
		if err := tx.Reasoning.InsertExecutionPass(ctx, pass); err != nil {
			if errors.Is(err, store.ErrUnique) {
				return conflict("executionId", "another pass started at the same time")
			}
			return err
		}
		if err := tx.Reasoning.TouchReasoningExecution(ctx, e.ID, now); err != nil {
			return err
		}
		tx.Record(domain.NewPassStarted(e, pass))
		return nil
	})
	if err != nil {
		return nil, err
	}
	return pass, nil
}

// endPass closes an open pass at now.
func endPass(pass *domain.ExecutionPass, now time.Time) {
	d := domain.PassDurationMs(pass.StartedAt, now)
	pass.EndedAt, pass.DurationMs = &now, &d
}

// CompleteExecutionPass ends an open pass with its results; its duration
// comes from the server's timestamps. Event: PASS_COMPLETED.
func (s *Service) CompleteExecutionPass(ctx context.Context, in domain.CompleteExecutionPassInput) (*domain.ExecutionPass, error) {
	p, err := writer(ctx)
	if err != nil {
		return nil, err
	}
	results, err := domain.CheckReasoningJSON("executionResults", in.ExecutionResults, "")
	if err != nil {
		return nil, err
	}
	evaluation, err := domain.CheckReasoningJSON("evaluationResults", in.EvaluationResults, "")
	if err != nil {
		return nil, err
	}
	changes, err := domain.CheckReasoningJSON("refinementChanges", in.RefinementChanges, "")
	if err != nil {
		return nil, err
	}
	var pass *domain.ExecutionPass
	err = s.run.InTx(ctx, func(tx *app.Tx) error {
		var e *domain.ReasoningExecution
		var err error
		if pass, e, err = lockPass(ctx, tx, p, in.PassID); err != nil {
			return err
		}
		if err := running(e, "passId"); err != nil {
			return err
		}
		if !pass.Open() {
			return conflict("passId", fmt.Sprintf("pass %d is already complete", pass.PassNumber))
		}
		if results != nil {
			pass.ExecutionResults = results
		}
		if evaluation != nil {
			pass.EvaluationResults = evaluation
		}
		if changes != nil {
			pass.RefinementChanges = changes
		}
		now := s.now()
		endPass(pass, now)
		if err := tx.Reasoning.CompleteExecutionPass(ctx, pass); err != nil {
			return err
		}
		if err := tx.Reasoning.TouchReasoningExecution(ctx, e.ID, now); err != nil {
			return err
		}
		tx.Record(domain.NewPassCompleted(e, pass))
		return nil
	})
	if err != nil {
		return nil, err
	}
	return pass, nil
}

// RecordConvergenceAssessment records a pass's one assessment, checked
// against the execution's thresholds. Event: CONVERGENCE_ASSESSED.
func (s *Service) RecordConvergenceAssessment(ctx context.Context, in domain.RecordConvergenceAssessmentInput) (*domain.ConvergenceAssessment, *domain.ExecutionPass, error) {
	p, err := writer(ctx)
	if err != nil {
		return nil, nil, err
	}
	var a *domain.ConvergenceAssessment
	var pass *domain.ExecutionPass
	err = s.run.InTx(ctx, func(tx *app.Tx) error {
		var e *domain.ReasoningExecution
		var err error
		if pass, e, err = lockPass(ctx, tx, p, in.PassID); err != nil {
			return err
		}
		if err := running(e, "passId"); err != nil {
			return err
		}
		existing, err := tx.Reasoning.AssessmentsByPasses(ctx, []string{pass.ID})
		if err != nil {
			return err
		}
		if len(existing) > 0 {
			return conflict("passId", fmt.Sprintf("pass %d already has its convergence assessment", pass.PassNumber))
		}
		checked, err := domain.CheckAssessment(in, e.CompletenessThreshold, e.CoherenceThreshold)
		if err != nil {
			return err
		}
		now := s.now()
		a = &domain.ConvergenceAssessment{PassID: pass.ID, ExecutionID: e.ID, Converged: checked.Converged,
			ReasonCodes: domain.Strings(checked.ReasonCodes), CompletenessScore: checked.CompletenessScore,
			CoherenceScore: checked.CoherenceScore, ConsistencyStatus: checked.ConsistencyStatus,
			DetectedIssues: domain.Strings(checked.DetectedIssues), Metadata: checked.Metadata, CreatedAt: now}
		if a.ReasonCodes == nil {
			a.ReasonCodes = domain.Strings{}
		}
		if a.DetectedIssues == nil {
			a.DetectedIssues = domain.Strings{}
		}
		if err := tx.Reasoning.InsertConvergenceAssessment(ctx, a); err != nil {
			if errors.Is(err, store.ErrUnique) {
				return conflict("passId", fmt.Sprintf("pass %d already has its convergence assessment", pass.PassNumber))
			}
			return err
		}
		if err := tx.Reasoning.TouchReasoningExecution(ctx, e.ID, now); err != nil {
			return err
		}
		tx.Record(domain.NewConvergenceAssessed(e, pass, a))
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return a, pass, nil
}

// RecordValidationReport records a pass's one semantic validation report;
// its overall severity and issue summary are computed from its issues.
func (s *Service) RecordValidationReport(ctx context.Context, in domain.RecordValidationReportInput) (*domain.SemanticValidationReport, error) {
	p, err := writer(ctx)
	if err != nil {
		return nil, err
	}
	checked, err := domain.CheckValidationReport(in)
	if err != nil {
		return nil, err
	}
	var r *domain.SemanticValidationReport
	err = s.run.InTx(ctx, func(tx *app.Tx) error {
		pass, e, err := lockPass(ctx, tx, p, in.PassID)
		if err != nil {
			return err
		}
		if err := running(e, "passId"); err != nil {
			return err
		}
		existing, err := tx.Reasoning.ValidationReportsByPasses(ctx, []string{pass.ID})
		if err != nil {
			return err
		}
		if len(existing) > 0 {
			return conflict("passId", fmt.Sprintf("pass %d already has its validation report", pass.PassNumber))
		}
		now := s.now()
		r = &domain.SemanticValidationReport{ID: app.NewID(), PassID: pass.ID, ExecutionID: e.ID, ValidationID: checked.ValidationID,
			ArtifactType: checked.ArtifactType, OverallSeverity: domain.OverallSeverity(checked.Issues),
			IssueSummary: domain.IssueSummary(checked.Issues), ProposedRepairs: checked.ProposedRepairs, CreatedAt: now}
		issues := make([]*domain.ValidationIssue, len(checked.Issues))
		for i, is := range checked.Issues {
			issues[i] = &domain.ValidationIssue{ReportID: r.ID, Position: i, IssueID: is.IssueID, Type: is.Type, Severity: is.Severity,
				Description: is.Description, Location: is.Location, ProposedRepair: is.ProposedRepair}
		}
		if err := tx.Reasoning.InsertValidationReport(ctx, r, issues); err != nil {
			if errors.Is(err, store.ErrUnique) {
				return conflict("passId", fmt.Sprintf("pass %d already has its validation report", pass.PassNumber))
			}
			return err
		}
		return tx.Reasoning.TouchReasoningExecution(ctx, e.ID, now)
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// stepsByID indexes an execution's steps by stepId.
func stepsByID(steps []*domain.ReasoningStep) map[string]*domain.ReasoningStep {
	out := make(map[string]*domain.ReasoningStep, len(steps))
	for _, s := range steps {
		out[s.StepID] = s
	}
	return out
}

// RecordRefinement records a refinement a pass made to the plan or to a step
// that has not run.
func (s *Service) RecordRefinement(ctx context.Context, in domain.RecordRefinementInput) (*domain.RefinementAction, error) {
	p, err := writer(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := domain.CheckRefinement(in, nil); err != nil {
		return nil, err // what needs no step; the target's state is checked below
	}
	var r *domain.RefinementAction
	err = s.run.InTx(ctx, func(tx *app.Tx) error {
		pass, e, err := lockPass(ctx, tx, p, in.PassID)
		if err != nil {
			return err
		}
		if err := running(e, "passId"); err != nil {
			return err
		}
		var target *domain.ReasoningStep
		if in.TargetStepID != nil {
			steps, err := tx.Reasoning.ReasoningStepsByExecutions(ctx, []string{e.ID})
			if err != nil {
				return err
			}
			target = stepsByID(steps)[strings.TrimSpace(*in.TargetStepID)]
		}
		checked, err := domain.CheckRefinement(in, target)
		if err != nil {
			return err
		}
		now := s.now()
		r = &domain.RefinementAction{ID: app.NewID(), PassID: pass.ID, ExecutionID: e.ID, ActionType: checked.ActionType,
			TargetStepID: checked.TargetStepID, TargetPlanSection: checked.TargetPlanSection, NewStep: checked.NewStep,
			Changes: checked.Changes, Reason: checked.Reason, SemanticValidationInput: checked.SemanticValidationInput,
			InconsistencyDetected: deref(checked.InconsistencyDetected), CreatedAt: now}
		if err := tx.Reasoning.InsertRefinement(ctx, r); err != nil {
			return err
		}
		return tx.Reasoning.TouchReasoningExecution(ctx, e.ID, now)
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// SetReasoningSteps sets an execution's plan: the steps given, in order
// (see domain.PlanSteps for what happens to steps already planned).
func (s *Service) SetReasoningSteps(ctx context.Context, in domain.SetReasoningStepsInput) ([]*domain.ReasoningStep, error) {
	p, err := writer(ctx)
	if err != nil {
		return nil, err
	}
	id, err := decode(domain.KindReasoningExecution, in.ExecutionID, "executionId", "reasoning execution")
	if err != nil {
		return nil, err
	}
	if len(in.Steps) > domain.MaxReasoningSteps {
		return nil, domain.InputError("steps", "at most %d steps per plan", domain.MaxReasoningSteps)
	}
	var plan []*domain.ReasoningStep
	err = s.run.InTx(ctx, func(tx *app.Tx) error {
		e, err := lockExecution(ctx, tx, p, id, "executionId")
		if err != nil {
			return err
		}
		if err := running(e, "executionId"); err != nil {
			return err
		}
		existing, err := tx.Reasoning.ReasoningStepsByExecutions(ctx, []string{e.ID})
		if err != nil {
			return err
		}
		now := s.now()
		var removed []*domain.ReasoningStep
		if plan, removed, err = domain.PlanSteps(e.ID, existing, in.Steps, app.NewID, now); err != nil {
			return err
		}
		ids := make([]string, len(removed))
		for i, r := range removed {
			ids[i] = r.ID
		}
		if err := tx.Reasoning.DeleteReasoningSteps(ctx, ids); err != nil {
			return err
		}
		kept := map[string]bool{}
		for _, s := range existing {
			kept[s.ID] = true
		}
		var added []*domain.ReasoningStep
		for _, st := range plan {
			if !kept[st.ID] {
				added = append(added, st)
				continue
			}
			if err := tx.Reasoning.UpdateReasoningStep(ctx, st); err != nil {
				return err
			}
		}
		if err := tx.Reasoning.InsertReasoningSteps(ctx, added); err != nil {
			return err
		}
		return tx.Reasoning.TouchReasoningExecution(ctx, e.ID, now)
	})
	if err != nil {
		return nil, err
	}
	return plan, nil
}

// TransitionReasoningStep moves a step along its lifecycle, recording its
// output and clarity when given.
func (s *Service) TransitionReasoningStep(ctx context.Context, in domain.TransitionReasoningStepInput) (*domain.ReasoningStep, error) {
	p, err := writer(ctx)
	if err != nil {
		return nil, err
	}
	id, err := decode(domain.KindReasoningExecution, in.ExecutionID, "executionId", "reasoning execution")
	if err != nil {
		return nil, err
	}
	output, err := domain.CheckOptText("stepOutput", in.StepOutput, domain.MaxReasoningText)
	if err != nil {
		return nil, err
	}
	var step *domain.ReasoningStep
	err = s.run.InTx(ctx, func(tx *app.Tx) error {
		e, err := lockExecution(ctx, tx, p, id, "executionId")
		if err != nil {
			return err
		}
		if err := running(e, "executionId"); err != nil {
			return err
		}
		steps, err := tx.Reasoning.ReasoningStepsByExecutions(ctx, []string{e.ID})
		if err != nil {
			return err
		}
		byID := stepsByID(steps)
		if step = byID[strings.TrimSpace(in.StepID)]; step == nil {
			return notFound("stepId", "step")
		}
		var unmet []string
		if in.To == domain.StepRunning {
			unmet = domain.UnmetDependencies(step, byID)
		}
		to, err := domain.StepTransition(step, in.To, in.ClarityState, unmet)
		if err != nil {
			return err
		}
		now := s.now()
		step.Status, step.UpdatedAt = to, now
		if output != nil {
			step.StepOutput = output
		}
		if in.ClarityState != nil {
			c := *in.ClarityState
			step.ClarityState = &c
		}
		if err := tx.Reasoning.UpdateReasoningStep(ctx, step); err != nil {
			return err
		}
		return tx.Reasoning.TouchReasoningExecution(ctx, e.ID, now)
	})
	if err != nil {
		return nil, err
	}
	return step, nil
}

// FinishReasoningExecution ends an execution CONVERGED, TTL_EXPIRED or
// FAILED, closing its open pass if it has one. Events: PASS_COMPLETED (for
// that pass), REASONING_FINISHED.
func (s *Service) FinishReasoningExecution(ctx context.Context, in domain.FinishReasoningExecutionInput) (*domain.ReasoningExecution, error) {
	p, err := writer(ctx)
	if err != nil {
		return nil, err
	}
	id, err := decode(domain.KindReasoningExecution, in.ExecutionID, "executionId", "reasoning execution")
	if err != nil {
		return nil, err
	}
	final, err := domain.CheckReasoningJSON("finalResult", in.FinalResult, "")
	if err != nil {
		return nil, err
	}
	var e *domain.ReasoningExecution
	err = s.run.InTx(ctx, func(tx *app.Tx) error {
		var err error
		if e, err = lockExecution(ctx, tx, p, id, "executionId"); err != nil {
			return err
		}
		last, err := lastPass(ctx, tx, e.ID)
		if err != nil {
			return err
		}
		var assessment *domain.ConvergenceAssessment
		if last != nil {
			as, err := tx.Reasoning.AssessmentsByPasses(ctx, []string{last.ID})
			if err != nil {
				return err
			}
			if len(as) > 0 {
				assessment = as[0]
			}
		}
		if err := domain.CheckFinish(e.Status, in.Status, last, assessment); err != nil {
			return err
		}
		now := s.now()
		if last != nil && last.Open() {
			endPass(last, now)
			if err := tx.Reasoning.CompleteExecutionPass(ctx, last); err != nil {
				return err
			}
			tx.Record(domain.NewPassCompleted(e, last))
		}
		e.Status, e.FinalResult, e.CompletedAt, e.UpdatedAt = in.Status, final, &now, now
		if err := tx.Reasoning.FinishReasoningExecution(ctx, e); err != nil {
			return err
		}
		tx.Record(domain.NewReasoningFinished(e))
		return nil
	})
	if err != nil {
		return nil, err
	}
	return e, nil
}
