package domain

import "time"

// User is a person (or the bootstrap admin) who owns projects and tokens.
type User struct {
	ID             string    `db:"id"`
	Slug           string    `db:"slug"`
	Name           string    `db:"name"`
	Email          string    `db:"email"`
	TelegramChatID *string   `db:"telegram_chat_id"`
	Settings       JSON      `db:"settings"`
	CreatedAt      time.Time `db:"created_at"`
	UpdatedAt      time.Time `db:"updated_at"`
}

// APIToken authenticates a caller with a role; only its hash is stored.
type APIToken struct {
	ID         string     `db:"id"`
	UserID     string     `db:"user_id"`
	Name       string     `db:"name"`
	Role       Role       `db:"role"`
	ProjectID  *string    `db:"project_id"`
	TokenHash  string     `db:"token_hash"`
	CreatedAt  time.Time  `db:"created_at"`
	LastUsedAt *time.Time `db:"last_used_at"`
	RevokedAt  *time.Time `db:"revoked_at"`
}

// Project scopes tasks, lists and ideas; it has one owner.
type Project struct {
	ID          string        `db:"id"`
	Slug        string        `db:"slug"`
	Name        string        `db:"name"`
	Description string        `db:"description"`
	OwnerID     string        `db:"owner_id"`
	Status      ProjectStatus `db:"status"`
	CreatedAt   time.Time     `db:"created_at"`
	UpdatedAt   time.Time     `db:"updated_at"`
	// DisplayCode is the <PROJECT> of its tasks' display ids, unique
	// (ProjectCode, or PickDisplayCode when that is taken).
	DisplayCode string `db:"display_code"`
}

// Idea is an early-stage notion within a project that tasks can relate to.
type Idea struct {
	ID             string    `db:"id"`
	Slug           string    `db:"slug"`
	ProjectID      string    `db:"project_id"`
	Name           string    `db:"name"`
	Description    string    `db:"description"`
	LifecycleStage IdeaStage `db:"lifecycle_stage"`
	CreatedAt      time.Time `db:"created_at"`
	UpdatedAt      time.Time `db:"updated_at"`
}

// Task is a unit of agent work.
type Task struct {
	ID                  string               `db:"id"`
	DisplayID           string               `db:"display_id"`
	DisplaySort         string               `db:"display_sort"` // DisplaySortKey(DisplayID), set by the store: what DISPLAY_ID orders by
	UserID              string               `db:"user_id"`
	ProjectID           string               `db:"project_id"`
	IdeaID              *string              `db:"idea_id"`
	ParentTaskID        *string              `db:"parent_task_id"`
	Queue               *string              `db:"queue"`
	TaskListID          *string              `db:"task_list_id"`
	Title               string               `db:"title"`
	Description         string               `db:"description"`
	Category            TaskCategory         `db:"category"`
	Status              TaskStatus           `db:"status"`
	RiskLevel           RiskLevel            `db:"risk_level"`
	Priority            Priority             `db:"priority"`
	PriorityScore       int                  `db:"priority_score"`
	BlocksCount         int                  `db:"blocks_count"`
	IsQuickWin          bool                 `db:"is_quick_win"`
	Deadline            *time.Time           `db:"deadline"`
	Effort              *Effort              `db:"effort"`
	Owner               *TaskOwner           `db:"owner"`
	AssignedAgentID     *string              `db:"assigned_agent"`
	Phase               *ImplementationPhase `db:"phase"`
	AcceptanceCriteria  Strings              `db:"acceptance_criteria"`
	CodebaseTests       Strings              `db:"codebase_tests"`
	APITests            Strings              `db:"api_tests"`
	UITests             Strings              `db:"ui_tests"`
	ActualEffortMinutes *int                 `db:"actual_effort_minutes"`
	AffectedFiles       Strings              `db:"affected_files"`
	ExecutionLog        JSON                 `db:"execution_log"`
	Version             int                  `db:"version"`
	SupersedesTaskID    *string              `db:"supersedes_task_id"`
	Embedding           []byte               `db:"embedding"`
	EmbeddingModel      *string              `db:"embedding_model"`
	CreatedAt           time.Time            `db:"created_at"`
	UpdatedAt           time.Time            `db:"updated_at"`
	StartedAt           *time.Time           `db:"started_at"`
	CompletedAt         *time.Time           `db:"completed_at"`
	// TextSignature is TextSignature(Title, Description), set by the store
	// on every write: what grouping compares (nil for rows written before
	// it existed).
	TextSignature *string `db:"text_signature"`
}

// QueueEvaluation is the value of tasks.queue for tasks in the evaluation queue.
const QueueEvaluation = "evaluation"

// InEvaluationQueue reports whether the task waits in its project's evaluation queue.
func (t *Task) InEvaluationQueue() bool { return t.Queue != nil && *t.Queue == QueueEvaluation }

// TaskList is an ordered set of tasks that is planned and executed together.
type TaskList struct {
	ID                string           `db:"id"`
	Name              string           `db:"name"`
	Description       string           `db:"description"`
	ProjectID         string           `db:"project_id"`
	UserID            string           `db:"user_id"`
	Status            TaskListStatus   `db:"status"`
	MaxParallelAgents int              `db:"max_parallel_agents"`
	Schedule          TaskListSchedule `db:"schedule"`
	AutoExecute       bool             `db:"auto_execute"`
	TotalTasks        int              `db:"total_tasks"`
	CompletedTasks    int              `db:"completed_tasks"`
	FailedTasks       int              `db:"failed_tasks"`
	TelegramChatID    *string          `db:"telegram_chat_id"`
	CreatedAt         time.Time        `db:"created_at"`
	UpdatedAt         time.Time        `db:"updated_at"`
	StartedAt         *time.Time       `db:"started_at"`
	CompletedAt       *time.Time       `db:"completed_at"`
	// RunSchedule is a 5-field cron expression (UTC) of SCHEDULE runs; nil: none.
	RunSchedule *string `db:"run_schedule"`
	// NextScheduledRunAt is RunSchedule's next tick (nil without a schedule).
	NextScheduledRunAt *time.Time `db:"next_scheduled_run_at"`
}

// TaskListItem places a task at a position in a list.
type TaskListItem struct {
	ID             string     `db:"id"`
	TaskListID     string     `db:"task_list_id"`
	TaskID         string     `db:"task_id"`
	Position       int        `db:"position"`
	ItemStatus     ItemStatus `db:"item_status"`
	StartedAt      *time.Time `db:"started_at"`
	CompletedAt    *time.Time `db:"completed_at"`
	ExecutionNotes *string    `db:"execution_notes"`
	AddedAt        time.Time  `db:"added_at"`
}

// TaskRelationship is a typed, directed link from source to target.
type TaskRelationship struct {
	ID           string           `db:"id"`
	SourceTaskID string           `db:"source_task_id"`
	TargetTaskID string           `db:"target_task_id"`
	Type         RelationshipType `db:"relationship_type"`
	Strength     *float64         `db:"strength"`
	Notes        *string          `db:"notes"`
	CreatedAt    time.Time        `db:"created_at"`
	CreatedByID  *string          `db:"created_by"`
}

// TaskStateChange is one row of a task's lifecycle history.
type TaskStateChange struct {
	ID             string      `db:"id"`
	TaskID         string      `db:"task_id"`
	ExecutionRunID *string     `db:"execution_run_id"`
	FromStatus     *TaskStatus `db:"from_status"`
	ToStatus       TaskStatus  `db:"to_status"`
	Reason         *string     `db:"reason"`
	ChangedBy      *string     `db:"changed_by"`
	ChangedAt      time.Time   `db:"changed_at"`
}

// TaskBlock records why a task cannot proceed until resolved.
type TaskBlock struct {
	ID               string     `db:"id"`
	TaskID           string     `db:"task_id"`
	BlockType        BlockType  `db:"block_type"`
	Reason           string     `db:"reason"`
	BlockingEntityID *string    `db:"blocking_entity_id"`
	ResolvedAt       *time.Time `db:"resolved_at"`
	ResolvedBy       *string    `db:"resolved_by"`
	ResolutionNotes  *string    `db:"resolution_notes"`
	CreatedAt        time.Time  `db:"created_at"`
}

// TaskTemplate prefills new tasks; usageCount counts tasks made from it.
type TaskTemplate struct {
	ID                        string        `db:"id"`
	Name                      string        `db:"name"`
	Description               string        `db:"description"`
	Category                  TaskCategory  `db:"category"`
	DefaultAcceptanceCriteria Strings       `db:"default_acceptance_criteria"`
	DefaultCodebaseTests      Strings       `db:"default_codebase_tests"`
	DefaultAPITests           Strings       `db:"default_api_tests"`
	DefaultUITests            Strings       `db:"default_ui_tests"`
	DefaultAffectedFiles      Strings       `db:"default_affected_files"`
	Scope                     TemplateScope `db:"scope"`
	ScopeID                   *string       `db:"scope_id"`
	UsageCount                int           `db:"usage_count"`
	CreatedByID               *string       `db:"created_by"`
	CreatedAt                 time.Time     `db:"created_at"`
	UpdatedAt                 time.Time     `db:"updated_at"`
}

// TaskFileImpact is a task's expected effect on one file.
type TaskFileImpact struct {
	ID          string        `db:"id"`
	TaskID      string        `db:"task_id"`
	FilePath    string        `db:"file_path"`
	Operation   FileOperation `db:"operation"`
	Confidence  float64       `db:"confidence"`
	Source      ImpactSource  `db:"source"`
	WasAccurate *bool         `db:"was_accurate"`
	ValidatedAt *time.Time    `db:"validated_at"`
	CreatedAt   time.Time     `db:"created_at"`
	UpdatedAt   time.Time     `db:"updated_at"`
}
