package reasoning

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/store"
)

// StartExecutionPass opens the execution's next pass (numbered 0, 1, …) with
// its newest profile, after applying the previous pass's refinements to the
// plan. Event: PASS_STARTED.
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
		if err := applyRefinements(ctx, tx, e, last, now); err != nil {
			return err
		}
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
		a = &domain.ConvergenceAssessment{PassID: pass.ID, ExecutionID: e.ID, Converged: *checked.Converged,
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
