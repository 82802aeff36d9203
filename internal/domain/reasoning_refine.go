package domain

import (
	"bytes"
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Refinements are applied to the plan when the next pass starts: the
// previous pass's refinements, in the order they were recorded. What each
// one changed is kept in the steps' history.

// MaxRefinementsPerPass bounds the refinements one pass records.
const MaxRefinementsPerPass = MaxReasoningSteps

// MaxStepHistory bounds the history a step keeps: its newest changes.
const MaxStepHistory = 50

// StepChange is one change a refinement made to a step.
type StepChange struct {
	RefinementID string               `json:"refinementId"` // global id
	ActionType   RefinementActionType `json:"actionType"`
	// Before is the step as it was (nil for a step the refinement added);
	// After as it became (nil for a step it removed, which keeps no row).
	Before *StepContent `json:"before"`
	After  *StepContent `json:"after"`
	At     time.Time    `json:"at"`
}

// StepContent is what a refinement may change of a step.
type StepContent struct {
	StepID       string              `json:"stepId"`
	Description  string              `json:"description"`
	Dependencies []string            `json:"dependencies"`
	Provides     []string            `json:"provides"`
	Status       ReasoningStepStatus `json:"status"`
}

// BeforeJSON and AfterJSON are Before and After for the API's JSON scalar.
func (c StepChange) BeforeJSON() JSON { return c.Before.json() }

// AfterJSON: see BeforeJSON.
func (c StepChange) AfterJSON() JSON { return c.After.json() }

func (s *StepContent) json() JSON {
	if s == nil {
		return nil
	}
	b, _ := json.Marshal(s)
	return JSON(b)
}

func contentOf(s *ReasoningStep) *StepContent {
	return &StepContent{StepID: s.StepID, Description: s.Description, Dependencies: slices.Clone([]string(s.Dependencies)),
		Provides: slices.Clone([]string(s.Provides)), Status: s.Status}
}

// StepHistory is a step's changes, oldest first, kept in one JSON column.
type StepHistory []StepChange

// Value stores the history as a JSON array.
func (h StepHistory) Value() (driver.Value, error) { return jsonValue(h) }

// Scan reads a JSON array column.
func (h *StepHistory) Scan(src any) error {
	*h = StepHistory{}
	return jsonScan(src, h)
}

func (s *ReasoningStep) record(c StepChange) {
	s.History = append(s.History, c)
	if n := len(s.History); n > MaxStepHistory {
		s.History = slices.Clone(s.History[n-MaxStepHistory:])
	}
}

// ParseNewStep reads a refinement's newStep: an object with stepId,
// description, dependencies, provides, incomingContext and handoffToNext
// (any other key is refused, so that a misspelt one is not lost).
func ParseNewStep(raw JSON) (*ReasoningStepInput, error) {
	var s struct {
		StepID          *string  `json:"stepId"`
		Description     *string  `json:"description"`
		Dependencies    []string `json:"dependencies"`
		Provides        []string `json:"provides"`
		IncomingContext *string  `json:"incomingContext"`
		HandoffToNext   *string  `json:"handoffToNext"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, InputError("newStep", "newStep must be a step object {stepId, description, dependencies, provides, incomingContext, handoffToNext}: %v", err)
	}
	in := &ReasoningStepInput{Dependencies: s.Dependencies, Provides: s.Provides, IncomingContext: s.IncomingContext, HandoffToNext: s.HandoffToNext}
	if s.StepID != nil {
		in.StepID = *s.StepID
	}
	if s.Description != nil {
		in.Description = *s.Description
	}
	return in, nil
}

// CheckRefinementTarget checks a refinement against the plan as it is
// (steps by stepId): its target step exists (NOT_FOUND) and, unless the
// refinement only adds after it, has not started (a RUNNING, COMPLETE or
// FAILED target is INVALID_TRANSITION); its newStep is a whole step whose
// id is free (or the target's, for REPLACE and MODIFY) and whose
// dependencies name steps of the plan. in is the output of CheckRefinement.
func CheckRefinementTarget(in RecordRefinementInput, byID map[string]*ReasoningStep) error {
	var target *ReasoningStep
	if in.TargetStepID != nil {
		if target = byID[*in.TargetStepID]; target == nil {
			return &Error{Code: CodeNotFound, Field: "targetStepId", Message: fmt.Sprintf("the plan has no step %q", *in.TargetStepID)}
		}
		if in.ActionType != RefinementAdd && (target.Status == StepRunning || target.Status.Executed()) {
			return &Error{Code: CodeInvalidTransition, Field: "targetStepId",
				Message: fmt.Sprintf("step %q is %s: only a step that has not started can be refined", target.StepID, target.Status),
				Details: map[string]any{"from": string(target.Status)}}
		}
	}
	if in.NewStep == nil || (target == nil && in.ActionType != RefinementAdd) {
		return nil // a plan section's MODIFY, REPLACE or REMOVE is a record: newStep is free-form
	}
	if in.ActionType == RefinementRemove {
		return InputError("newStep", "REMOVE takes no newStep")
	}
	ns, err := ParseNewStep(in.NewStep)
	if err != nil {
		return err
	}
	ns.StepID = strings.TrimSpace(ns.StepID)
	switch {
	case in.ActionType == RefinementModify && target != nil && ns.StepID == "":
		ns.StepID = target.StepID // MODIFY keeps the target's id
	case in.ActionType == RefinementModify && target != nil && ns.StepID != target.StepID:
		return InputError("newStep", "MODIFY keeps the step's id: newStep.stepId must be %q or left out", target.StepID)
	case ns.StepID == "":
		return InputError("newStep", "newStep needs a stepId")
	case byID[ns.StepID] != nil && (target == nil || ns.StepID != target.StepID || in.ActionType == RefinementAdd):
		return InputError("newStep", "the plan already has a step %q", ns.StepID)
	}
	if _, err := CheckText("newStep.stepId", ns.StepID, MaxStepID, true); err != nil {
		return err
	}
	if _, err := CheckText("newStep.description", ns.Description, MaxReasoningText, true); err != nil {
		return err
	}
	if _, err := CheckList("newStep.provides", ns.Provides, MaxListItems, MaxListEntry); err != nil {
		return err
	}
	deps, err := CheckList("newStep.dependencies", ns.Dependencies, MaxReasoningSteps, MaxStepID)
	if err != nil {
		return err
	}
	for _, d := range deps {
		if d == ns.StepID {
			return InputError("newStep.dependencies", "step %q cannot depend on itself", d)
		}
		if byID[d] == nil {
			return InputError("newStep.dependencies", "the plan has no step %q", d)
		}
	}
	if _, err := CheckOptText("newStep.incomingContext", ns.IncomingContext, MaxReasoningText); err != nil {
		return err
	}
	_, err = CheckOptText("newStep.handoffToNext", ns.HandoffToNext, MaxReasoningText)
	return err
}

// CanInvalidate reports whether a step in status may be made INVALID by a
// refinement that found it inconsistent: one that has not finished.
func CanInvalidate(status ReasoningStepStatus) bool {
	return status == StepPending || status == StepRunning
}

// RefinementOutcome says what applying one refinement did.
type RefinementOutcome struct {
	Refinement *RefinementAction
	Applied    bool
	// Skipped says why a refinement was not applied: the plan changed since
	// it was recorded (its target ran or went, its new id was taken, a
	// dependency is no longer an earlier step), or it names a plan section,
	// not a step, and changes no step.
	Skipped string
}

// ApplyRefinements applies refinements, in order, to an execution's plan
// (its steps in plan order) at now: ADD inserts newStep after its target
// (or at the end), MODIFY makes the target newStep again and PENDING,
// REPLACE puts newStep in the target's place (steps that depended on the
// target depend on it), REMOVE removes the target (its dependents lose the
// dependency); stepIndex and totalSteps are renumbered. Every step a
// refinement changed records it in its history. It returns the plan, the
// rows removed and what happened to each refinement.
func ApplyRefinements(plan []*ReasoningStep, refinements []*RefinementAction, newID func() string, now time.Time) (
	out []*ReasoningStep, removed []*ReasoningStep, outcomes []RefinementOutcome) {
	out = slices.Clone(plan)
	for _, r := range refinements {
		var skipped string
		out, removed, skipped = applyRefinement(out, removed, r, newID, now)
		outcomes = append(outcomes, RefinementOutcome{Refinement: r, Applied: skipped == "", Skipped: skipped})
	}
	for i, s := range out {
		if s.StepIndex != i+1 || s.TotalSteps != len(out) {
			s.StepIndex, s.TotalSteps, s.UpdatedAt = i+1, len(out), now
		}
	}
	return out, removed, outcomes
}

func applyRefinement(plan, removed []*ReasoningStep, r *RefinementAction, newID func() string, now time.Time) (
	[]*ReasoningStep, []*ReasoningStep, string) {
	if r.TargetStepID == nil && r.ActionType != RefinementAdd {
		return plan, removed, "it names a plan section, not a step"
	}
	at := -1
	if r.TargetStepID != nil {
		at = slices.IndexFunc(plan, func(s *ReasoningStep) bool { return s.StepID == *r.TargetStepID })
		if at < 0 {
			return plan, removed, fmt.Sprintf("the plan no longer has step %q", *r.TargetStepID)
		}
		if t := plan[at]; r.ActionType != RefinementAdd && (t.Status == StepRunning || t.Status.Executed()) {
			return plan, removed, fmt.Sprintf("step %q is %s", t.StepID, t.Status)
		}
	}
	change := func(before, after *StepContent) StepChange {
		return StepChange{RefinementID: r.GlobalID(), ActionType: r.ActionType, Before: before, After: after, At: now}
	}
	var ns *ReasoningStepInput
	if r.ActionType != RefinementRemove {
		var err error
		if ns, err = ParseNewStep(r.NewStep); err != nil || r.NewStep == nil {
			return plan, removed, "its newStep is not a step"
		}
		ns.StepID = strings.TrimSpace(ns.StepID)
		if r.ActionType == RefinementModify && ns.StepID == "" {
			ns.StepID = plan[at].StepID
		}
	}
	// The position newStep takes, and whether its id and dependencies fit there.
	pos := len(plan)
	switch r.ActionType {
	case RefinementAdd:
		if at >= 0 {
			pos = at + 1
		}
	case RefinementModify, RefinementReplace:
		pos = at
	}
	if ns != nil {
		for i, s := range plan {
			if s.StepID == ns.StepID && !(i == at && r.ActionType != RefinementAdd) {
				return plan, removed, fmt.Sprintf("the plan already has a step %q", ns.StepID)
			}
		}
		for _, d := range ns.Dependencies {
			if i := slices.IndexFunc(plan[:pos], func(s *ReasoningStep) bool { return s.StepID == d }); i < 0 {
				return plan, removed, fmt.Sprintf("dependency %q is not an earlier step of the plan", d)
			}
		}
	}
	fresh := func(execID string) *ReasoningStep {
		return &ReasoningStep{ID: newID(), ExecutionID: execID, StepID: ns.StepID, Description: strings.TrimSpace(ns.Description),
			Dependencies: Strings(orEmpty(ns.Dependencies)), Provides: Strings(orEmpty(ns.Provides)), IncomingContext: ns.IncomingContext,
			HandoffToNext: ns.HandoffToNext, Status: StepPending, CreatedAt: now, UpdatedAt: now, History: StepHistory{}}
	}
	// rewire changes the dependencies on step old of every later step: to
	// new, or dropped when new is "".
	rewire := func(plan []*ReasoningStep, old, new string) {
		for _, s := range plan {
			i := slices.Index([]string(s.Dependencies), old)
			if i < 0 {
				continue
			}
			before := contentOf(s)
			deps := slices.Clone([]string(s.Dependencies))
			if new == "" {
				deps = slices.Delete(deps, i, i+1)
			} else {
				deps[i] = new
			}
			s.Dependencies, s.UpdatedAt = Strings(deps), now
			s.record(change(before, contentOf(s)))
		}
	}
	switch r.ActionType {
	case RefinementAdd:
		execID := planExecID(plan, r)
		s := fresh(execID)
		s.record(change(nil, contentOf(s)))
		plan = slices.Insert(plan, pos, s)
	case RefinementModify:
		t := plan[at]
		before := contentOf(t)
		t.Description, t.Dependencies, t.Provides = strings.TrimSpace(ns.Description), Strings(orEmpty(ns.Dependencies)), Strings(orEmpty(ns.Provides))
		t.IncomingContext, t.HandoffToNext = ns.IncomingContext, ns.HandoffToNext
		t.Status, t.StepOutput, t.ClarityState, t.UpdatedAt = StepPending, nil, nil, now
		t.record(change(before, contentOf(t)))
	case RefinementReplace:
		old := plan[at]
		s := fresh(old.ExecutionID)
		s.record(change(contentOf(old), contentOf(s)))
		plan[at] = s
		removed = append(removed, old)
		if s.StepID != old.StepID {
			rewire(plan[at+1:], old.StepID, s.StepID)
		}
	case RefinementRemove:
		old := plan[at]
		plan = slices.Delete(plan, at, at+1)
		removed = append(removed, old)
		rewire(plan[at:], old.StepID, "")
	}
	return plan, removed, ""
}

// planExecID is the execution of the plan's steps (the refinement's, for
// an empty plan).
func planExecID(plan []*ReasoningStep, r *RefinementAction) string {
	if len(plan) > 0 {
		return plan[0].ExecutionID
	}
	return r.ExecutionID
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
