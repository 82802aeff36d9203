package domain

import (
	"slices"
	"testing"
	"time"
)

// wantErr checks err against a code and field ("" code: no error).
func wantErr(t *testing.T, err error, code Code, field string) {
	t.Helper()
	if code == "" {
		if err != nil {
			t.Fatalf("unexpected error %v", err)
		}
		return
	}
	e, ok := AsError(err)
	if !ok {
		t.Fatalf("want %s (field %q), got %v", code, field, err)
	}
	if e.Code != code || e.Field != field {
		t.Fatalf("want %s (field %q), got %s (field %q): %s", code, field, e.Code, e.Field, e.Message)
	}
}

func TestCheckTaskProfile(t *testing.T) {
	ok := DefaultTaskProfile()
	with := func(f func(p *TaskProfileInput)) TaskProfileInput { p := ok; f(&p); return p }
	for _, c := range []struct {
		name  string
		in    TaskProfileInput
		code  Code
		field string
	}{
		{"default", ok, "", ""},
		{"depth 1", with(func(p *TaskProfileInput) { p.ReasoningDepth = 1 }), "", ""},
		{"depth 5", with(func(p *TaskProfileInput) { p.ReasoningDepth = 5 }), "", ""},
		{"depth 0", with(func(p *TaskProfileInput) { p.ReasoningDepth = 0 }), CodeBadUserInput, "profile.reasoningDepth"},
		{"depth 6", with(func(p *TaskProfileInput) { p.ReasoningDepth = 6 }), CodeBadUserInput, "profile.reasoningDepth"},
		{"sufficiency 0", with(func(p *TaskProfileInput) { p.InformationSufficiency = 0 }), "", ""},
		{"sufficiency 1", with(func(p *TaskProfileInput) { p.InformationSufficiency = 1 }), "", ""},
		{"sufficiency -0.1", with(func(p *TaskProfileInput) { p.InformationSufficiency = -0.1 }), CodeBadUserInput, "profile.informationSufficiency"},
		{"sufficiency 1.1", with(func(p *TaskProfileInput) { p.InformationSufficiency = 1.1 }), CodeBadUserInput, "profile.informationSufficiency"},
		{"empty inference", with(func(p *TaskProfileInput) { p.RawInference = "  " }), CodeBadUserInput, "profile.rawInference"},
		{"bad tool usage", with(func(p *TaskProfileInput) { p.ExpectedToolUsage = "LOTS" }), CodeBadUserInput, "profile.expectedToolUsage"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := CheckTaskProfile("profile.", c.in)
			wantErr(t, err, c.code, c.field)
		})
	}
}

func TestCheckPassStart(t *testing.T) {
	now := time.Now()
	closed := &ExecutionPass{PassNumber: 1, TTLRemaining: 3, EndedAt: &now}
	open := &ExecutionPass{PassNumber: 1, TTLRemaining: 3}
	for _, c := range []struct {
		name   string
		status ReasoningStatus
		last   *ExecutionPass
		ttl    int
		code   Code
		field  string
	}{
		{"first at ttl", ReasoningRunning, nil, 5, "", ""},
		{"first above ttl", ReasoningRunning, nil, 6, CodeBadUserInput, "ttlRemaining"},
		{"negative", ReasoningRunning, nil, -1, CodeBadUserInput, "ttlRemaining"},
		{"next equal", ReasoningRunning, closed, 3, "", ""},
		{"next zero", ReasoningRunning, closed, 0, "", ""},
		{"next above previous", ReasoningRunning, closed, 4, CodeBadUserInput, "ttlRemaining"},
		{"open pass", ReasoningRunning, open, 2, CodeConflict, "executionId"},
		{"finished", ReasoningConverged, closed, 2, CodeConflict, "executionId"},
	} {
		t.Run(c.name, func(t *testing.T) {
			wantErr(t, CheckPassStart(c.status, 5, c.last, c.ttl), c.code, c.field)
		})
	}
	if NextPassNumber(nil) != 0 || NextPassNumber(closed) != 2 {
		t.Fatal("pass numbers start at 0 and go up by one")
	}
	if PassDurationMs(now, now.Add(1500*time.Millisecond)) != 1500 {
		t.Fatal("duration in ms")
	}
}

func TestCheckAssessment(t *testing.T) {
	yes, no := true, false
	base := RecordConvergenceAssessmentInput{CompletenessScore: 0.96, CoherenceScore: 0.91,
		ConsistencyStatus: JSON(`{"plan": true, "steps": true}`)}
	with := func(f func(in *RecordConvergenceAssessmentInput)) RecordConvergenceAssessmentInput {
		in := base
		f(&in)
		return in
	}
	for _, c := range []struct {
		name      string
		in        RecordConvergenceAssessmentInput
		code      Code
		field     string
		converged bool
		reasons   []string
	}{
		{"converged", base, "", "", true, nil},
		{"converged, said", with(func(in *RecordConvergenceAssessmentInput) { in.Converged = &yes }), "", "", true, nil},
		{"at thresholds", with(func(in *RecordConvergenceAssessmentInput) { in.CompletenessScore, in.CoherenceScore = 0.95, 0.90 }), "", "", true, nil},
		{"no consistency status", with(func(in *RecordConvergenceAssessmentInput) { in.ConsistencyStatus = nil }), "", "", true, nil},
		{"completeness below", with(func(in *RecordConvergenceAssessmentInput) { in.CompletenessScore = 0.94 }), "", "", false,
			[]string{"COMPLETENESS_BELOW_THRESHOLD"}},
		{"completeness below, said converged", with(func(in *RecordConvergenceAssessmentInput) {
			in.CompletenessScore, in.Converged = 0.94, &yes
		}), CodeBadUserInput, "converged", false, nil},
		{"converged, said not", with(func(in *RecordConvergenceAssessmentInput) { in.Converged = &no }), CodeBadUserInput, "converged", false, nil},
		{"both below and inconsistent", with(func(in *RecordConvergenceAssessmentInput) {
			in.CompletenessScore, in.CoherenceScore = 0.1, 0.5
			in.ConsistencyStatus = JSON(`{"plan": true, "memory": false, "answer": "yes"}`)
		}), "", "", false, []string{"COMPLETENESS_BELOW_THRESHOLD", "COHERENCE_BELOW_THRESHOLD", "INCONSISTENT: answer", "INCONSISTENT: memory"}},
		{"the client's reasons are kept", with(func(in *RecordConvergenceAssessmentInput) {
			in.Converged, in.ReasonCodes, in.CompletenessScore = &no, []string{"INCOMPLETE"}, 0.2
		}), "", "", false, []string{"INCOMPLETE"}},
		{"status not an object", with(func(in *RecordConvergenceAssessmentInput) { in.ConsistencyStatus = JSON(`[true]`) }), CodeBadUserInput, "consistencyStatus", false, nil},
		{"completeness above 1", with(func(in *RecordConvergenceAssessmentInput) { in.CompletenessScore = 1.01 }), CodeBadUserInput, "completenessScore", false, nil},
		{"coherence negative", with(func(in *RecordConvergenceAssessmentInput) { in.CoherenceScore = -0.01 }), CodeBadUserInput, "coherenceScore", false, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := CheckAssessment(c.in, 0.95, 0.90)
			wantErr(t, err, c.code, c.field)
			if err != nil {
				return
			}
			if *got.Converged != c.converged || !slices.Equal(got.ReasonCodes, c.reasons) {
				t.Fatalf("converged %v reasons %q; want %v %q", *got.Converged, got.ReasonCodes, c.converged, c.reasons)
			}
		})
	}
}

func TestValidationReport(t *testing.T) {
	issue := func(id string, typ ValidationIssueType, sev IssueSeverity) *ValidationIssueInput {
		return &ValidationIssueInput{IssueID: id, Type: typ, Severity: sev, Description: "d"}
	}
	for _, c := range []struct {
		name  string
		in    RecordValidationReportInput
		code  Code
		field string
	}{
		{"no issues", RecordValidationReportInput{ValidationID: "v", ArtifactType: ArtifactPlan}, "", ""},
		{"empty validation id", RecordValidationReportInput{ValidationID: " ", ArtifactType: ArtifactPlan}, CodeBadUserInput, "validationId"},
		{"duplicate issue ids", RecordValidationReportInput{ValidationID: "v", ArtifactType: ArtifactStep,
			Issues: []*ValidationIssueInput{issue("i1", IssueRelevance, SeverityLow), issue("i1", IssueRelevance, SeverityLow)}}, CodeBadUserInput, "issues[1].issueId"},
		{"empty issue id", RecordValidationReportInput{ValidationID: "v", ArtifactType: ArtifactStep,
			Issues: []*ValidationIssueInput{issue("", IssueRelevance, SeverityLow)}}, CodeBadUserInput, "issues[0].issueId"},
		{"empty description", RecordValidationReportInput{ValidationID: "v", ArtifactType: ArtifactStep,
			Issues: []*ValidationIssueInput{{IssueID: "x", Type: IssueRelevance, Severity: SeverityLow}}}, CodeBadUserInput, "issues[0].description"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := CheckValidationReport(c.in)
			wantErr(t, err, c.code, c.field)
		})
	}
	if OverallSeverity(nil) != SeverityLow {
		t.Fatal("no issues: LOW")
	}
	issues := []*ValidationIssueInput{issue("a", IssueSpecificity, SeverityMedium), issue("b", IssueHallucination, SeverityCritical),
		issue("c", IssueSpecificity, SeverityLow)}
	if OverallSeverity(issues) != SeverityCritical {
		t.Fatal("the highest severity wins")
	}
	if got := string(IssueSummary(issues)); got != `{"HALLUCINATION":1,"SPECIFICITY":2}` {
		t.Fatalf("summary %s", got)
	}
	if got := string(IssueSummary(nil)); got != `{}` {
		t.Fatalf("empty summary %s", got)
	}
}

func TestCheckRefinement(t *testing.T) {
	s := func(v string) *string { return &v }
	step := func(st ReasoningStepStatus) *ReasoningStep { return &ReasoningStep{StepID: "s1", Status: st} }
	for _, c := range []struct {
		name   string
		in     RecordRefinementInput
		target *ReasoningStep
		code   Code
		field  string
	}{
		{"plan section", RecordRefinementInput{ActionType: RefinementRemove, TargetPlanSection: s("intro"), Reason: "r"}, nil, "", ""},
		{"pending step", RecordRefinementInput{ActionType: RefinementModify, TargetStepID: s("s1"), NewStep: JSON(`{}`), Reason: "r"}, step(StepPending), "", ""},
		{"invalid step", RecordRefinementInput{ActionType: RefinementReplace, TargetStepID: s("s1"), NewStep: JSON(`{}`), Reason: "r"}, step(StepInvalid), "", ""},
		{"replace without new step", RecordRefinementInput{ActionType: RefinementReplace, TargetStepID: s("s1"), Reason: "r"}, step(StepInvalid), CodeBadUserInput, "newStep"},
		{"both targets", RecordRefinementInput{ActionType: RefinementRemove, TargetStepID: s("s1"), TargetPlanSection: s("x"), Reason: "r"}, nil, CodeBadUserInput, "targetStepId"},
		{"no target", RecordRefinementInput{ActionType: RefinementRemove, Reason: "r"}, nil, CodeBadUserInput, "targetStepId"},
		{"add without new step", RecordRefinementInput{ActionType: RefinementAdd, TargetPlanSection: s("x"), Reason: "r"}, nil, CodeBadUserInput, "newStep"},
		{"modify without new step", RecordRefinementInput{ActionType: RefinementModify, TargetStepID: s("s1"), Reason: "r"}, nil, CodeBadUserInput, "newStep"},
		{"no reason", RecordRefinementInput{ActionType: RefinementRemove, TargetStepID: s("s1"), Reason: " "}, nil, CodeBadUserInput, "reason"},
		{"complete step", RecordRefinementInput{ActionType: RefinementRemove, TargetStepID: s("s1"), Reason: "r"}, step(StepComplete), CodeInvalidTransition, "targetStepId"},
		{"failed step", RecordRefinementInput{ActionType: RefinementRemove, TargetStepID: s("s1"), Reason: "r"}, step(StepFailed), CodeInvalidTransition, "targetStepId"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := CheckRefinement(c.in, c.target)
			wantErr(t, err, c.code, c.field)
		})
	}
}

func TestPlanSteps(t *testing.T) {
	n := 0
	id := func() string { n++; return "row" + string(rune('0'+n)) }
	now := time.Now()
	in := []*ReasoningStepInput{{StepID: "a", Description: "A"}, {StepID: "b", Description: "B", Dependencies: []string{"a"}}}
	plan, removed, err := PlanSteps("x", nil, in, id, now)
	wantErr(t, err, "", "")
	if len(removed) != 0 || plan[0].StepIndex != 1 || plan[1].StepIndex != 2 || plan[0].TotalSteps != 2 || plan[1].Status != StepPending {
		t.Fatalf("plan %+v %+v", plan[0], plan[1])
	}
	for _, c := range []struct {
		name  string
		in    []*ReasoningStepInput
		field string
	}{
		{"later dependency", []*ReasoningStepInput{{StepID: "a", Description: "A", Dependencies: []string{"b"}}, {StepID: "b", Description: "B"}}, "steps[0].dependencies"},
		{"unknown dependency", []*ReasoningStepInput{{StepID: "a", Description: "A", Dependencies: []string{"z"}}}, "steps[0].dependencies"},
		{"self dependency", []*ReasoningStepInput{{StepID: "a", Description: "A", Dependencies: []string{"a"}}}, "steps[0].dependencies"},
		{"duplicate id", []*ReasoningStepInput{{StepID: "a", Description: "A"}, {StepID: "a", Description: "B"}}, "steps[1].stepId"},
		{"empty id", []*ReasoningStepInput{{StepID: "", Description: "A"}}, "steps[0].stepId"},
		{"empty description", []*ReasoningStepInput{{StepID: "a"}}, "steps[0].description"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := PlanSteps("x", nil, c.in, id, now)
			wantErr(t, err, CodeBadUserInput, c.field)
		})
	}
	// Replanning keeps what ran and refuses to drop or change it.
	plan[0].Status = StepComplete
	re := []*ReasoningStepInput{{StepID: "a", Description: "A"}, {StepID: "c", Description: "C", Dependencies: []string{"a"}}}
	plan2, removed, err := PlanSteps("x", plan, re, id, now)
	wantErr(t, err, "", "")
	if plan2[0].ID != plan[0].ID || plan2[0].Status != StepComplete || len(removed) != 1 || removed[0].StepID != "b" {
		t.Fatalf("replan kept %+v removed %v", plan2[0], removed)
	}
	_, _, err = PlanSteps("x", plan, []*ReasoningStepInput{{StepID: "c", Description: "C"}}, id, now)
	wantErr(t, err, CodeInvalidTransition, "steps")
	_, _, err = PlanSteps("x", plan, []*ReasoningStepInput{{StepID: "a", Description: "changed"}}, id, now)
	wantErr(t, err, CodeInvalidTransition, "steps[0].stepId")
}

func TestStepTransition(t *testing.T) {
	blocked, clear := ClarityBlocked, ClarityClear
	for _, c := range []struct {
		name    string
		from    ReasoningStepStatus
		to      ReasoningStepStatus
		clarity *ClarityState
		unmet   []string
		want    ReasoningStepStatus
		code    Code
		field   string
	}{
		{"run", StepPending, StepRunning, nil, nil, StepRunning, "", ""},
		{"run with unmet dependency", StepPending, StepRunning, nil, []string{"a"}, "", CodeBadUserInput, "to"},
		{"complete", StepRunning, StepComplete, &clear, nil, StepComplete, "", ""},
		{"complete blocked", StepRunning, StepComplete, &blocked, nil, StepInvalid, "", ""},
		{"fail", StepRunning, StepFailed, nil, nil, StepFailed, "", ""},
		{"invalid", StepRunning, StepInvalid, nil, nil, StepInvalid, "", ""},
		{"invalid to pending", StepInvalid, StepPending, nil, nil, StepPending, "", ""},
		{"pending to complete", StepPending, StepComplete, nil, nil, "", CodeInvalidTransition, "to"},
		{"running to pending", StepRunning, StepPending, nil, nil, "", CodeInvalidTransition, "to"},
		{"complete is final", StepComplete, StepPending, nil, nil, "", CodeInvalidTransition, "to"},
		{"failed is final", StepFailed, StepRunning, nil, nil, "", CodeInvalidTransition, "to"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := StepTransition(&ReasoningStep{StepID: "s", Status: c.from}, c.to, c.clarity, c.unmet)
			wantErr(t, err, c.code, c.field)
			if got != c.want {
				t.Fatalf("ends %s, want %s", got, c.want)
			}
		})
	}
	steps := map[string]*ReasoningStep{"a": {Status: StepComplete}, "b": {Status: StepRunning}}
	if got := UnmetDependencies(&ReasoningStep{Dependencies: Strings{"a", "b", "z"}}, steps); len(got) != 2 || got[0] != "b" || got[1] != "z" {
		t.Fatalf("unmet %v", got)
	}
}

func TestCheckFinish(t *testing.T) {
	zero := &ExecutionPass{PassNumber: 2, TTLRemaining: 0}
	some := &ExecutionPass{PassNumber: 2, TTLRemaining: 1}
	yes := &ConvergenceAssessment{Converged: true}
	no := &ConvergenceAssessment{Converged: false}
	for _, c := range []struct {
		name       string
		current    ReasoningStatus
		to         ReasoningStatus
		last       *ExecutionPass
		assessment *ConvergenceAssessment
		code       Code
		field      string
	}{
		{"converged", ReasoningRunning, ReasoningConverged, some, yes, "", ""},
		{"converged without assessment", ReasoningRunning, ReasoningConverged, some, nil, CodeBadUserInput, "status"},
		{"converged, last did not", ReasoningRunning, ReasoningConverged, some, no, CodeBadUserInput, "status"},
		{"converged without passes", ReasoningRunning, ReasoningConverged, nil, nil, CodeBadUserInput, "executionId"},
		{"ttl expired", ReasoningRunning, ReasoningTTLExpired, zero, no, "", ""},
		{"ttl left", ReasoningRunning, ReasoningTTLExpired, some, no, CodeBadUserInput, "status"},
		{"ttl without passes", ReasoningRunning, ReasoningTTLExpired, nil, nil, CodeBadUserInput, "executionId"},
		{"failed", ReasoningRunning, ReasoningFailed, some, nil, "", ""},
		{"failed without passes", ReasoningRunning, ReasoningFailed, nil, nil, CodeBadUserInput, "executionId"},
		{"running", ReasoningRunning, ReasoningRunning, some, yes, CodeBadUserInput, "status"},
		{"twice", ReasoningFailed, ReasoningFailed, nil, nil, CodeConflict, "executionId"},
	} {
		t.Run(c.name, func(t *testing.T) {
			wantErr(t, CheckFinish(c.current, c.to, c.last, c.assessment), c.code, c.field)
		})
	}
}

func TestReasoningStatistics(t *testing.T) {
	d := func(ms int) *int { return &ms }
	passes := []*ExecutionPass{{ID: "p2", PassNumber: 2, DurationMs: d(30)}, {ID: "p0", PassNumber: 0, DurationMs: d(10)},
		{ID: "p1", PassNumber: 1, DurationMs: d(20)}}
	as := []*ConvergenceAssessment{{PassID: "p2", Converged: true, CompletenessScore: 0.97, CoherenceScore: 0.95},
		{PassID: "p1", CompletenessScore: 0.6, CoherenceScore: 0.7}}
	st := ComputeReasoningStatistics(passes, as, 4)
	if st.TotalPasses != 3 || st.TotalRefinements != 4 || st.TotalTimeMs != 60 || !st.ConvergenceAchieved {
		t.Fatalf("statistics %+v", st)
	}
	if len(st.ScoreTrajectory) != 2 || st.ScoreTrajectory[0].PassNumber != 1 || st.ScoreTrajectory[1].PassNumber != 2 ||
		st.ScoreTrajectory[0].CompletenessScore != 0.6 || !st.ScoreTrajectory[1].Converged {
		t.Fatalf("trajectory %+v %+v", st.ScoreTrajectory[0], st.ScoreTrajectory[1])
	}
	empty := ComputeReasoningStatistics(nil, nil, 0)
	if empty.TotalPasses != 0 || empty.ConvergenceAchieved || empty.ScoreTrajectory == nil {
		t.Fatalf("empty %+v", empty)
	}
}

// TestReasoningEventsCarryLinks: every reasoning event names the execution's
// session, task and run, so it streams on their streams; without them, none.
func TestReasoningEventsCarryLinks(t *testing.T) {
	at := time.Date(2025, 6, 1, 9, 0, 0, 0, time.UTC)
	session, task, run := "s-1", "t-1", "r-1"
	dur := 5
	pass := &ExecutionPass{ID: "p", PassNumber: 0, Phase: PhaseA, StartedAt: at, EndedAt: &at, DurationMs: &dur}
	assessment := &ConvergenceAssessment{PassID: "p", CreatedAt: at}
	for _, e := range []*ReasoningExecution{
		{ID: "e", ProjectID: "pr", SessionID: &session, TaskID: &task, RunID: &run, Status: ReasoningFailed, CreatedAt: at, UpdatedAt: at},
		{ID: "e", ProjectID: "pr", Status: ReasoningFailed, CreatedAt: at, UpdatedAt: at},
	} {
		for _, ev := range []*Event{NewReasoningStarted(e), NewPassStarted(e, pass), NewPassCompleted(e, pass),
			NewConvergenceAssessed(e, pass, assessment), NewReasoningFinished(e)} {
			if ev.ProjectID != e.ProjectID || ev.SessionID != e.SessionID || ev.TaskID != e.TaskID || ev.RunID != e.RunID {
				t.Errorf("%s: project %v session %v task %v run %v, want those of the execution", ev.Type,
					ev.ProjectID, ev.SessionID, ev.TaskID, ev.RunID)
			}
		}
	}
}
