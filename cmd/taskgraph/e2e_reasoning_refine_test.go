package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReasoningRefinementsAct: a pass's refinements change the plan when
// the next pass starts — MODIFY puts the step back to PENDING with its new
// content, REMOVE drops a step and its dependents' dependency on it, ADD and
// REPLACE insert steps — each step's history says what changed; targets
// that do not exist or already started are refused; inconsistencyDetected
// makes the target INVALID at once; convergence is computed; a profile
// cannot change under an open pass.
func TestReasoningRefinementsAct(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		project, _, _ := reasoningProject(t, s)
		r := rsn{s, s.AdminToken}
		exec := r.start(t, M{"projectId": project, "taskInput": "plan a release", "ttl": 5})
		r.do(t, "setReasoningSteps", "steps { stepId }", M{"executionId": exec, "steps": decodeList(t, `[
			{"stepId": "s1", "description": "one"},
			{"stepId": "s2", "description": "two", "dependencies": ["s1"]},
			{"stepId": "s3", "description": "three", "dependencies": ["s2"]},
			{"stepId": "s4", "description": "four", "dependencies": ["s1", "s3"]}]`)})
		p0 := r.pass(t, exec, "A", 4)
		r.step(t, exec, "s1", "RUNNING", nil)
		r.fails(t, "setTaskProfile", M{"executionId": exec, "reasoningDepth": 3, "informationSufficiency": 0.5,
			"expectedToolUsage": "NONE", "outputBreadth": "NARROW", "confidenceRequirement": "LOW", "rawInference": "x"}, "CONFLICT", "executionId")

		refine := func(in M) M {
			in["passId"], in["reason"] = p0, "the validation said so"
			return in
		}
		r.fails(t, "recordRefinement", refine(M{"actionType": "REMOVE", "targetStepId": "nope"}), "NOT_FOUND", "targetStepId")
		r.fails(t, "recordRefinement", refine(M{"actionType": "MODIFY", "targetStepId": "s1", "newStep": M{"description": "x"}}),
			"INVALID_TRANSITION", "targetStepId")
		r.fails(t, "recordRefinement", refine(M{"actionType": "ADD", "targetStepId": "s1", "newStep": M{"stepId": "s2", "description": "x"}}),
			"BAD_USER_INPUT", "newStep")
		r.fails(t, "recordRefinement", refine(M{"actionType": "ADD", "targetStepId": "s1", "newStep": M{"stepId": "n", "descripton": "typo"}}),
			"BAD_USER_INPUT", "newStep")
		r.fails(t, "recordRefinement", refine(M{"actionType": "REPLACE", "targetStepId": "s3"}), "BAD_USER_INPUT", "newStep")
		r.do(t, "recordRefinement", "refinement { id }", refine(M{"actionType": "MODIFY", "targetStepId": "s2",
			"newStep": M{"description": "two, better", "dependencies": []any{"s1"}, "provides": []any{"draft"}}}))
		r.do(t, "recordRefinement", "refinement { id }", refine(M{"actionType": "REMOVE", "targetStepId": "s3", "inconsistencyDetected": true}))
		r.do(t, "recordRefinement", "refinement { id }", refine(M{"actionType": "ADD", "targetStepId": "s1",
			"newStep": M{"stepId": "s1b", "description": "one and a half", "dependencies": []any{"s1"}}}))
		r.do(t, "recordRefinement", "refinement { id }", refine(M{"actionType": "ADD", "targetPlanSection": "wrap-up",
			"newStep": M{"stepId": "s5", "description": "five", "dependencies": []any{"s4"}}}))

		stepsQ := `query($id: ID!) { reasoningExecution(id: $id) { steps { stepId stepIndex totalSteps description dependencies provides status
			history { refinementId actionType before after at } } } }`
		steps := s.query(t, s.AdminToken, stepsQ, M{"id": exec}).L("reasoningExecution.steps")
		require.Equal(t, []string{"s1", "s2", "s3", "s4"}, col(steps, "stepId"), "recorded, not applied yet")
		require.Equal(t, "INVALID", steps[2].S("status"), "inconsistencyDetected: INVALID at once")

		// The next pass applies them, in order.
		r.complete(t, p0)
		r.pass(t, exec, "B", 3)
		steps = s.query(t, s.AdminToken, stepsQ, M{"id": exec}).L("reasoningExecution.steps")
		require.Equal(t, []string{"s1", "s1b", "s2", "s4", "s5"}, col(steps, "stepId"))
		for i, st := range steps {
			require.Equal(t, i+1, st.N("stepIndex"))
			require.Equal(t, 5, st.N("totalSteps"))
		}
		s2 := steps[2]
		require.Equal(t, "two, better", s2.S("description"))
		require.Equal(t, "PENDING", s2.S("status"))
		require.Equal(t, []string{"draft"}, s2.Strs("provides"))
		require.Len(t, s2.L("history"), 1)
		require.Equal(t, "MODIFY", s2.L("history")[0].S("actionType"))
		require.Equal(t, "two", s2.L("history")[0].S("before.description"))
		require.Equal(t, []string{"s1"}, steps[3].Strs("dependencies"), "s4 lost its dependency on the removed s3")
		require.Equal(t, "REMOVE", steps[3].L("history")[0].S("actionType"))
		require.True(t, steps[1].L("history")[0].Null("before"), "an added step has no before")
		require.Equal(t, "RUNNING", steps[0].S("status"), "a step no refinement named is unchanged")

		// REPLACE: the new step takes the old one's place and its dependents.
		p1 := s.query(t, s.AdminToken, `query($id: ID!) { reasoningExecution(id: $id) { passes { id } } }`, M{"id": exec}).L("reasoningExecution.passes")[1].S("id")
		r.do(t, "recordRefinement", "refinement { id }", M{"passId": p1, "reason": "r", "actionType": "REPLACE", "targetStepId": "s4",
			"newStep": M{"stepId": "t4", "description": "four, again", "dependencies": []any{"s2"}}})
		r.fails(t, "recordRefinement", M{"passId": p0, "reason": "r", "actionType": "REMOVE", "targetStepId": "s5"}, "CONFLICT", "passId")

		// Convergence is computed: left out, filled; wrong, refused; reasons filled.
		assessQ := "assessment { converged reasonCodes }"
		r.fails(t, "recordConvergenceAssessment", M{"passId": p1, "converged": true, "completenessScore": 0.5, "coherenceScore": 0.99},
			"BAD_USER_INPUT", "converged")
		a := r.do(t, "recordConvergenceAssessment", assessQ, M{"passId": p1, "completenessScore": 0.5, "coherenceScore": 0.99,
			"consistencyStatus": M{"plan": true, "memory": false}}).at("assessment")
		require.False(t, a.B("converged"))
		require.Equal(t, []string{"COMPLETENESS_BELOW_THRESHOLD", "INCONSISTENT: memory"}, a.Strs("reasonCodes"))
		r.complete(t, p1)
		p2 := r.pass(t, exec, "C", 2)
		steps = s.query(t, s.AdminToken, stepsQ, M{"id": exec}).L("reasoningExecution.steps")
		require.Equal(t, []string{"s1", "s1b", "s2", "t4", "s5"}, col(steps, "stepId"))
		require.Equal(t, []string{"t4"}, steps[4].Strs("dependencies"), "s5 follows the replacement")
		a = r.do(t, "recordConvergenceAssessment", assessQ, M{"passId": p2, "completenessScore": 0.97, "coherenceScore": 0.93}).at("assessment")
		require.True(t, a.B("converged"))
		require.Empty(t, a.Strs("reasonCodes"))
		r.do(t, "finishReasoningExecution", "execution { status }", M{"executionId": exec, "status": "CONVERGED"})
	})
}

// col is the field of each element.
func col(list []jv, field string) []string {
	out := make([]string, len(list))
	for i, v := range list {
		out[i] = v.S(field)
	}
	return out
}
