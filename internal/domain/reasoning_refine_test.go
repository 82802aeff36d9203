package domain

import (
	"fmt"
	"testing"
	"time"
)

func TestApplyRefinements(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	n := 0
	newID := func() string { n++; return fmt.Sprintf("new%d", n) }
	plan := func() []*ReasoningStep {
		mk := func(id string, st ReasoningStepStatus, deps ...string) *ReasoningStep {
			return &ReasoningStep{ID: "row-" + id, ExecutionID: "e", StepID: id, Description: id, Dependencies: Strings(orEmpty(deps)),
				Provides: Strings{}, Status: st}
		}
		return []*ReasoningStep{mk("s1", StepComplete), mk("s2", StepPending, "s1"), mk("s3", StepInvalid, "s2"), mk("s4", StepPending, "s1", "s3")}
	}
	ref := func(a RefinementActionType, target, newStep string) *RefinementAction {
		r := &RefinementAction{ID: "r-" + string(a) + target, ExecutionID: "e", ActionType: a}
		if target != "" {
			r.TargetStepID = &target
		}
		if newStep != "" {
			r.NewStep = JSON(newStep)
		}
		return r
	}
	ids := func(steps []*ReasoningStep) string {
		s := ""
		for _, st := range steps {
			s += fmt.Sprintf("%s%d/%d%v ", st.StepID, st.StepIndex, st.TotalSteps, []string(st.Dependencies))
		}
		return s
	}
	for _, c := range []struct {
		name    string
		refs    []*RefinementAction
		want    string
		removed int
		skipped []string
	}{
		{"modify s2 and remove s3", []*RefinementAction{
			ref(RefinementModify, "s2", `{"description": "better s2", "dependencies": ["s1"]}`),
			ref(RefinementRemove, "s3", ""),
		}, "s11/3[] s22/3[s1] s43/3[s1] ", 1, []string{"", ""}},
		{"add after s1, add at the end", []*RefinementAction{
			ref(RefinementAdd, "s1", `{"stepId": "s1b", "description": "between", "dependencies": ["s1"]}`),
			{ID: "r-end", ExecutionID: "e", ActionType: RefinementAdd, TargetPlanSection: ptrTo("tail"), NewStep: JSON(`{"stepId": "s5", "description": "last", "dependencies": ["s4"]}`)},
		}, "s11/6[] s1b2/6[s1] s23/6[s1] s34/6[s2] s45/6[s1 s3] s56/6[s4] ", 0, []string{"", ""}},
		{"replace s3 by t3: its dependents follow", []*RefinementAction{
			ref(RefinementReplace, "s3", `{"stepId": "t3", "description": "instead", "dependencies": ["s2"]}`),
		}, "s11/4[] s22/4[s1] t33/4[s2] s44/4[s1 t3] ", 1, []string{""}},
		{"skipped: target gone, target ran, id taken, dependency later", []*RefinementAction{
			ref(RefinementRemove, "s3", ""),
			ref(RefinementModify, "s3", `{"description": "x"}`),
			ref(RefinementRemove, "s1", ""),
			ref(RefinementAdd, "s1", `{"stepId": "s2", "description": "dup"}`),
			ref(RefinementAdd, "s1", `{"stepId": "x", "description": "x", "dependencies": ["s4"]}`),
		}, "s11/3[] s22/3[s1] s43/3[s1] ", 1, []string{"", `the plan no longer has step "s3"`, `step "s1" is COMPLETE`,
			`the plan already has a step "s2"`, `dependency "s4" is not an earlier step of the plan`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, removed, outcomes := ApplyRefinements(plan(), c.refs, newID, now)
			if got := ids(out); got != c.want {
				t.Fatalf("plan %q, want %q", got, c.want)
			}
			if len(removed) != c.removed {
				t.Fatalf("removed %d, want %d", len(removed), c.removed)
			}
			for i, o := range outcomes {
				if o.Skipped != c.skipped[i] {
					t.Errorf("refinement %d: skipped %q, want %q", i, o.Skipped, c.skipped[i])
				}
			}
		})
	}
	// A modified step is PENDING again, its output cleared, and its history says what changed.
	p := plan()
	p[2].StepOutput = ptrTo("old output")
	out, _, _ := ApplyRefinements(p, []*RefinementAction{ref(RefinementModify, "s3", `{"description": "again", "dependencies": ["s2"]}`)}, newID, now)
	s3 := out[2]
	if s3.Status != StepPending || s3.StepOutput != nil || s3.Description != "again" || len(s3.History) != 1 {
		t.Fatalf("modified step %+v", s3)
	}
	if h := s3.History[0]; h.Before.Description != "s3" || h.Before.Status != StepInvalid || h.After.Description != "again" || h.RefinementID == "" {
		t.Fatalf("history %+v", h)
	}
	// REMOVE records the lost dependency on each dependent.
	out, _, _ = ApplyRefinements(plan(), []*RefinementAction{ref(RefinementRemove, "s3", "")}, newID, now)
	if h := out[2].History; len(h) != 1 || len(h[0].Before.Dependencies) != 2 || len(h[0].After.Dependencies) != 1 {
		t.Fatalf("dependent's history %+v", h)
	}
}
