package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/client"
)

// Reasoning records end to end, on every test database: the rules with their
// codes and fields, a run that converges on pass 2, one that ends
// TTL_EXPIRED, statistics true to the rows, events on the task's run stream
// (resumable from a cursor), and statement counts that do not grow with
// passes.

var reasoningSlugs atomic.Int64

// rsn is a client of the reasoning mutations as one token.
type rsn struct {
	s     *testServer
	token string
}

// mutation is the text of a reasoning mutation selecting sel.
func rsnMutation(name, sel string) string {
	return fmt.Sprintf(`mutation($in: %sInput!) { %s(input: $in) { %s } }`, strings.ToUpper(name[:1])+name[1:], name, sel)
}

// do runs mutation name with input and returns its payload.
func (r rsn) do(t *testing.T, name, sel string, in M) jv {
	t.Helper()
	return r.s.query(t, r.token, rsnMutation(name, sel), M{"in": in}).at(name)
}

// fails runs mutation name and requires it to fail with code and field.
func (r rsn) fails(t *testing.T, name string, in M, code, field string) {
	t.Helper()
	resp := r.s.requireCode(t, r.token, rsnMutation(name, "__typename"), M{"in": in}, code)
	if field == "" {
		require.Nil(t, resp.ext("field"), "%s: %+v", name, resp.Errors)
		return
	}
	require.Equal(t, field, resp.ext("field"), "%s: %+v", name, resp.Errors)
}

func (r rsn) start(t *testing.T, in M) string {
	t.Helper()
	return r.do(t, "startReasoningExecution", "execution { id }", in).S("execution.id")
}

func (r rsn) pass(t *testing.T, exec, phase string, ttl int) string {
	t.Helper()
	return r.do(t, "startExecutionPass", "pass { id passNumber }", M{"executionId": exec, "phase": phase, "ttlRemaining": ttl}).S("pass.id")
}

func (r rsn) complete(t *testing.T, pass string) jv {
	t.Helper()
	return r.do(t, "completeExecutionPass", "pass { id endedAt durationMs }", M{"passId": pass,
		"executionResults": []any{M{"step": "s1", "output": "ok"}}, "evaluationResults": M{"score": 0.5}})
}

func (r rsn) assess(t *testing.T, pass string, converged bool, completeness, coherence float64, reasons ...string) {
	t.Helper()
	in := M{"passId": pass, "converged": converged, "completenessScore": completeness, "coherenceScore": coherence,
		"consistencyStatus": M{"plan": true, "steps": true, "answer": converged}}
	if len(reasons) > 0 {
		in["reasonCodes"] = reasons
	}
	r.do(t, "recordConvergenceAssessment", "assessment { converged }", in)
}

func (r rsn) step(t *testing.T, exec, stepID, to string, extra M) jv {
	t.Helper()
	in := M{"executionId": exec, "stepId": stepID, "to": to}
	for k, v := range extra {
		in[k] = v
	}
	return r.do(t, "transitionReasoningStep", "step { stepId status clarityState stepOutput }", in).at("step")
}

// reasoningProject creates a project with a task in a list and a run of it.
func reasoningProject(t *testing.T, s *testServer) (project, task, run string) {
	t.Helper()
	e := newExecList(t, s, 1)
	task = e.add(t, "T1", nil)
	run = e.start(t)
	return e.project, task, run
}

const threeSteps = `[{"stepId": "gather", "description": "Gather the facts", "provides": ["facts"]},
	{"stepId": "draft", "description": "Draft the answer", "dependencies": ["gather"], "incomingContext": "facts"},
	{"stepId": "check", "description": "Check the draft", "dependencies": ["gather", "draft"]}]`

func decodeList(t *testing.T, s string) []any {
	var v []any
	require.NoError(t, json.Unmarshal([]byte(s), &v))
	return v
}

// executionQuery reads an execution back with everything it holds.
const executionQuery = `query($id: ID!) { reasoningExecution(id: $id) {
	id status ttl taskInput configuration completenessThreshold coherenceThreshold finalResult createdAt completedAt
	project { id } task { id } run { id }
	profile { id profileVersion reasoningDepth isDefault }
	profiles { profileVersion reasoningDepth informationSufficiency expectedToolUsage outputBreadth confidenceRequirement rawInference isDefault }
	passes { id passNumber phase ttlRemaining startedAt endedAt durationMs planState executionResults evaluationResults refinementChanges
		profile { profileVersion }
		convergence { converged reasonCodes completenessScore coherenceScore consistencyStatus detectedIssues metadata }
		validationReport { id validationId artifactType overallSeverity issueSummary proposedRepairs
			issues { issueId type severity description location proposedRepair } }
		refinements { id actionType targetStepId targetPlanSection newStep changes reason semanticValidationInput inconsistencyDetected pass { id } } }
	steps { id stepId stepIndex totalSteps description dependencies provides status stepOutput clarityState incomingContext handoffToNext }
	statistics { totalPasses totalRefinements convergenceAchieved totalTimeMs
		scoreTrajectory { passNumber completenessScore coherenceScore converged } }
} }`

// reasoningEvents are the reasoning events of a run, paged through ExecutionRun.events.
func reasoningEvents(t *testing.T, s *testServer, token, run string) []jv {
	t.Helper()
	return s.query(t, token, `query($id: ID!) { executionRun(id: $id) { events(first: 100, types: [REASONING_STARTED, PASS_STARTED,
		PASS_COMPLETED, CONVERGENCE_ASSESSED, REASONING_FINISHED]) { nodes {
		type cursor project { id } task { id } run { id }
		... on ReasoningStarted { ttl execution { id } }
		... on PassStarted { passNumber phase ttlRemaining execution { id } }
		... on PassCompleted { passNumber durationMs execution { id } }
		... on ConvergenceAssessed { passNumber converged completenessScore coherenceScore execution { id } }
		... on ReasoningFinished { status execution { id } } } } } }`, M{"id": run}).L("executionRun.events.nodes")
}

func describeReasoning(evs []jv) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		m := e.v.(map[string]any)
		switch e.S("type") {
		case "PASS_STARTED", "PASS_COMPLETED":
			out[i] = fmt.Sprintf("%s %v", e.S("type"), m["passNumber"])
		case "CONVERGENCE_ASSESSED":
			out[i] = fmt.Sprintf("%s %v %v", e.S("type"), m["passNumber"], m["converged"])
		case "REASONING_FINISHED":
			out[i] = fmt.Sprintf("%s %v", e.S("type"), m["status"])
		default:
			out[i] = e.S("type")
		}
	}
	return out
}

// TestReasoningConvergesOnPass2: one complete execution linked to a task and
// its run — profile, three passes, an assessment that fails then converges, a
// report with issues, a refinement, steps — read back whole; its events are
// on the run's stream.
func TestReasoningConvergesOnPass2(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		project, task, run := reasoningProject(t, s)
		r := rsn{s, s.AdminToken}
		exec := r.start(t, M{"projectId": project, "taskId": task, "runId": run, "taskInput": "Explain the outage",
			"ttl": 5, "configuration": M{"maxPasses": 3}, "profile": M{"reasoningDepth": 4, "informationSufficiency": 0.4,
				"expectedToolUsage": "MODERATE", "outputBreadth": "BROAD", "confidenceRequirement": "HIGH", "rawInference": "deep: incident analysis"}})

		steps := r.do(t, "setReasoningSteps", "steps { stepId stepIndex totalSteps status dependencies }",
			M{"executionId": exec, "steps": decodeList(t, threeSteps)}).L("steps")
		require.Len(t, steps, 3)
		for i, st := range steps {
			require.Equal(t, i+1, st.N("stepIndex"))
			require.Equal(t, 3, st.N("totalSteps"))
			require.Equal(t, "PENDING", st.S("status"))
		}

		// Pass 0: the initial plan.
		p0 := r.do(t, "startExecutionPass", "pass { id passNumber profile { profileVersion } }",
			M{"executionId": exec, "phase": "B", "planState": M{"steps": 3}, "ttlRemaining": 5}).at("pass")
		require.Equal(t, 0, p0.N("passNumber"))
		require.Equal(t, 1, p0.N("profile.profileVersion"))
		r.complete(t, p0.S("id"))

		// Pass 1: execution; the assessment fails, the report finds issues, a refinement follows.
		r.step(t, exec, "gather", "RUNNING", nil)
		r.step(t, exec, "gather", "COMPLETE", M{"stepOutput": "facts", "clarityState": "CLEAR"})
		r.step(t, exec, "draft", "RUNNING", nil)
		st := r.step(t, exec, "draft", "COMPLETE", M{"stepOutput": "unclear", "clarityState": "BLOCKED"})
		require.Equal(t, "INVALID", st.S("status"), "completing BLOCKED makes the step INVALID")
		p1 := r.pass(t, exec, "C", 4)
		r.assess(t, p1, false, 0.6, 0.7, "INCOMPLETE", "LOW_COHERENCE")
		rep := r.do(t, "recordValidationReport", "report { id overallSeverity issueSummary issues { issueId type severity } }",
			M{"passId": p1, "validationId": "val-1", "artifactType": "STEP", "proposedRepairs": []any{M{"step": "draft"}},
				"issues": []any{
					M{"issueId": "i1", "type": "SPECIFICITY", "severity": "MEDIUM", "description": "vague", "location": M{"stepId": "draft"}},
					M{"issueId": "i2", "type": "HALLUCINATION", "severity": "HIGH", "description": "invented a log line"},
					M{"issueId": "i3", "type": "SPECIFICITY", "severity": "LOW", "description": "no numbers"},
				}}).at("report")
		require.Equal(t, "HIGH", rep.S("overallSeverity"))
		require.Equal(t, M{"SPECIFICITY": 2.0, "HALLUCINATION": 1.0}, rep.at("issueSummary").v)
		require.Equal(t, []string{"i1", "i2", "i3"}, rep.Col("issues", "issueId"))
		ref := r.do(t, "recordRefinement", "refinement { id actionType targetStepId inconsistencyDetected }", M{"passId": p1,
			"actionType": "MODIFY", "targetStepId": "draft", "newStep": M{"description": "Draft with the log lines quoted"},
			"changes": M{"description": "quote sources"}, "reason": "hallucination in the draft",
			"semanticValidationInput": []any{M{"issueId": "i2"}}}).at("refinement")
		require.Equal(t, "draft", ref.S("targetStepId"))
		r.complete(t, p1)
		r.do(t, "setTaskProfile", "profile { profileVersion }", M{"executionId": exec, "reasoningDepth": 5,
			"informationSufficiency": 0.3, "expectedToolUsage": "EXTENSIVE", "outputBreadth": "BROAD",
			"confidenceRequirement": "HIGH", "rawInference": "deeper than thought"})

		// Pass 2: adaptive depth; it converges.
		r.step(t, exec, "draft", "PENDING", nil)
		r.step(t, exec, "draft", "RUNNING", nil)
		r.step(t, exec, "draft", "COMPLETE", M{"stepOutput": "quoted", "clarityState": "CLEAR"})
		r.step(t, exec, "check", "RUNNING", nil)
		r.step(t, exec, "check", "COMPLETE", M{"clarityState": "CLEAR"})
		p2 := r.pass(t, exec, "D", 3)
		r.assess(t, p2, true, 0.97, 0.93)
		r.complete(t, p2)
		fin := r.do(t, "finishReasoningExecution", "execution { status completedAt finalResult }",
			M{"executionId": exec, "status": "CONVERGED", "finalResult": M{"answer": "disk full"}}).at("execution")
		require.Equal(t, "CONVERGED", fin.S("status"))
		require.False(t, fin.Null("completedAt"))

		d := s.query(t, s.AdminToken, executionQuery, M{"id": exec}).at("reasoningExecution")
		require.Equal(t, "CONVERGED", d.S("status"))
		require.Equal(t, task, d.S("task.id"))
		require.Equal(t, run, d.S("run.id"))
		require.Equal(t, project, d.S("project.id"))
		require.Equal(t, 0.95, d.F("completenessThreshold"))
		require.Equal(t, 0.9, d.F("coherenceThreshold"))
		require.Equal(t, 2, d.N("profile.profileVersion"))
		require.Len(t, d.L("profiles"), 2)
		require.False(t, d.B("profiles.0.isDefault"))
		passes := d.L("passes")
		require.Len(t, passes, 3)
		sum := 0
		for i, p := range passes {
			require.Equal(t, i, p.N("passNumber"))
			require.False(t, p.Null("endedAt"))
			sum += p.N("durationMs")
		}
		require.Equal(t, []int{1, 1, 2}, []int{passes[0].N("profile.profileVersion"), passes[1].N("profile.profileVersion"),
			passes[2].N("profile.profileVersion")}, "a pass runs with the profile of its start")
		require.True(t, passes[0].Null("convergence"))
		require.Equal(t, []string{"INCOMPLETE", "LOW_COHERENCE"}, passes[1].Strs("convergence.reasonCodes"))
		require.Equal(t, "val-1", passes[1].S("validationReport.validationId"))
		require.Len(t, passes[1].L("validationReport.issues"), 3)
		require.Equal(t, "draft", passes[1].S("validationReport.issues.0.location.stepId"))
		require.Len(t, passes[1].L("refinements"), 1)
		require.Equal(t, p1, passes[1].S("refinements.0.pass.id"))
		require.True(t, passes[2].B("convergence.converged"))
		require.Equal(t, []string{"gather", "draft", "check"}, d.Col("steps", "stepId"))
		require.Equal(t, []string{"COMPLETE", "COMPLETE", "COMPLETE"}, d.Col("steps", "status"))

		stats := d.at("statistics")
		require.Equal(t, 3, stats.N("totalPasses"))
		require.Equal(t, 1, stats.N("totalRefinements"))
		require.True(t, stats.B("convergenceAchieved"))
		require.Equal(t, sum, stats.N("totalTimeMs"))
		traj := stats.L("scoreTrajectory")
		require.Len(t, traj, 2)
		require.Equal(t, M{"passNumber": 1.0, "completenessScore": 0.6, "coherenceScore": 0.7, "converged": false}, traj[0].v)
		require.Equal(t, M{"passNumber": 2.0, "completenessScore": 0.97, "coherenceScore": 0.93, "converged": true}, traj[1].v)

		// Every kind resolves through node().
		for _, id := range []string{exec, p1, rep.S("id"), ref.S("id"), d.S("profile.id"), d.S("steps.0.id")} {
			n := s.query(t, s.AdminToken, `query($id: ID!) { node(id: $id) { id } }`, M{"id": id})
			require.Equal(t, id, n.S("node.id"))
		}

		// The events are on the run's stream, about the task.
		evs := reasoningEvents(t, s, s.AdminToken, run)
		require.Equal(t, []string{"REASONING_STARTED", "PASS_STARTED 0", "PASS_COMPLETED 0", "PASS_STARTED 1",
			"CONVERGENCE_ASSESSED 1 false", "PASS_COMPLETED 1", "PASS_STARTED 2", "CONVERGENCE_ASSESSED 2 true",
			"PASS_COMPLETED 2", "REASONING_FINISHED CONVERGED"}, describeReasoning(evs))
		for _, e := range evs {
			require.Equal(t, task, e.S("task.id"))
			require.Equal(t, run, e.S("run.id"))
			require.Equal(t, exec, e.S("execution.id"))
		}
		require.Equal(t, passes[1].N("durationMs"), evs[5].N("durationMs"))
		require.Equal(t, 0.97, evs[7].F("completenessScore"))

		// The list of the project's executions filters by status.
		list := s.query(t, s.AdminToken, `query($p: ID!) { a: reasoningExecutions(projectId: $p) { totalCount nodes { id } }
			b: reasoningExecutions(projectId: $p, status: [RUNNING]) { totalCount } }`, M{"p": project})
		require.Equal(t, 1, list.N("a.totalCount"))
		require.Equal(t, exec, list.S("a.nodes.0.id"))
		require.Equal(t, 0, list.N("b.totalCount"))
	})
}

// TestReasoningTTLExpired: an execution without a profile gets the default;
// its passes spend the TTL without converging; it ends TTL_EXPIRED.
func TestReasoningTTLExpired(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		project := s.createProject(t, s.AdminToken, fmt.Sprintf("rttl%03d", reasoningSlugs.Add(1)))
		r := rsn{s, s.AdminToken}
		exec := r.start(t, M{"projectId": project, "taskInput": "Prove the lemma", "ttl": 2, "completenessThreshold": 0.8})
		var last string
		for i, ttl := range []int{2, 1, 0} {
			last = r.pass(t, exec, "C", ttl)
			r.assess(t, last, false, 0.1*float64(i+1), 0.5, "INCOMPLETE")
			if ttl > 0 {
				r.complete(t, last)
			}
		}
		r.fails(t, "finishReasoningExecution", M{"executionId": exec, "status": "CONVERGED"}, "BAD_USER_INPUT", "status")
		fin := r.do(t, "finishReasoningExecution", "execution { status }", M{"executionId": exec, "status": "TTL_EXPIRED"})
		require.Equal(t, "TTL_EXPIRED", fin.S("execution.status"))

		d := s.query(t, s.AdminToken, executionQuery, M{"id": exec}).at("reasoningExecution")
		require.Equal(t, M{"profileVersion": 1.0, "reasoningDepth": 3.0, "informationSufficiency": 0.5, "expectedToolUsage": "MODERATE",
			"outputBreadth": "MODERATE", "confidenceRequirement": "MEDIUM", "rawInference": "Default profile: moderate complexity assumed",
			"isDefault": true}, d.at("profiles.0").v)
		require.Equal(t, 0.8, d.F("completenessThreshold"))
		require.Equal(t, M{}, d.at("configuration").v)
		require.True(t, d.Null("task"))
		passes := d.L("passes")
		require.Len(t, passes, 3)
		require.False(t, passes[2].Null("endedAt"), "finishing closes the open pass")
		sum := 0
		for _, p := range passes {
			sum += p.N("durationMs")
		}
		stats := d.at("statistics")
		require.Equal(t, 3, stats.N("totalPasses"))
		require.Equal(t, 0, stats.N("totalRefinements"))
		require.False(t, stats.B("convergenceAchieved"))
		require.Equal(t, sum, stats.N("totalTimeMs"))
		require.Equal(t, []string{"0", "1", "2"}, func() []string {
			var out []string
			for _, p := range stats.L("scoreTrajectory") {
				out = append(out, fmt.Sprint(p.N("passNumber")))
				require.False(t, p.B("converged"))
			}
			return out
		}())
		require.InDelta(t, 0.3, stats.F("scoreTrajectory.2.completenessScore"), 1e-9)

		// Nothing changes a finished execution.
		r.fails(t, "startExecutionPass", M{"executionId": exec, "phase": "C", "ttlRemaining": 0}, "CONFLICT", "executionId")
		r.fails(t, "finishReasoningExecution", M{"executionId": exec, "status": "FAILED"}, "CONFLICT", "executionId")
		r.fails(t, "recordRefinement", M{"passId": last, "actionType": "REMOVE", "targetPlanSection": "x", "reason": "r"}, "CONFLICT", "passId")
		list := s.query(t, s.AdminToken, `query($p: ID!) { reasoningExecutions(projectId: $p, status: [TTL_EXPIRED]) { totalCount } }`, M{"p": project})
		require.Equal(t, 1, list.N("reasoningExecutions.totalCount"))
	})
}

// TestReasoningRules: every rule of the contract, with its code and field.
func TestReasoningRules(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		project := s.createProject(t, s.AdminToken, fmt.Sprintf("rrul%03d", reasoningSlugs.Add(1)))
		other := s.createProject(t, s.AdminToken, fmt.Sprintf("roth%03d", reasoningSlugs.Add(1)))
		otherTask := s.createTask(t, s.AdminToken, other, "elsewhere", nil)
		r := rsn{s, s.AdminToken}
		profile := func(k string, v any) M {
			p := M{"reasoningDepth": 3, "informationSufficiency": 0.5, "expectedToolUsage": "NONE", "outputBreadth": "NARROW",
				"confidenceRequirement": "LOW", "rawInference": "simple"}
			p[k] = v
			return p
		}
		start := func(k string, v any) M {
			in := M{"projectId": project, "taskInput": "t", "ttl": 3}
			in[k] = v
			return in
		}

		// Profiles.
		r.fails(t, "startReasoningExecution", start("profile", profile("reasoningDepth", 0)), "BAD_USER_INPUT", "profile.reasoningDepth")
		r.fails(t, "startReasoningExecution", start("profile", profile("reasoningDepth", 6)), "BAD_USER_INPUT", "profile.reasoningDepth")
		r.fails(t, "startReasoningExecution", start("profile", profile("informationSufficiency", 1.5)), "BAD_USER_INPUT", "profile.informationSufficiency")
		r.fails(t, "startReasoningExecution", start("profile", profile("informationSufficiency", -0.1)), "BAD_USER_INPUT", "profile.informationSufficiency")
		r.fails(t, "startReasoningExecution", start("profile", profile("rawInference", " ")), "BAD_USER_INPUT", "profile.rawInference")
		r.fails(t, "startReasoningExecution", start("taskInput", ""), "BAD_USER_INPUT", "taskInput")
		r.fails(t, "startReasoningExecution", start("ttl", 0), "BAD_USER_INPUT", "ttl")
		r.fails(t, "startReasoningExecution", start("completenessThreshold", 1.2), "BAD_USER_INPUT", "completenessThreshold")
		r.fails(t, "startReasoningExecution", start("coherenceThreshold", -1), "BAD_USER_INPUT", "coherenceThreshold")
		r.fails(t, "startReasoningExecution", start("taskId", otherTask), "NOT_FOUND", "taskId")
		r.fails(t, "startReasoningExecution", start("projectId", missingID("Project")), "NOT_FOUND", "projectId")

		exec := r.start(t, start("profile", profile("reasoningDepth", 1)))
		set := func(k string, v any) M {
			in := profile(k, v)
			in["executionId"] = exec
			return in
		}
		r.fails(t, "setTaskProfile", set("reasoningDepth", 9), "BAD_USER_INPUT", "reasoningDepth")
		r.fails(t, "setTaskProfile", set("informationSufficiency", 2), "BAD_USER_INPUT", "informationSufficiency")
		r.fails(t, "setTaskProfile", set("rawInference", ""), "BAD_USER_INPUT", "rawInference")
		v := r.do(t, "setTaskProfile", "profile { profileVersion isDefault }", set("reasoningDepth", 2)).at("profile")
		require.Equal(t, 2, v.N("profileVersion"))
		require.False(t, v.B("isDefault"))

		// Passes.
		r.fails(t, "startExecutionPass", M{"executionId": exec, "phase": "A", "ttlRemaining": -1}, "BAD_USER_INPUT", "ttlRemaining")
		r.fails(t, "startExecutionPass", M{"executionId": exec, "phase": "A", "ttlRemaining": 4}, "BAD_USER_INPUT", "ttlRemaining")
		p0 := r.do(t, "startExecutionPass", "pass { id passNumber profile { profileVersion } }", M{"executionId": exec, "phase": "A", "ttlRemaining": 3}).at("pass")
		require.Equal(t, 0, p0.N("passNumber"))
		require.Equal(t, 2, p0.N("profile.profileVersion"))
		r.fails(t, "startExecutionPass", M{"executionId": exec, "phase": "B", "ttlRemaining": 2}, "CONFLICT", "executionId")
		done := r.complete(t, p0.S("id"))
		require.GreaterOrEqual(t, done.N("pass.durationMs"), 0)
		r.fails(t, "completeExecutionPass", M{"passId": p0.S("id")}, "CONFLICT", "passId")
		r.fails(t, "startExecutionPass", M{"executionId": exec, "phase": "B", "ttlRemaining": 4}, "BAD_USER_INPUT", "ttlRemaining")
		p1 := r.do(t, "startExecutionPass", "pass { id passNumber }", M{"executionId": exec, "phase": "B", "ttlRemaining": 3}).at("pass")
		require.Equal(t, 1, p1.N("passNumber"))
		pass := p1.S("id")

		// Convergence.
		assess := func(k string, v any) M {
			in := M{"passId": pass, "converged": true, "completenessScore": 0.96, "coherenceScore": 0.95,
				"consistencyStatus": M{"plan": true, "memory": true}}
			in[k] = v
			return in
		}
		r.fails(t, "recordConvergenceAssessment", assess("completenessScore", 1.5), "BAD_USER_INPUT", "completenessScore")
		r.fails(t, "recordConvergenceAssessment", assess("coherenceScore", -0.1), "BAD_USER_INPUT", "coherenceScore")
		r.fails(t, "recordConvergenceAssessment", assess("converged", false), "BAD_USER_INPUT", "converged")
		r.fails(t, "recordConvergenceAssessment", assess("completenessScore", 0.94), "BAD_USER_INPUT", "converged")
		r.fails(t, "recordConvergenceAssessment", assess("coherenceScore", 0.89), "BAD_USER_INPUT", "converged")
		r.fails(t, "recordConvergenceAssessment", assess("consistencyStatus", M{"plan": true, "memory": false}), "BAD_USER_INPUT", "converged")
		r.do(t, "recordConvergenceAssessment", "assessment { converged }", assess("completenessScore", 0.95))
		r.fails(t, "recordConvergenceAssessment", assess("completenessScore", 0.99), "CONFLICT", "passId")

		// Validation reports.
		issue := func(id, typ, sev string) M { return M{"issueId": id, "type": typ, "severity": sev, "description": "d"} }
		r.fails(t, "recordValidationReport", M{"passId": pass, "validationId": "v", "artifactType": "PLAN",
			"issues": []any{issue("a", "RELEVANCE", "LOW"), issue("a", "CONSISTENCY", "LOW")}}, "BAD_USER_INPUT", "issues[1].issueId")
		r.fails(t, "recordValidationReport", M{"passId": pass, "validationId": "", "artifactType": "PLAN"}, "BAD_USER_INPUT", "validationId")
		empty := r.do(t, "recordValidationReport", "report { overallSeverity issueSummary issues { issueId } }",
			M{"passId": pass, "validationId": "v", "artifactType": "CROSS_PHASE"}).at("report")
		require.Equal(t, "LOW", empty.S("overallSeverity"), "no issues: LOW")
		require.Equal(t, M{}, empty.at("issueSummary").v)
		r.fails(t, "recordValidationReport", M{"passId": pass, "validationId": "v2", "artifactType": "PLAN"}, "CONFLICT", "passId")

		// Steps.
		r.fails(t, "setReasoningSteps", M{"executionId": exec, "steps": []any{
			M{"stepId": "a", "description": "A", "dependencies": []string{"b"}}, M{"stepId": "b", "description": "B"}}},
			"BAD_USER_INPUT", "steps[0].dependencies")
		r.fails(t, "setReasoningSteps", M{"executionId": exec, "steps": []any{
			M{"stepId": "a", "description": "A"}, M{"stepId": "a", "description": "B"}}}, "BAD_USER_INPUT", "steps[1].stepId")
		r.do(t, "setReasoningSteps", "steps { stepId }", M{"executionId": exec, "steps": []any{
			M{"stepId": "a", "description": "A"}, M{"stepId": "b", "description": "B", "dependencies": []string{"a"}},
			M{"stepId": "c", "description": "C"}}})
		r.fails(t, "transitionReasoningStep", M{"executionId": exec, "stepId": "b", "to": "RUNNING"}, "BAD_USER_INPUT", "to")
		r.fails(t, "transitionReasoningStep", M{"executionId": exec, "stepId": "a", "to": "COMPLETE"}, "INVALID_TRANSITION", "to")
		r.fails(t, "transitionReasoningStep", M{"executionId": exec, "stepId": "zz", "to": "RUNNING"}, "NOT_FOUND", "stepId")
		r.step(t, exec, "a", "RUNNING", nil)
		r.fails(t, "transitionReasoningStep", M{"executionId": exec, "stepId": "a", "to": "PENDING"}, "INVALID_TRANSITION", "to")
		r.step(t, exec, "a", "COMPLETE", M{"clarityState": "CLEAR"})
		r.fails(t, "transitionReasoningStep", M{"executionId": exec, "stepId": "a", "to": "RUNNING"}, "INVALID_TRANSITION", "to")
		r.step(t, exec, "b", "RUNNING", nil)
		require.Equal(t, "INVALID", r.step(t, exec, "b", "COMPLETE", M{"clarityState": "BLOCKED"}).S("status"))
		require.Equal(t, "PENDING", r.step(t, exec, "b", "PENDING", nil).S("status"))
		r.step(t, exec, "c", "RUNNING", nil)
		r.step(t, exec, "c", "FAILED", M{"stepOutput": "tool crashed"})
		r.fails(t, "transitionReasoningStep", M{"executionId": exec, "stepId": "c", "to": "PENDING"}, "INVALID_TRANSITION", "to")
		r.fails(t, "setReasoningSteps", M{"executionId": exec, "steps": []any{M{"stepId": "b", "description": "B"}}},
			"INVALID_TRANSITION", "steps")

		// Refinements.
		ref := func(k string, v any) M {
			in := M{"passId": pass, "actionType": "MODIFY", "targetStepId": "b", "newStep": M{"description": "B2"}, "reason": "vague"}
			if v == nil {
				delete(in, k)
			} else {
				in[k] = v
			}
			return in
		}
		r.fails(t, "recordRefinement", ref("targetPlanSection", "intro"), "BAD_USER_INPUT", "targetStepId")
		r.fails(t, "recordRefinement", ref("targetStepId", nil), "BAD_USER_INPUT", "targetStepId")
		r.fails(t, "recordRefinement", ref("newStep", nil), "BAD_USER_INPUT", "newStep")
		r.fails(t, "recordRefinement", M{"passId": pass, "actionType": "ADD", "targetPlanSection": "end", "reason": "more"}, "BAD_USER_INPUT", "newStep")
		r.fails(t, "recordRefinement", ref("reason", " "), "BAD_USER_INPUT", "reason")
		r.fails(t, "recordRefinement", ref("targetStepId", "a"), "INVALID_TRANSITION", "targetStepId")
		r.fails(t, "recordRefinement", ref("targetStepId", "c"), "INVALID_TRANSITION", "targetStepId")
		r.do(t, "recordRefinement", "refinement { id }", ref("targetStepId", "b"))
		r.do(t, "recordRefinement", "refinement { id }", M{"passId": pass, "actionType": "REMOVE", "targetPlanSection": "appendix", "reason": "unused"})

		// Finish.
		r.fails(t, "finishReasoningExecution", M{"executionId": exec, "status": "TTL_EXPIRED"}, "BAD_USER_INPUT", "status")
		r.fails(t, "finishReasoningExecution", M{"executionId": exec, "status": "RUNNING"}, "BAD_USER_INPUT", "status")
		r.complete(t, pass)
		p2 := r.pass(t, exec, "C", 3)
		r.fails(t, "finishReasoningExecution", M{"executionId": exec, "status": "CONVERGED"}, "BAD_USER_INPUT", "status")
		r.assess(t, p2, false, 0.5, 0.5, "STUCK")
		r.fails(t, "finishReasoningExecution", M{"executionId": exec, "status": "CONVERGED"}, "BAD_USER_INPUT", "status")
		r.do(t, "finishReasoningExecution", "execution { status }", M{"executionId": exec, "status": "FAILED", "finalResult": M{"error": "stuck"}})
		r.fails(t, "startExecutionPass", M{"executionId": exec, "phase": "C", "ttlRemaining": 1}, "CONFLICT", "executionId")
		r.fails(t, "finishReasoningExecution", M{"executionId": exec, "status": "FAILED"}, "CONFLICT", "executionId")

		// Roles: agents read their project's records and change none; other members see nothing.
		_, agent := s.userWithToken(t, fmt.Sprintf("ragent%03d", reasoningSlugs.Add(1)), "AGENT", project)
		rsn{s, agent}.fails(t, "startReasoningExecution", M{"projectId": project, "taskInput": "t", "ttl": 1}, "FORBIDDEN", "")
		require.Equal(t, exec, s.query(t, agent, `query($id: ID!) { reasoningExecution(id: $id) { id } }`, M{"id": exec}).S("reasoningExecution.id"))
		_, member := s.member(t, fmt.Sprintf("rmember%03d", reasoningSlugs.Add(1)))
		require.True(t, s.query(t, member, `query($id: ID!) { reasoningExecution(id: $id) { id } node(id: $id) { id } }`,
			M{"id": exec}).Null("reasoningExecution"))
		rsn{s, member}.fails(t, "setTaskProfile", set("reasoningDepth", 2), "NOT_FOUND", "executionId")
		rsn{s, member}.fails(t, "startReasoningExecution", M{"projectId": project, "taskInput": "t", "ttl": 1}, "NOT_FOUND", "projectId")
		s.requireCode(t, member, `query($p: ID!) { reasoningExecutions(projectId: $p) { totalCount } }`, M{"p": project}, "NOT_FOUND")
	})
}

// subscribeReasoning subscribes to a run's reasoning events after a cursor
// ("" : from the run's first event).
func subscribeReasoning(t *testing.T, s *testServer, token, run, after string) (*client.Conn, *client.Subscription) {
	t.Helper()
	conn := s.dial(t, token)
	vars := M{"r": run, "types": []string{"PASS_STARTED", "PASS_COMPLETED", "CONVERGENCE_ASSESSED"}}
	if after != "" {
		vars["after"] = after
	}
	sub, err := conn.Subscribe(context.Background(), `subscription($r: ID!, $after: String, $types: [ExecutionEventType!]) {
		runEvents(runId: $r, after: $after, types: $types) { cursor type
			... on PassStarted { passNumber } ... on PassCompleted { passNumber } ... on ConvergenceAssessed { passNumber } } }`, vars)
	require.NoError(t, err)
	return conn, sub
}

func nextReasoningEvent(t *testing.T, sub *client.Subscription) (cursor, desc string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	r, err := sub.Next(ctx)
	require.NoError(t, err)
	require.Empty(t, r.Errors)
	var d struct {
		RunEvents struct {
			Cursor, Type string
			PassNumber   int
		}
	}
	require.NoError(t, json.Unmarshal(r.Data, &d))
	return d.RunEvents.Cursor, fmt.Sprintf("%s %d", d.RunEvents.Type, d.RunEvents.PassNumber)
}

// TestReasoningEventsResume: a run subscriber that reconnects from the last
// cursor it received misses no PASS_* or CONVERGENCE_* event.
func TestReasoningEventsResume(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		project, task, run := reasoningProject(t, s)
		r := rsn{s, s.AdminToken}
		exec := r.start(t, M{"projectId": project, "taskId": task, "runId": run, "taskInput": "x", "ttl": 3})
		p0 := r.pass(t, exec, "A", 3)

		conn, sub := subscribeReasoning(t, s, s.AdminToken, run, "")
		var got []string
		cur, d := nextReasoningEvent(t, sub)
		got = append(got, d)
		r.assess(t, p0, false, 0.2, 0.3, "EARLY")
		cur, d = nextReasoningEvent(t, sub)
		got = append(got, d)
		require.NoError(t, conn.Close())

		// While nobody listens.
		r.complete(t, p0)
		p1 := r.pass(t, exec, "C", 2)
		r.assess(t, p1, true, 1, 1)

		_, sub = subscribeReasoning(t, s, s.AdminToken, run, cur)
		for range 3 {
			_, d = nextReasoningEvent(t, sub)
			got = append(got, d)
		}
		r.complete(t, p1)
		_, d = nextReasoningEvent(t, sub)
		got = append(got, d)
		require.Equal(t, []string{"PASS_STARTED 0", "CONVERGENCE_ASSESSED 0", "PASS_COMPLETED 0", "PASS_STARTED 1",
			"CONVERGENCE_ASSESSED 1", "PASS_COMPLETED 1"}, got)
	})
}

// seedReasoning creates an execution with n passes, each assessed, with a
// report of two issues and two refinements, and a plan of three steps.
func seedReasoning(t *testing.T, s *testServer, project string, n int) string {
	t.Helper()
	r := rsn{s, s.AdminToken}
	exec := r.start(t, M{"projectId": project, "taskInput": "measure", "ttl": n})
	r.do(t, "setReasoningSteps", "steps { id }", M{"executionId": exec, "steps": decodeList(t, threeSteps)})
	for i := range n {
		p := r.pass(t, exec, "C", n-i)
		r.assess(t, p, false, 0.5, 0.5, "AGAIN")
		r.do(t, "recordValidationReport", "report { id }", M{"passId": p, "validationId": fmt.Sprint("v", i), "artifactType": "STEP",
			"issues": []any{M{"issueId": "a", "type": "RELEVANCE", "severity": "LOW", "description": "d"},
				M{"issueId": "b", "type": "CONSISTENCY", "severity": "HIGH", "description": "d"}}})
		for range 2 {
			r.do(t, "recordRefinement", "refinement { id }", M{"passId": p, "actionType": "REMOVE", "targetPlanSection": "x", "reason": "r"})
		}
		r.complete(t, p)
	}
	r.do(t, "setTaskProfile", "profile { id }", M{"executionId": exec, "reasoningDepth": 2, "informationSufficiency": 0.9,
		"expectedToolUsage": "NONE", "outputBreadth": "NARROW", "confidenceRequirement": "LOW", "rawInference": "easier"})
	return exec
}

// TestReasoningStatements: reading an execution with everything it holds
// costs the same number of statements for 1 pass and for 20.
func TestReasoningStatements(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		project := s.createProject(t, s.AdminToken, fmt.Sprintf("rstm%03d", reasoningSlugs.Add(1)))
		small := seedReasoning(t, s, project, 1)
		large := seedReasoning(t, s, project, 20)
		// The server's background sweeps count their statements too and only
		// ever add: the fewest of three reads is the query's own.
		fewest := func(read func()) int64 {
			var n int64 = -1
			for range 3 {
				before := s.DB.Statements()
				read()
				if c := s.DB.Statements() - before; n < 0 || c < n {
					n = c
				}
			}
			return n
		}
		count := func(id string) (int64, jv) {
			var d jv
			n := fewest(func() { d = s.query(t, s.AdminToken, executionQuery, M{"id": id}) })
			return n, d.at("reasoningExecution")
		}
		count(small) // warm the token's last-used mark
		nSmall, dSmall := count(small)
		nLarge, dLarge := count(large)
		require.Len(t, dSmall.L("passes"), 1)
		require.Len(t, dLarge.L("passes"), 20)
		require.Equal(t, 40, dLarge.N("statistics.totalRefinements"))
		require.Len(t, dLarge.L("statistics.scoreTrajectory"), 20)
		require.Equal(t, nSmall, nLarge, "statements for 1 pass vs 20 passes")
		t.Logf("execution query: %d statements for 1 pass, %d for 20", nSmall, nLarge)

		// The project's list with nested passes costs the same for 1 and 2 executions.
		listQuery := `query($p: ID!, $n: Int) { reasoningExecutions(projectId: $p, first: $n) { nodes { id
			passes { convergence { converged } validationReport { issues { issueId } } refinements { id } }
			steps { stepId } statistics { totalPasses scoreTrajectory { passNumber } } profile { profileVersion } } } }`
		one := fewest(func() { s.query(t, s.AdminToken, listQuery, M{"p": project, "n": 1}) })
		two := fewest(func() { s.query(t, s.AdminToken, listQuery, M{"p": project, "n": 2}) })
		require.Equal(t, one, two, "statements for 1 execution vs 2")
	})
}

// TestReasoningDocExample runs the execution of docs/reasoning.md as written:
// every mutation block in order, then the query that reads it back.
func TestReasoningDocExample(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../../docs/reasoning.md")
	require.NoError(t, err)
	var blocks []string
	for _, part := range strings.Split(string(raw), "```graphql\n")[1:] {
		block, _, ok := strings.Cut(part, "```")
		require.True(t, ok)
		if strings.HasPrefix(block, "subscription") {
			continue
		}
		blocks = append(blocks, block)
	}
	require.GreaterOrEqual(t, len(blocks), 15)
	eachDB(t, func(t *testing.T, s *testServer) {
		project, task, run := reasoningProject(t, s)
		vars := map[string]any{"project": project, "task": task, "run": run}
		var last jv
		for _, b := range blocks {
			use := M{}
			for name, v := range vars {
				if strings.Contains(b, "$"+name+":") {
					use[name] = v
				}
			}
			last = s.query(t, s.AdminToken, b, use)
			if m, ok := last.v.(map[string]any)["startReasoningExecution"]; ok && m != nil {
				vars["exec"] = last.S("startReasoningExecution.execution.id")
			}
			if m, ok := last.v.(map[string]any)["startExecutionPass"]; ok && m != nil {
				vars[fmt.Sprint("pass", last.N("startExecutionPass.pass.passNumber"))] = last.S("startExecutionPass.pass.id")
			}
		}
		d := last.at("reasoningExecution")
		require.Equal(t, "CONVERGED", d.S("status"))
		require.Equal(t, "HIGH", d.S("passes.1.validationReport.overallSeverity"))
		require.Equal(t, M{"HALLUCINATION": 1.0, "SPECIFICITY": 2.0}, d.at("passes.1.validationReport.issueSummary").v)
		require.Equal(t, []string{"COMPLETE", "COMPLETE", "COMPLETE"}, d.Col("steps", "status"))
		require.Equal(t, 2, d.N("profile.profileVersion"))
		require.Equal(t, 2, d.N("passes.2.profile.profileVersion"))
		st := d.at("statistics")
		require.Equal(t, 3, st.N("totalPasses"))
		require.Equal(t, 1, st.N("totalRefinements"))
		require.True(t, st.B("convergenceAchieved"))
		require.Equal(t, d.N("passes.0.durationMs")+d.N("passes.1.durationMs")+d.N("passes.2.durationMs"), st.N("totalTimeMs"))
		require.Equal(t, []any{
			M{"passNumber": 1.0, "completenessScore": 0.6, "coherenceScore": 0.7, "converged": false},
			M{"passNumber": 2.0, "completenessScore": 0.97, "coherenceScore": 0.93, "converged": true},
		}, st.at("scoreTrajectory").v)
	})
}

// TestReasoningConcurrentPasses: passes started at the same time on one
// execution: one opens, the others get CONFLICT, and numbers never repeat.
func TestReasoningConcurrentPasses(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		project := s.createProject(t, s.AdminToken, fmt.Sprintf("rcon%03d", reasoningSlugs.Add(1)))
		r := rsn{s, s.AdminToken}
		exec := r.start(t, M{"projectId": project, "taskInput": "race", "ttl": 10})
		const n = 6
		codes := make([]string, n)
		done := make(chan int, n)
		for i := range n {
			go func() {
				resp, err := s.post(s.AdminToken, rsnMutation("startExecutionPass", "pass { passNumber }"),
					M{"in": M{"executionId": exec, "phase": "C", "ttlRemaining": 5}})
				if err == nil {
					codes[i] = resp.code()
				} else {
					codes[i] = err.Error()
				}
				done <- i
			}()
		}
		for range n {
			<-done
		}
		ok, conflicts := 0, 0
		for _, c := range codes {
			switch c {
			case "":
				ok++
			case "CONFLICT":
				conflicts++
			default:
				t.Fatalf("unexpected outcome %q", c)
			}
		}
		require.Equal(t, 1, ok)
		require.Equal(t, n-1, conflicts)
		d := s.query(t, s.AdminToken, `query($id: ID!) { reasoningExecution(id: $id) { passes { passNumber endedAt } } }`, M{"id": exec})
		require.Len(t, d.L("reasoningExecution.passes"), 1)
		require.Equal(t, 0, d.N("reasoningExecution.passes.0.passNumber"))
	})
}
