package domain

import (
	"time"
)

// Reasoning records (issue 14): a multi-pass reasoning loop kept as rows — an
// execution with its task profiles (versioned), its passes, each pass's
// convergence assessment, semantic validation report (with issues) and
// refinements, and the execution's plan steps. The rules that keep them
// consistent are the pure functions of reasoning_rules.go.

// Kinds of reasoning node.
const (
	KindReasoningExecution Kind = "ReasoningExecution"
	KindTaskProfile        Kind = "TaskProfile"
	KindExecutionPass      Kind = "ExecutionPass"
	KindValidationReport   Kind = "SemanticValidationReport"
	KindRefinementAction   Kind = "RefinementAction"
	KindReasoningStep      Kind = "ReasoningStep"
)

// ReasoningStatus is where a reasoning execution stands.
type ReasoningStatus string

const (
	ReasoningRunning    ReasoningStatus = "RUNNING"
	ReasoningConverged  ReasoningStatus = "CONVERGED"
	ReasoningTTLExpired ReasoningStatus = "TTL_EXPIRED"
	ReasoningFailed     ReasoningStatus = "FAILED"
)

// ReasoningStatuses lists every status, in lifecycle order.
var ReasoningStatuses = []ReasoningStatus{ReasoningRunning, ReasoningConverged, ReasoningTTLExpired, ReasoningFailed}

// Valid reports whether s is a known status.
func (s ReasoningStatus) Valid() bool {
	for _, v := range ReasoningStatuses {
		if v == s {
			return true
		}
	}
	return false
}

// Finished reports whether s is final.
func (s ReasoningStatus) Finished() bool { return s != ReasoningRunning }

// ToolUsage is how much tool use a task is expected to need.
type ToolUsage string

const (
	ToolUsageNone      ToolUsage = "NONE"
	ToolUsageMinimal   ToolUsage = "MINIMAL"
	ToolUsageModerate  ToolUsage = "MODERATE"
	ToolUsageExtensive ToolUsage = "EXTENSIVE"
)

// Valid reports whether u is a known level.
func (u ToolUsage) Valid() bool {
	switch u {
	case ToolUsageNone, ToolUsageMinimal, ToolUsageModerate, ToolUsageExtensive:
		return true
	}
	return false
}

// OutputBreadth is how broad a task's expected output is.
type OutputBreadth string

const (
	BreadthNarrow   OutputBreadth = "NARROW"
	BreadthModerate OutputBreadth = "MODERATE"
	BreadthBroad    OutputBreadth = "BROAD"
)

// Valid reports whether b is a known breadth.
func (b OutputBreadth) Valid() bool {
	switch b {
	case BreadthNarrow, BreadthModerate, BreadthBroad:
		return true
	}
	return false
}

// ConfidenceRequirement is how sure the answer to a task must be.
type ConfidenceRequirement string

const (
	ConfidenceLow    ConfidenceRequirement = "LOW"
	ConfidenceMedium ConfidenceRequirement = "MEDIUM"
	ConfidenceHigh   ConfidenceRequirement = "HIGH"
)

// Valid reports whether c is a known requirement.
func (c ConfidenceRequirement) Valid() bool {
	switch c {
	case ConfidenceLow, ConfidenceMedium, ConfidenceHigh:
		return true
	}
	return false
}

// ReasoningPhase is the phase a pass runs: A profile inference, B initial
// plan, C execution, D adaptive depth.
type ReasoningPhase string

const (
	PhaseA ReasoningPhase = "A"
	PhaseB ReasoningPhase = "B"
	PhaseC ReasoningPhase = "C"
	PhaseD ReasoningPhase = "D"
)

// Valid reports whether p is a known phase.
func (p ReasoningPhase) Valid() bool {
	switch p {
	case PhaseA, PhaseB, PhaseC, PhaseD:
		return true
	}
	return false
}

// ArtifactType is what a semantic validation looked at.
type ArtifactType string

const (
	ArtifactPlan              ArtifactType = "PLAN"
	ArtifactStep              ArtifactType = "STEP"
	ArtifactExecutionArtifact ArtifactType = "EXECUTION_ARTIFACT"
	ArtifactCrossPhase        ArtifactType = "CROSS_PHASE"
)

// Valid reports whether a is a known artifact type.
func (a ArtifactType) Valid() bool {
	switch a {
	case ArtifactPlan, ArtifactStep, ArtifactExecutionArtifact, ArtifactCrossPhase:
		return true
	}
	return false
}

// IssueSeverity is how bad a validation issue is, in increasing order.
type IssueSeverity string

const (
	SeverityLow      IssueSeverity = "LOW"
	SeverityMedium   IssueSeverity = "MEDIUM"
	SeverityHigh     IssueSeverity = "HIGH"
	SeverityCritical IssueSeverity = "CRITICAL"
)

// Rank orders severities: LOW 1 … CRITICAL 4; 0 for an unknown one.
func (s IssueSeverity) Rank() int {
	switch s {
	case SeverityLow:
		return 1
	case SeverityMedium:
		return 2
	case SeverityHigh:
		return 3
	case SeverityCritical:
		return 4
	}
	return 0
}

// Valid reports whether s is a known severity.
func (s IssueSeverity) Valid() bool { return s.Rank() > 0 }

// ValidationIssueType is the kind of semantic problem an issue reports.
type ValidationIssueType string

const (
	IssueSpecificity   ValidationIssueType = "SPECIFICITY"
	IssueRelevance     ValidationIssueType = "RELEVANCE"
	IssueConsistency   ValidationIssueType = "CONSISTENCY"
	IssueHallucination ValidationIssueType = "HALLUCINATION"
	IssueDoSayMismatch ValidationIssueType = "DO_SAY_MISMATCH"
)

// Valid reports whether t is a known issue type.
func (t ValidationIssueType) Valid() bool {
	switch t {
	case IssueSpecificity, IssueRelevance, IssueConsistency, IssueHallucination, IssueDoSayMismatch:
		return true
	}
	return false
}

// RefinementActionType is what a refinement does to its target.
type RefinementActionType string

const (
	RefinementAdd     RefinementActionType = "ADD"
	RefinementModify  RefinementActionType = "MODIFY"
	RefinementRemove  RefinementActionType = "REMOVE"
	RefinementReplace RefinementActionType = "REPLACE"
)

// Valid reports whether a is a known action type.
func (a RefinementActionType) Valid() bool {
	switch a {
	case RefinementAdd, RefinementModify, RefinementRemove, RefinementReplace:
		return true
	}
	return false
}

// ReasoningStepStatus is where a plan step stands.
type ReasoningStepStatus string

const (
	StepPending  ReasoningStepStatus = "PENDING"
	StepRunning  ReasoningStepStatus = "RUNNING"
	StepComplete ReasoningStepStatus = "COMPLETE"
	StepFailed   ReasoningStepStatus = "FAILED"
	StepInvalid  ReasoningStepStatus = "INVALID"
)

// Valid reports whether s is a known step status.
func (s ReasoningStepStatus) Valid() bool {
	switch s {
	case StepPending, StepRunning, StepComplete, StepFailed, StepInvalid:
		return true
	}
	return false
}

// Executed reports whether a step in s has run to its end: such a step is
// immutable (no refinement, no transition, no change of plan).
func (s ReasoningStepStatus) Executed() bool { return s == StepComplete || s == StepFailed }

// ClarityState is how clear a step's execution found its goal.
type ClarityState string

const (
	ClarityClear          ClarityState = "CLEAR"
	ClarityPartiallyClear ClarityState = "PARTIALLY_CLEAR"
	ClarityBlocked        ClarityState = "BLOCKED"
)

// Valid reports whether c is a known clarity state.
func (c ClarityState) Valid() bool {
	switch c {
	case ClarityClear, ClarityPartiallyClear, ClarityBlocked:
		return true
	}
	return false
}

// ReasoningExecution is one multi-pass reasoning loop over a task input,
// optionally linked to a task (and a run of it) and to an agent session.
type ReasoningExecution struct {
	ID        string  `db:"id"`
	ProjectID string  `db:"project_id"`
	SessionID *string `db:"session_id"`
	TaskID    *string `db:"task_id"`
	RunID     *string `db:"run_id"`
	TaskInput string  `db:"task_input"`
	// Configuration is free-form: convergence criteria, TTL, depth settings.
	Configuration         JSON            `db:"configuration"`
	CompletenessThreshold float64         `db:"completeness_threshold"`
	CoherenceThreshold    float64         `db:"coherence_threshold"`
	TTL                   int             `db:"ttl"`
	Status                ReasoningStatus `db:"status"`
	FinalResult           JSON            `db:"final_result"`
	CreatedBy             string          `db:"created_by"`
	CreatedAt             time.Time       `db:"created_at"`
	UpdatedAt             time.Time       `db:"updated_at"`
	CompletedAt           *time.Time      `db:"completed_at"`
}

// TaskProfile is one version of what a reasoning execution inferred about
// its task; each pass runs with the newest version at its start.
type TaskProfile struct {
	ID                     string                `db:"id"`
	ExecutionID            string                `db:"execution_id"`
	ProfileVersion         int                   `db:"profile_version"`
	ReasoningDepth         int                   `db:"reasoning_depth"`
	InformationSufficiency float64               `db:"information_sufficiency"`
	ExpectedToolUsage      ToolUsage             `db:"expected_tool_usage"`
	OutputBreadth          OutputBreadth         `db:"output_breadth"`
	ConfidenceRequirement  ConfidenceRequirement `db:"confidence_requirement"`
	RawInference           string                `db:"raw_inference"`
	IsDefault              bool                  `db:"is_default"`
	CreatedAt              time.Time             `db:"created_at"`
}

// ExecutionPass is one iteration of a reasoning loop.
type ExecutionPass struct {
	ID                string         `db:"id"`
	ExecutionID       string         `db:"execution_id"`
	PassNumber        int            `db:"pass_number"`
	Phase             ReasoningPhase `db:"phase"`
	ProfileID         string         `db:"profile_id"`
	PlanState         JSON           `db:"plan_state"`
	ExecutionResults  JSON           `db:"execution_results"`
	EvaluationResults JSON           `db:"evaluation_results"`
	RefinementChanges JSON           `db:"refinement_changes"`
	TTLRemaining      int            `db:"ttl_remaining"`
	StartedAt         time.Time      `db:"started_at"`
	EndedAt           *time.Time     `db:"ended_at"`
	DurationMs        *int           `db:"duration_ms"`
}

// Open reports whether the pass has not ended.
func (p *ExecutionPass) Open() bool { return p.EndedAt == nil }

// ConvergenceAssessment is the verdict on one pass: did the loop converge?
type ConvergenceAssessment struct {
	PassID            string    `db:"pass_id"`
	ExecutionID       string    `db:"execution_id"`
	Converged         bool      `db:"converged"`
	ReasonCodes       Strings   `db:"reason_codes"`
	CompletenessScore float64   `db:"completeness_score"`
	CoherenceScore    float64   `db:"coherence_score"`
	ConsistencyStatus JSON      `db:"consistency_status"`
	DetectedIssues    Strings   `db:"detected_issues"`
	Metadata          JSON      `db:"metadata"`
	CreatedAt         time.Time `db:"created_at"`
}

// SemanticValidationReport is the semantic validation of one pass's
// artifact; OverallSeverity and IssueSummary are computed from its issues.
type SemanticValidationReport struct {
	ID              string        `db:"id"`
	PassID          string        `db:"pass_id"`
	ExecutionID     string        `db:"execution_id"`
	ValidationID    string        `db:"validation_id"`
	ArtifactType    ArtifactType  `db:"artifact_type"`
	OverallSeverity IssueSeverity `db:"overall_severity"`
	IssueSummary    JSON          `db:"issue_summary"`
	ProposedRepairs JSON          `db:"proposed_repairs"`
	CreatedAt       time.Time     `db:"created_at"`
}

// ValidationIssue is one issue of a validation report, in reported order.
type ValidationIssue struct {
	ReportID       string              `db:"report_id"`
	Position       int                 `db:"position"`
	IssueID        string              `db:"issue_id"`
	Type           ValidationIssueType `db:"type"`
	Severity       IssueSeverity       `db:"severity"`
	Description    string              `db:"description"`
	Location       JSON                `db:"location"`
	ProposedRepair JSON                `db:"proposed_repair"`
}

// RefinementAction is a change a pass made to the plan or to one step.
type RefinementAction struct {
	ID                      string               `db:"id"`
	PassID                  string               `db:"pass_id"`
	ExecutionID             string               `db:"execution_id"`
	ActionType              RefinementActionType `db:"action_type"`
	TargetStepID            *string              `db:"target_step_id"`
	TargetPlanSection       *string              `db:"target_plan_section"`
	NewStep                 JSON                 `db:"new_step"`
	Changes                 JSON                 `db:"changes"`
	Reason                  string               `db:"reason"`
	SemanticValidationInput JSON                 `db:"semantic_validation_input"`
	InconsistencyDetected   bool                 `db:"inconsistency_detected"`
	CreatedAt               time.Time            `db:"created_at"`
}

// ReasoningStep is one step of an execution's plan.
type ReasoningStep struct {
	ID              string              `db:"id"`
	ExecutionID     string              `db:"execution_id"`
	StepID          string              `db:"step_id"`
	StepIndex       int                 `db:"step_index"`
	TotalSteps      int                 `db:"total_steps"`
	IncomingContext *string             `db:"incoming_context"`
	HandoffToNext   *string             `db:"handoff_to_next"`
	Description     string              `db:"description"`
	Dependencies    Strings             `db:"dependencies"`
	Provides        Strings             `db:"provides"`
	Status          ReasoningStepStatus `db:"status"`
	StepOutput      *string             `db:"step_output"`
	ClarityState    *ClarityState       `db:"clarity_state"`
	CreatedAt       time.Time           `db:"created_at"`
	UpdatedAt       time.Time           `db:"updated_at"`
	// History lists what refinements changed of the step, oldest first.
	History StepHistory `db:"history"`
}

// ScorePoint is one assessed pass of an execution's score trajectory.
type ScorePoint struct {
	PassNumber        int     `db:"pass_number"`
	CompletenessScore float64 `db:"completeness_score"`
	CoherenceScore    float64 `db:"coherence_score"`
	Converged         bool    `db:"converged"`
}

// ReasoningStatistics sums an execution up from its rows.
type ReasoningStatistics struct {
	TotalPasses         int
	TotalRefinements    int
	ConvergenceAchieved bool
	TotalTimeMs         int
	ScoreTrajectory     []*ScorePoint
}

func (e *ReasoningExecution) GlobalID() string { return GlobalID(KindReasoningExecution, e.ID) }
func (p *TaskProfile) GlobalID() string        { return GlobalID(KindTaskProfile, p.ID) }
func (p *ExecutionPass) GlobalID() string      { return GlobalID(KindExecutionPass, p.ID) }
func (r *SemanticValidationReport) GlobalID() string {
	return GlobalID(KindValidationReport, r.ID)
}
func (r *RefinementAction) GlobalID() string { return GlobalID(KindRefinementAction, r.ID) }
func (s *ReasoningStep) GlobalID() string    { return GlobalID(KindReasoningStep, s.ID) }
