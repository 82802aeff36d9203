package domain

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"
)

// The inputs of the reasoning mutations (graph/schema/reasoning.graphqls).
type (
	StartReasoningExecutionInput struct {
		ProjectID             string
		TaskInput             string
		SessionID             *string
		TaskID                *string
		RunID                 *string
		Configuration         JSON
		CompletenessThreshold *float64
		CoherenceThreshold    *float64
		TTL                   int
		Profile               *TaskProfileInput
	}
	TaskProfileInput struct {
		ReasoningDepth         int
		InformationSufficiency float64
		ExpectedToolUsage      ToolUsage
		OutputBreadth          OutputBreadth
		ConfidenceRequirement  ConfidenceRequirement
		RawInference           string
	}
	SetTaskProfileInput struct {
		ExecutionID            string
		ReasoningDepth         int
		InformationSufficiency float64
		ExpectedToolUsage      ToolUsage
		OutputBreadth          OutputBreadth
		ConfidenceRequirement  ConfidenceRequirement
		RawInference           string
	}
	StartExecutionPassInput struct {
		ExecutionID  string
		Phase        ReasoningPhase
		PlanState    JSON
		TTLRemaining int
	}
	CompleteExecutionPassInput struct {
		PassID            string
		ExecutionResults  JSON
		EvaluationResults JSON
		RefinementChanges JSON
	}
	RecordConvergenceAssessmentInput struct {
		PassID            string
		Converged         *bool // computed when left out
		ReasonCodes       []string
		CompletenessScore float64
		CoherenceScore    float64
		ConsistencyStatus JSON
		DetectedIssues    []string
		Metadata          JSON
	}
	RecordValidationReportInput struct {
		PassID          string
		ValidationID    string
		ArtifactType    ArtifactType
		Issues          []*ValidationIssueInput
		ProposedRepairs JSON
	}
	ValidationIssueInput struct {
		IssueID        string
		Type           ValidationIssueType
		Severity       IssueSeverity
		Description    string
		Location       JSON
		ProposedRepair JSON
	}
	RecordRefinementInput struct {
		PassID                  string
		ActionType              RefinementActionType
		TargetStepID            *string
		TargetPlanSection       *string
		NewStep                 JSON
		Changes                 JSON
		Reason                  string
		SemanticValidationInput JSON
		InconsistencyDetected   *bool
	}
	SetReasoningStepsInput struct {
		ExecutionID string
		Steps       []*ReasoningStepInput
	}
	ReasoningStepInput struct {
		StepID          string
		Description     string
		Dependencies    []string
		Provides        []string
		IncomingContext *string
		HandoffToNext   *string
	}
	TransitionReasoningStepInput struct {
		ExecutionID  string
		StepID       string
		To           ReasoningStepStatus
		StepOutput   *string
		ClarityState *ClarityState
	}
	FinishReasoningExecutionInput struct {
		ExecutionID string
		Status      ReasoningStatus
		FinalResult JSON
	}
)

// Limits of reasoning inputs.
const (
	MaxReasoningJSON   = 256 << 10 // bytes of one JSON input
	MaxReasoningTTL    = 1_000_000
	MaxReasoningSteps  = 500
	MaxValidationItems = 500 // issues of a report
	MaxReasonCodes     = 200
	MaxStepID          = 200
	MaxReasoningText   = MaxDescription
)

// Defaults of an execution.
const (
	DefaultCompletenessThreshold = 0.95
	DefaultCoherenceThreshold    = 0.90
	DefaultRawInference          = "Default profile: moderate complexity assumed"
)

// DefaultTaskProfile is the profile an execution started without one gets,
// as version 1.
func DefaultTaskProfile() TaskProfileInput {
	return TaskProfileInput{ReasoningDepth: 3, InformationSufficiency: 0.5, ExpectedToolUsage: ToolUsageModerate,
		OutputBreadth: BreadthModerate, ConfidenceRequirement: ConfidenceMedium, RawInference: DefaultRawInference}
}

// CheckTaskProfile validates a profile whose fields are named prefix+name:
// reasoningDepth 1..5, informationSufficiency 0..1, known enums, a non-empty
// rawInference. It returns the profile with rawInference trimmed.
func CheckTaskProfile(prefix string, in TaskProfileInput) (TaskProfileInput, error) {
	if in.ReasoningDepth < 1 || in.ReasoningDepth > 5 {
		return in, InputError(prefix+"reasoningDepth", "reasoningDepth must be between 1 and 5, got %d", in.ReasoningDepth)
	}
	if err := CheckUnit(prefix+"informationSufficiency", &in.InformationSufficiency); err != nil {
		return in, err
	}
	if !in.ExpectedToolUsage.Valid() {
		return in, InputError(prefix+"expectedToolUsage", "unknown tool usage %q", in.ExpectedToolUsage)
	}
	if !in.OutputBreadth.Valid() {
		return in, InputError(prefix+"outputBreadth", "unknown output breadth %q", in.OutputBreadth)
	}
	if !in.ConfidenceRequirement.Valid() {
		return in, InputError(prefix+"confidenceRequirement", "unknown confidence requirement %q", in.ConfidenceRequirement)
	}
	raw, err := CheckText(prefix+"rawInference", in.RawInference, MaxReasoningText, true)
	in.RawInference = raw
	return in, err
}

// CheckReasoningJSON bounds a JSON input and gives it its default (def, a
// JSON literal) when absent.
func CheckReasoningJSON(field string, j JSON, def string) (JSON, error) {
	if len(j) == 0 || string(j) == "null" {
		if def == "" {
			return nil, nil
		}
		return JSON(def), nil
	}
	if len(j) > MaxReasoningJSON {
		return nil, InputError(field, "%s is larger than %d bytes", field, MaxReasoningJSON)
	}
	if !json.Valid(j) {
		return nil, InputError(field, "%s is not valid JSON", field)
	}
	return j, nil
}

// CheckPassStart validates starting a pass on an execution in status, whose
// newest pass is last (nil: none yet): the execution must be running and
// have no open pass (CONFLICT); ttlRemaining is at least 0 and above neither
// the previous pass's nor, for the first pass, the execution's ttl.
func CheckPassStart(status ReasoningStatus, ttl int, last *ExecutionPass, ttlRemaining int) error {
	if status.Finished() {
		return &Error{Code: CodeConflict, Field: "executionId", Message: fmt.Sprintf("the execution is %s: no pass can start on a finished execution", status)}
	}
	if last != nil && last.Open() {
		return &Error{Code: CodeConflict, Field: "executionId",
			Message: fmt.Sprintf("pass %d is still open: complete it before starting the next", last.PassNumber)}
	}
	if ttlRemaining < 0 {
		return InputError("ttlRemaining", "ttlRemaining must not be negative")
	}
	if last != nil && ttlRemaining > last.TTLRemaining {
		return InputError("ttlRemaining", "ttlRemaining %d is above the previous pass's %d: TTL only goes down", ttlRemaining, last.TTLRemaining)
	}
	if last == nil && ttlRemaining > ttl {
		return InputError("ttlRemaining", "ttlRemaining %d is above the execution's ttl %d", ttlRemaining, ttl)
	}
	return nil
}

// NextPassNumber is the number of the pass after last: 0 for the first.
func NextPassNumber(last *ExecutionPass) int {
	if last == nil {
		return 0
	}
	return last.PassNumber + 1
}

// PassDurationMs is the duration of a pass from its server timestamps.
func PassDurationMs(started, ended time.Time) int {
	d := ended.Sub(started).Milliseconds()
	if d < 0 {
		return 0
	}
	return int(d)
}

// CheckAssessment validates a convergence assessment and computes whether
// the pass converged: both scores (in [0, 1]) reach the execution's
// thresholds and every value of consistencyStatus (an object) is true. A
// converged the client sends must agree (BAD_USER_INPUT on "converged", with
// the reason); without reasonCodes, a pass that did not converge gets the
// computed ones: COMPLETENESS_BELOW_THRESHOLD, COHERENCE_BELOW_THRESHOLD,
// "INCONSISTENT: <key>" per value that is not true. It returns the input
// with its lists trimmed, converged set and defaults filled.
func CheckAssessment(in RecordConvergenceAssessmentInput, completeness, coherence float64) (RecordConvergenceAssessmentInput, error) {
	if err := CheckUnit("completenessScore", &in.CompletenessScore); err != nil {
		return in, err
	}
	if err := CheckUnit("coherenceScore", &in.CoherenceScore); err != nil {
		return in, err
	}
	var err error
	if in.ReasonCodes, err = CheckList("reasonCodes", in.ReasonCodes, MaxReasonCodes, MaxListEntry); err != nil {
		return in, err
	}
	if in.DetectedIssues, err = CheckList("detectedIssues", in.DetectedIssues, MaxValidationItems, MaxDescription); err != nil {
		return in, err
	}
	if in.ConsistencyStatus, err = CheckReasoningJSON("consistencyStatus", in.ConsistencyStatus, "{}"); err != nil {
		return in, err
	}
	var status map[string]json.RawMessage
	if err := json.Unmarshal(in.ConsistencyStatus, &status); err != nil || status == nil {
		return in, InputError("consistencyStatus", "consistencyStatus must be an object, e.g. {\"plan\": true, \"steps\": true}")
	}
	if in.Metadata, err = CheckReasoningJSON("metadata", in.Metadata, "{}"); err != nil {
		return in, err
	}
	var why []string
	if in.CompletenessScore < completeness {
		why = append(why, "COMPLETENESS_BELOW_THRESHOLD")
	}
	if in.CoherenceScore < coherence {
		why = append(why, "COHERENCE_BELOW_THRESHOLD")
	}
	keys := make([]string, 0, len(status))
	for k := range status {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !bytes.Equal(bytes.TrimSpace(status[k]), []byte("true")) {
			why = append(why, "INCONSISTENT: "+k)
		}
	}
	converged := len(why) == 0
	if in.Converged != nil && *in.Converged != converged {
		if *in.Converged {
			return in, InputError("converged", "the pass did not converge (completenessScore %g against %g, coherenceScore %g against %g): %s",
				in.CompletenessScore, completeness, in.CoherenceScore, coherence, strings.Join(why, ", "))
		}
		return in, InputError("converged", "the pass converged: both scores reach their thresholds (%g, %g) and every consistencyStatus value is true",
			completeness, coherence)
	}
	in.Converged = &converged
	if !converged && len(in.ReasonCodes) == 0 {
		in.ReasonCodes = why
	}
	return in, nil
}

// CheckValidationReport validates a report's input: a non-empty validationId,
// a known artifact type, and issues with unique non-empty ids, known types and
// severities and non-empty descriptions. It returns the input trimmed, with
// defaults set.
func CheckValidationReport(in RecordValidationReportInput) (RecordValidationReportInput, error) {
	var err error
	if in.ValidationID, err = CheckText("validationId", in.ValidationID, MaxName, true); err != nil {
		return in, err
	}
	if !in.ArtifactType.Valid() {
		return in, InputError("artifactType", "unknown artifact type %q", in.ArtifactType)
	}
	if len(in.Issues) > MaxValidationItems {
		return in, InputError("issues", "at most %d issues per report", MaxValidationItems)
	}
	if in.ProposedRepairs, err = CheckReasoningJSON("proposedRepairs", in.ProposedRepairs, "[]"); err != nil {
		return in, err
	}
	seen := map[string]int{}
	out := make([]*ValidationIssueInput, len(in.Issues))
	for i, is := range in.Issues {
		f := func(name string) string { return fmt.Sprintf("issues[%d].%s", i, name) }
		c := *is
		if c.IssueID, err = CheckText(f("issueId"), c.IssueID, MaxName, true); err != nil {
			return in, err
		}
		if prev, dup := seen[c.IssueID]; dup {
			return in, InputError(f("issueId"), "issue id %q is used twice (issues[%d] and [%d]); issue ids are unique within a report", c.IssueID, prev, i)
		}
		seen[c.IssueID] = i
		if !c.Type.Valid() {
			return in, InputError(f("type"), "unknown issue type %q", c.Type)
		}
		if !c.Severity.Valid() {
			return in, InputError(f("severity"), "unknown severity %q", c.Severity)
		}
		if c.Description, err = CheckText(f("description"), c.Description, MaxReasoningText, true); err != nil {
			return in, err
		}
		if c.Location, err = CheckReasoningJSON(f("location"), c.Location, ""); err != nil {
			return in, err
		}
		if c.ProposedRepair, err = CheckReasoningJSON(f("proposedRepair"), c.ProposedRepair, ""); err != nil {
			return in, err
		}
		out[i] = &c
	}
	in.Issues = out
	return in, nil
}

// OverallSeverity is the highest severity among issues; LOW without any.
func OverallSeverity(issues []*ValidationIssueInput) IssueSeverity {
	worst := SeverityLow
	for _, is := range issues {
		if is.Severity.Rank() > worst.Rank() {
			worst = is.Severity
		}
	}
	return worst
}

// IssueSummary counts issues per type, as a JSON object keyed by the types
// that occur ({} without issues).
func IssueSummary(issues []*ValidationIssueInput) JSON {
	counts := map[ValidationIssueType]int{}
	for _, is := range issues {
		counts[is.Type]++
	}
	b, _ := json.Marshal(counts) // map keys are sorted: the summary is stable
	return JSON(b)
}

// CheckFinish validates finishing an execution in status current as to,
// whose newest pass is last (nil: none) with assessment (nil: none):
// a finished execution cannot finish again (CONFLICT); to is final;
// CONVERGED needs the last pass's assessment to have converged, TTL_EXPIRED
// the last pass's ttlRemaining to be 0.
func CheckFinish(current, to ReasoningStatus, last *ExecutionPass, assessment *ConvergenceAssessment) error {
	if current.Finished() {
		return &Error{Code: CodeConflict, Field: "executionId", Message: fmt.Sprintf("the execution already finished %s", current)}
	}
	if last == nil && to.Finished() {
		return InputError("executionId", "the execution has no pass: it finishes after its first pass started")
	}
	switch to {
	case ReasoningConverged:
		if assessment == nil || !assessment.Converged {
			return InputError("status", "CONVERGED needs the last pass's (pass %d) assessment to have converged", last.PassNumber)
		}
	case ReasoningTTLExpired:
		if last == nil || last.TTLRemaining != 0 {
			return InputError("status", "TTL_EXPIRED needs the last pass's ttlRemaining to be 0")
		}
	case ReasoningFailed:
	default:
		return InputError("status", "an execution finishes CONVERGED, TTL_EXPIRED or FAILED, not %s", to)
	}
	return nil
}

// ComputeReasoningStatistics sums up an execution from its passes (any
// order), their assessments and its number of refinements: the passes, the
// refinements, whether the newest pass's assessment converged, the time its
// passes took (the sum of their durations) and the scores of every assessed
// pass by pass number.
func ComputeReasoningStatistics(passes []*ExecutionPass, assessments []*ConvergenceAssessment, refinements int) *ReasoningStatistics {
	st := &ReasoningStatistics{TotalPasses: len(passes), TotalRefinements: refinements, ScoreTrajectory: []*ScorePoint{}}
	byPass := map[string]*ConvergenceAssessment{}
	for _, a := range assessments {
		byPass[a.PassID] = a
	}
	sorted := append([]*ExecutionPass(nil), passes...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].PassNumber < sorted[j].PassNumber })
	for _, p := range sorted {
		if p.DurationMs != nil {
			st.TotalTimeMs += *p.DurationMs
		}
		if a := byPass[p.ID]; a != nil {
			st.ScoreTrajectory = append(st.ScoreTrajectory, &ScorePoint{PassNumber: p.PassNumber,
				CompletenessScore: a.CompletenessScore, CoherenceScore: a.CoherenceScore, Converged: a.Converged})
		}
	}
	if n := len(sorted); n > 0 {
		if a := byPass[sorted[n-1].ID]; a != nil {
			st.ConvergenceAchieved = a.Converged
		}
	}
	return st
}
