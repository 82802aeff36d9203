package domain

import (
	"fmt"
	"strings"
	"time"
)

// CheckRefinement validates a refinement: exactly one of targetStepId and
// targetPlanSection; newStep for ADD and MODIFY; a non-empty reason. target
// is the step targetStepId names, nil when it names none (yet): a step that
// already ran (COMPLETE or FAILED) cannot be refined (INVALID_TRANSITION).
// It returns the input trimmed, with defaults set.
func CheckRefinement(in RecordRefinementInput, target *ReasoningStep) (RecordRefinementInput, error) {
	var err error
	if !in.ActionType.Valid() {
		return in, InputError("actionType", "unknown refinement action type %q", in.ActionType)
	}
	if in.TargetStepID, err = CheckOptText("targetStepId", in.TargetStepID, MaxStepID); err != nil {
		return in, err
	}
	if in.TargetPlanSection, err = CheckOptText("targetPlanSection", in.TargetPlanSection, MaxName); err != nil {
		return in, err
	}
	if in.TargetStepID != nil && *in.TargetStepID == "" {
		in.TargetStepID = nil
	}
	if in.TargetPlanSection != nil && *in.TargetPlanSection == "" {
		in.TargetPlanSection = nil
	}
	if (in.TargetStepID == nil) == (in.TargetPlanSection == nil) {
		return in, InputError("targetStepId", "give exactly one of targetStepId and targetPlanSection")
	}
	if in.NewStep, err = CheckReasoningJSON("newStep", in.NewStep, ""); err != nil {
		return in, err
	}
	if in.ActionType != RefinementRemove && in.NewStep == nil {
		return in, InputError("newStep", "newStep is required for %s", in.ActionType)
	}
	if in.Reason, err = CheckText("reason", in.Reason, MaxReasoningText, true); err != nil {
		return in, err
	}
	if in.Changes, err = CheckReasoningJSON("changes", in.Changes, "{}"); err != nil {
		return in, err
	}
	if in.SemanticValidationInput, err = CheckReasoningJSON("semanticValidationInput", in.SemanticValidationInput, "[]"); err != nil {
		return in, err
	}
	if target != nil && target.Status.Executed() {
		return in, &Error{Code: CodeInvalidTransition, Field: "targetStepId",
			Message: fmt.Sprintf("step %q is %s: a step that ran is immutable and cannot be refined", target.StepID, target.Status),
			Details: map[string]any{"from": string(target.Status)}}
	}
	return in, nil
}

// PlanSteps turns the steps of setReasoningSteps into the execution's plan.
// The steps are the whole plan in order: stepIndex 1..n and totalSteps n are
// assigned in that order; ids are unique and non-empty; descriptions
// non-empty; dependencies name earlier steps. A step of existing that appears
// again (by stepId) keeps its row, status, output and clarity; one that is
// left out is removed. A step that already ran (COMPLETE or FAILED) can be
// neither removed nor changed (INVALID_TRANSITION). newID names new rows.
// It returns the plan and the rows to remove.
func PlanSteps(executionID string, existing []*ReasoningStep, in []*ReasoningStepInput, newID func() string, at time.Time) (plan []*ReasoningStep, removed []*ReasoningStep, err error) {
	if len(in) > MaxReasoningSteps {
		return nil, nil, InputError("steps", "at most %d steps per plan", MaxReasoningSteps)
	}
	old := map[string]*ReasoningStep{}
	for _, s := range existing {
		old[s.StepID] = s
	}
	index := map[string]int{}
	plan = make([]*ReasoningStep, len(in))
	for i, s := range in {
		f := func(name string) string { return fmt.Sprintf("steps[%d].%s", i, name) }
		id, err := CheckText(f("stepId"), s.StepID, MaxStepID, true)
		if err != nil {
			return nil, nil, err
		}
		if prev, dup := index[id]; dup {
			return nil, nil, InputError(f("stepId"), "step id %q is used twice (steps[%d] and [%d])", id, prev, i)
		}
		desc, err := CheckText(f("description"), s.Description, MaxReasoningText, true)
		if err != nil {
			return nil, nil, err
		}
		deps, err := CheckList(f("dependencies"), s.Dependencies, MaxReasoningSteps, MaxStepID)
		if err != nil {
			return nil, nil, err
		}
		for _, d := range deps {
			if _, earlier := index[d]; !earlier {
				if d == id {
					return nil, nil, InputError(f("dependencies"), "step %q cannot depend on itself", id)
				}
				return nil, nil, InputError(f("dependencies"), "step %q depends on %q, which is not an earlier step of the plan", id, d)
			}
		}
		provides, err := CheckList(f("provides"), s.Provides, MaxListItems, MaxListEntry)
		if err != nil {
			return nil, nil, err
		}
		incoming, err := CheckOptText(f("incomingContext"), s.IncomingContext, MaxReasoningText)
		if err != nil {
			return nil, nil, err
		}
		handoff, err := CheckOptText(f("handoffToNext"), s.HandoffToNext, MaxReasoningText)
		if err != nil {
			return nil, nil, err
		}
		index[id] = i
		row := &ReasoningStep{ID: newID(), ExecutionID: executionID, StepID: id, Status: StepPending, CreatedAt: at}
		if prev := old[id]; prev != nil {
			if prev.Status.Executed() && (prev.Description != desc || !sameStrings(prev.Dependencies, deps) || !sameStrings(prev.Provides, provides)) {
				return nil, nil, &Error{Code: CodeInvalidTransition, Field: f("stepId"),
					Message: fmt.Sprintf("step %q is %s: a step that ran is immutable", id, prev.Status),
					Details: map[string]any{"from": string(prev.Status)}}
			}
			cp := *prev
			row = &cp
		}
		row.StepIndex, row.TotalSteps = i+1, len(in)
		row.Description, row.Dependencies, row.Provides = desc, Strings(deps), Strings(provides)
		row.IncomingContext, row.HandoffToNext = incoming, handoff
		row.UpdatedAt = at
		plan[i] = row
	}
	for _, s := range existing {
		if _, kept := index[s.StepID]; kept {
			continue
		}
		if s.Status.Executed() {
			return nil, nil, &Error{Code: CodeInvalidTransition, Field: "steps",
				Message: fmt.Sprintf("step %q is %s: a step that ran cannot be removed from the plan", s.StepID, s.Status),
				Details: map[string]any{"from": string(s.Status)}}
		}
		removed = append(removed, s)
	}
	return plan, removed, nil
}

func sameStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// stepMoves are the moves a step may make.
var stepMoves = map[ReasoningStepStatus][]ReasoningStepStatus{
	StepPending: {StepRunning},
	StepRunning: {StepComplete, StepFailed, StepInvalid},
	StepInvalid: {StepPending},
}

// StepTransition decides a step's move to `to`: the status it ends in (a
// step completed with clarityState BLOCKED is INVALID). Moves: PENDING →
// RUNNING → COMPLETE | FAILED | INVALID, INVALID → PENDING; COMPLETE and
// FAILED are final; anything else is INVALID_TRANSITION. RUNNING needs every
// dependency COMPLETE: unmet lists those that are not (BAD_USER_INPUT).
func StepTransition(step *ReasoningStep, to ReasoningStepStatus, clarity *ClarityState, unmet []string) (ReasoningStepStatus, error) {
	if !to.Valid() {
		return "", InputError("to", "unknown step status %q", to)
	}
	if clarity != nil && !clarity.Valid() {
		return "", InputError("clarityState", "unknown clarity state %q", *clarity)
	}
	from := step.Status
	bad := func(msg string) error {
		return &Error{Code: CodeInvalidTransition, Field: "to", Message: msg,
			Details: map[string]any{"from": string(from), "to": string(to)}}
	}
	if from.Executed() {
		return "", bad(fmt.Sprintf("step %q is %s, which is final", step.StepID, from))
	}
	allowed := false
	for _, s := range stepMoves[from] {
		allowed = allowed || s == to
	}
	if !allowed {
		return "", bad(fmt.Sprintf("a step cannot move from %s to %s", from, to))
	}
	if to == StepRunning && len(unmet) > 0 {
		return "", &Error{Code: CodeBadUserInput, Field: "to",
			Message: fmt.Sprintf("step %q cannot run before its dependencies complete: %s", step.StepID, strings.Join(unmet, ", ")),
			Details: map[string]any{"unmetDependencies": unmet}}
	}
	if to == StepComplete && clarity != nil && *clarity == ClarityBlocked {
		return StepInvalid, nil
	}
	return to, nil
}

// UnmetDependencies lists the dependencies of step that are not COMPLETE
// among steps (by stepId), in declared order.
func UnmetDependencies(step *ReasoningStep, steps map[string]*ReasoningStep) []string {
	var out []string
	for _, d := range step.Dependencies {
		if s := steps[d]; s == nil || s.Status != StepComplete {
			out = append(out, d)
		}
	}
	return out
}
