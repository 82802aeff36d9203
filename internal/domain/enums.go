package domain

// The enums of the API. Each is stored in the database as its GraphQL value.

// TaskStatus is a task's place in its lifecycle.
type TaskStatus string

const (
	StatusDraft      TaskStatus = "DRAFT"
	StatusEvaluating TaskStatus = "EVALUATING"
	StatusPending    TaskStatus = "PENDING"
	StatusBlocked    TaskStatus = "BLOCKED"
	StatusInProgress TaskStatus = "IN_PROGRESS"
	StatusValidating TaskStatus = "VALIDATING"
	StatusCompleted  TaskStatus = "COMPLETED"
	StatusFailed     TaskStatus = "FAILED"
)

// TaskCategory classifies a task; its code is part of the display id.
type TaskCategory string

const (
	CategoryFeature  TaskCategory = "FEATURE"
	CategoryBug      TaskCategory = "BUG"
	CategoryTask     TaskCategory = "TASK"
	CategoryRefactor TaskCategory = "REFACTOR"
	CategoryTest     TaskCategory = "TEST"
	CategoryDocs     TaskCategory = "DOCS"
	CategoryResearch TaskCategory = "RESEARCH"
	CategoryInfra    TaskCategory = "INFRA"
)

var categoryCodes = map[TaskCategory]string{
	CategoryFeature: "FEA", CategoryBug: "BUG", CategoryTask: "TSK", CategoryRefactor: "REF",
	CategoryTest: "TST", CategoryDocs: "DOC", CategoryResearch: "RES", CategoryInfra: "INF",
}

// Code is the three-letter display code of the category.
func (c TaskCategory) Code() string { return categoryCodes[c] }

// Valid reports whether c is a known category.
func (c TaskCategory) Valid() bool { _, ok := categoryCodes[c]; return ok }

// Priority is P1 (highest) to P4.
type Priority string

const (
	PriorityP1 Priority = "P1"
	PriorityP2 Priority = "P2"
	PriorityP3 Priority = "P3"
	PriorityP4 Priority = "P4"
)

// RiskLevel of a task.
type RiskLevel string

const (
	RiskLow    RiskLevel = "LOW"
	RiskMedium RiskLevel = "MEDIUM"
	RiskHigh   RiskLevel = "HIGH"
)

// Effort is a t-shirt size of the work.
type Effort string

const (
	EffortTrivial Effort = "TRIVIAL"
	EffortSmall   Effort = "SMALL"
	EffortMedium  Effort = "MEDIUM"
	EffortLarge   Effort = "LARGE"
	EffortEpic    Effort = "EPIC"
)

// TaskOwner says who carries the task out.
type TaskOwner string

const (
	OwnerBuildAgent TaskOwner = "BUILD_AGENT"
	OwnerHuman      TaskOwner = "HUMAN"
	OwnerTaskAgent  TaskOwner = "TASK_AGENT"
)

// ImplementationPhase orders work by layer.
type ImplementationPhase string

const (
	PhaseDatabase ImplementationPhase = "DATABASE"
	PhaseTypes    ImplementationPhase = "TYPES"
	PhaseAPI      ImplementationPhase = "API"
	PhaseUI       ImplementationPhase = "UI"
	PhaseTests    ImplementationPhase = "TESTS"
)

// RelationshipType is one of the eleven typed links between tasks.
type RelationshipType string

const (
	RelDependsOn     RelationshipType = "DEPENDS_ON"
	RelBlocks        RelationshipType = "BLOCKS"
	RelRelatedTo     RelationshipType = "RELATED_TO"
	RelDuplicateOf   RelationshipType = "DUPLICATE_OF"
	RelSubtaskOf     RelationshipType = "SUBTASK_OF"
	RelSupersedes    RelationshipType = "SUPERSEDES"
	RelImplements    RelationshipType = "IMPLEMENTS"
	RelConflictsWith RelationshipType = "CONFLICTS_WITH"
	RelEnables       RelationshipType = "ENABLES"
	RelInspiredBy    RelationshipType = "INSPIRED_BY"
	RelTests         RelationshipType = "TESTS"
)

// Acyclic reports whether links of this type must never close a cycle.
func (t RelationshipType) Acyclic() bool {
	return t == RelDependsOn || t == RelBlocks || t == RelSubtaskOf || t == RelSupersedes
}

// RelationshipDirection selects links by which end the task is on.
type RelationshipDirection string

const (
	DirectionOutgoing RelationshipDirection = "OUTGOING"
	DirectionIncoming RelationshipDirection = "INCOMING"
	DirectionBoth     RelationshipDirection = "BOTH"
)

// FileOperation is what a task does to a file.
type FileOperation string

const (
	OpCreate FileOperation = "CREATE"
	OpUpdate FileOperation = "UPDATE"
	OpDelete FileOperation = "DELETE"
	OpRead   FileOperation = "READ"
)

// ImpactSource says where a file impact estimate came from.
type ImpactSource string

const (
	SourceAIEstimate   ImpactSource = "AI_ESTIMATE"
	SourcePatternMatch ImpactSource = "PATTERN_MATCH"
	SourceUserDeclared ImpactSource = "USER_DECLARED"
	SourceValidated    ImpactSource = "VALIDATED"
)

// TaskListStatus is a task list's state.
type TaskListStatus string

const (
	ListDraft      TaskListStatus = "DRAFT"
	ListReady      TaskListStatus = "READY"
	ListInProgress TaskListStatus = "IN_PROGRESS"
	ListPaused     TaskListStatus = "PAUSED"
	ListCompleted  TaskListStatus = "COMPLETED"
	ListArchived   TaskListStatus = "ARCHIVED"
)

// ItemStatus is a task's state within a task list.
type ItemStatus string

const (
	ItemPending    ItemStatus = "PENDING"
	ItemInProgress ItemStatus = "IN_PROGRESS"
	ItemCompleted  ItemStatus = "COMPLETED"
	ItemFailed     ItemStatus = "FAILED"
	ItemSkipped    ItemStatus = "SKIPPED"
)

// ProjectStatus is a project's state.
type ProjectStatus string

const (
	ProjectActive   ProjectStatus = "ACTIVE"
	ProjectPaused   ProjectStatus = "PAUSED"
	ProjectArchived ProjectStatus = "ARCHIVED"
)

// BlockType says why a task is blocked.
type BlockType string

const (
	BlockValidation BlockType = "VALIDATION"
	BlockDependency BlockType = "DEPENDENCY"
	BlockManual     BlockType = "MANUAL"
	BlockConflict   BlockType = "CONFLICT"
)

// TemplateScope says who may use a task template.
type TemplateScope string

const (
	ScopeGlobal  TemplateScope = "GLOBAL"
	ScopeProject TemplateScope = "PROJECT"
	ScopeUser    TemplateScope = "USER"
)

// Role of an API token.
type Role string

const (
	RoleAdmin  Role = "ADMIN"
	RoleMember Role = "MEMBER"
	RoleAgent  Role = "AGENT"
)

// TaskOrderField is a sort key of the tasks connection.
type TaskOrderField string

const (
	OrderPriorityScore TaskOrderField = "PRIORITY_SCORE"
	OrderCreatedAt     TaskOrderField = "CREATED_AT"
	OrderUpdatedAt     TaskOrderField = "UPDATED_AT"
	OrderDeadline      TaskOrderField = "DEADLINE"
	OrderDisplayID     TaskOrderField = "DISPLAY_ID"
)

// OrderDirection is ASC or DESC.
type OrderDirection string

const (
	OrderAsc  OrderDirection = "ASC"
	OrderDesc OrderDirection = "DESC"
)

// ConflictType says why two tasks cannot run in the same wave.
type ConflictType string

const (
	ConflictDependency ConflictType = "DEPENDENCY"
	ConflictFile       ConflictType = "FILE_CONFLICT"
	ConflictResource   ConflictType = "RESOURCE_CONFLICT"
)
