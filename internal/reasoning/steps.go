package reasoning

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/domain"
)

// stepsByID indexes an execution's steps by stepId.
func stepsByID(steps []*domain.ReasoningStep) map[string]*domain.ReasoningStep {
	out := make(map[string]*domain.ReasoningStep, len(steps))
	for _, s := range steps {
		out[s.StepID] = s
	}
	return out
}

// RecordRefinement records a refinement a pass made to the plan or to a step
// that has not started; the next pass applies it (StartExecutionPass). With
// inconsistencyDetected its target step is INVALID at once.
func (s *Service) RecordRefinement(ctx context.Context, in domain.RecordRefinementInput) (*domain.RefinementAction, error) {
	p, err := writer(ctx)
	if err != nil {
		return nil, err
	}
	checked, err := domain.CheckRefinement(in, nil)
	if err != nil {
		return nil, err // what needs no plan; the target and newStep are checked against it below
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
		if last, err := lastPass(ctx, tx, e.ID); err != nil {
			return err
		} else if last.ID != pass.ID {
			return conflict("passId", fmt.Sprintf("pass %d is not the newest: its refinements were applied when pass %d started",
				pass.PassNumber, pass.PassNumber+1))
		}
		if n, err := tx.Reasoning.CountPassRefinements(ctx, pass.ID); err != nil {
			return err
		} else if n >= domain.MaxRefinementsPerPass {
			return domain.InputError("passId", "a pass records at most %d refinements", domain.MaxRefinementsPerPass)
		}
		steps, err := tx.Reasoning.ReasoningStepsByExecutions(ctx, []string{e.ID})
		if err != nil {
			return err
		}
		byID := stepsByID(steps)
		if err := domain.CheckRefinementTarget(checked, byID); err != nil {
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
		if t := targetOf(checked, byID); r.InconsistencyDetected && t != nil && domain.CanInvalidate(t.Status) {
			t.Status, t.UpdatedAt = domain.StepInvalid, now
			if err := tx.Reasoning.UpdateReasoningStep(ctx, t); err != nil {
				return err
			}
		}
		return tx.Reasoning.TouchReasoningExecution(ctx, e.ID, now)
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

func targetOf(in domain.RecordRefinementInput, byID map[string]*domain.ReasoningStep) *domain.ReasoningStep {
	if in.TargetStepID == nil {
		return nil
	}
	return byID[*in.TargetStepID]
}

// applyRefinements applies the refinements of pass last to execution e's
// plan as the next pass starts, inside its transaction.
func applyRefinements(ctx context.Context, tx *app.Tx, e *domain.ReasoningExecution, last *domain.ExecutionPass, now time.Time) error {
	if last == nil {
		return nil
	}
	refs, err := tx.Reasoning.RefinementsByPasses(ctx, []string{last.ID})
	if err != nil || len(refs) == 0 {
		return err
	}
	steps, err := tx.Reasoning.ReasoningStepsByExecutions(ctx, []string{e.ID})
	if err != nil {
		return err
	}
	before := make(map[string]domain.ReasoningStep, len(steps))
	for _, st := range steps {
		before[st.ID] = *st
	}
	plan, removed, _ := domain.ApplyRefinements(steps, refs, app.NewID, now)
	ids := make([]string, 0, len(removed))
	for _, r := range removed {
		if _, stored := before[r.ID]; stored {
			ids = append(ids, r.ID)
		}
	}
	if err := tx.Reasoning.DeleteReasoningSteps(ctx, ids); err != nil {
		return err
	}
	var added []*domain.ReasoningStep
	for _, st := range plan {
		if _, stored := before[st.ID]; !stored {
			added = append(added, st)
		} else if st.UpdatedAt.Equal(now) {
			if err := tx.Reasoning.UpdateReasoningStep(ctx, st); err != nil {
				return err
			}
		}
	}
	return tx.Reasoning.InsertReasoningSteps(ctx, added)
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
