package domain

import "time"

// Inputs of the API. GraphQL input types bind to these structs; ids in them are
// global ids, decoded by the service. A nil pointer means "not given".

// CreateUserInput creates a user.
type CreateUserInput struct {
	Name           string
	Email          string
	Slug           string
	TelegramChatID *string
	Settings       JSON
}

// UpdateUserInput changes a user; nil fields keep their values, an empty
// telegramChatId removes it.
type UpdateUserInput struct {
	ID             string
	Name           *string
	Email          *string
	TelegramChatID *string
	Settings       JSON
}

// CreateAPITokenInput creates a token for a user.
type CreateAPITokenInput struct {
	UserID    string
	Name      string
	Role      Role
	ProjectID *string
}

// RevokeAPITokenInput revokes a token.
type RevokeAPITokenInput struct {
	ID string
}

// CreateProjectInput creates a project owned by the caller.
type CreateProjectInput struct {
	Name        string
	Slug        string
	Description *string
}

// UpdateProjectInput changes a project's editable fields.
type UpdateProjectInput struct {
	ID          string
	Name        *string
	Description *string
	Status      *ProjectStatus
}

// CreateIdeaInput creates an idea in a project.
type CreateIdeaInput struct {
	ProjectID      string
	Name           string
	Slug           string
	Description    *string
	LifecycleStage *IdeaStage
}

// FileImpactInput declares a task's effect on one file.
type FileImpactInput struct {
	FilePath   string
	Operation  FileOperation
	Confidence *float64
	Source     *ImpactSource
}

// CreateTaskInput creates a task.
type CreateTaskInput struct {
	ProjectID          string
	Title              string
	Description        *string
	Category           *TaskCategory
	Priority           *Priority
	Effort             *Effort
	RiskLevel          *RiskLevel
	Owner              *TaskOwner
	Phase              *ImplementationPhase
	Deadline           *time.Time
	AcceptanceCriteria []string
	CodebaseTests      []string
	APITests           []string
	UITests            []string
	AffectedFiles      []string
	FileImpacts        []*FileImpactInput
	TaskListID         *string
	InEvaluationQueue  *bool
	ParentTaskID       *string
	IdeaID             *string
	SupersedesTaskID   *string
	// Embedding, with EmbeddingModel, is the task's vector.
	Embedding      []float64
	EmbeddingModel *string
}

// UpdateTaskInput changes given fields of a task; with ExpectedVersion it is a
// compare-and-swap on the task's version.
type UpdateTaskInput struct {
	ID                  string
	ExpectedVersion     *int
	Title               *string
	Description         *string
	Category            *TaskCategory
	Priority            *Priority
	Effort              *Effort
	RiskLevel           *RiskLevel
	Owner               *TaskOwner
	Phase               *ImplementationPhase
	Deadline            *time.Time
	AcceptanceCriteria  []string
	CodebaseTests       []string
	APITests            []string
	UITests             []string
	AffectedFiles       []string
	FileImpacts         []*FileImpactInput
	TaskListID          *string
	InEvaluationQueue   *bool
	ParentTaskID        *string
	IdeaID              *string
	SupersedesTaskID    *string
	ActualEffortMinutes *int
	EmbeddingModel      *string
	Embedding           []float64
	// Null names the fields the client set to null (GraphQL field names):
	// those are cleared, where a nil pointer alone means "unchanged".
	Null map[string]bool
}

// TransitionTaskInput moves a task along its lifecycle.
type TransitionTaskInput struct {
	ID     string
	To     TaskStatus
	Reason *string
}

// AddTaskRelationshipInput links two tasks.
type AddTaskRelationshipInput struct {
	SourceTaskID string
	TargetTaskID string
	Type         RelationshipType
	Strength     *float64
	Notes        *string
}

// RemoveTaskRelationshipInput removes a link.
type RemoveTaskRelationshipInput struct {
	ID string
}

// CreateTaskBlockInput blocks a task.
type CreateTaskBlockInput struct {
	TaskID         string
	BlockType      BlockType
	Reason         string
	BlockingTaskID *string
}

// ResolveTaskBlockInput resolves a block.
type ResolveTaskBlockInput struct {
	ID    string
	Notes *string
}

// CreateTaskListInput creates a task list.
type CreateTaskListInput struct {
	ProjectID         string
	Name              string
	Description       *string
	MaxParallelAgents *int
	AutoExecute       *bool
	Schedule          *TaskListSchedule
	TaskIDs           []string
	RunSchedule       *string
	TelegramChatID    *string
}

// UpdateTaskListInput changes a list's settings; nil fields keep theirs.
type UpdateTaskListInput struct {
	ID                string
	Name              *string
	Description       *string
	MaxParallelAgents *int
	AutoExecute       *bool
	Schedule          *TaskListSchedule
	// RunSchedule and TelegramChatID: an empty string removes them.
	RunSchedule    *string
	TelegramChatID *string
}

// SetTaskListStatusInput moves a list by hand.
type SetTaskListStatusInput struct {
	ID     string
	Status TaskListStatus
	Reason *string
}

// AddTasksToListInput appends tasks to a list.
type AddTasksToListInput struct {
	TaskListID string
	TaskIDs    []string
}

// CreateTaskTemplateInput creates a template.
type CreateTaskTemplateInput struct {
	Name                      string
	Description               *string
	Category                  TaskCategory
	DefaultAcceptanceCriteria []string
	DefaultCodebaseTests      []string
	DefaultAPITests           []string
	DefaultUITests            []string
	DefaultAffectedFiles      []string
	Scope                     TemplateScope
	ProjectID                 *string
	UserID                    *string
}

// CreateTaskFromTemplateInput creates a task prefilled from a template.
type CreateTaskFromTemplateInput struct {
	TemplateID        string
	ProjectID         string
	Title             string
	Description       *string
	Priority          *Priority
	Effort            *Effort
	RiskLevel         *RiskLevel
	Deadline          *time.Time
	TaskListID        *string
	InEvaluationQueue *bool
}

// TaskFilter narrows the tasks connection.
type TaskFilter struct {
	Status            []TaskStatus
	Category          []TaskCategory
	Priority          []Priority
	TaskListID        *string
	InEvaluationQueue *bool
	Search            *string
	AffectsFile       *string
	RelationshipType  *RelationshipType
}

// TaskOrder sorts the tasks connection.
type TaskOrder struct {
	Field     TaskOrderField
	Direction OrderDirection
}

// ProjectFilter narrows the projects connection.
type ProjectFilter struct {
	Status []ProjectStatus
	Search *string
}
