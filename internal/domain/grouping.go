package domain

import (
	"math"
	"time"
)

// Kinds of the grouping domain's entities.
const (
	KindGroupingSuggestion Kind = "GroupingSuggestion"
	KindTaskAgent          Kind = "TaskAgentInstance"
)

// GroupingSuggestionStatus is where a suggestion stands.
type GroupingSuggestionStatus string

// Suggestion statuses.
const (
	SuggestionPending  GroupingSuggestionStatus = "PENDING"
	SuggestionAccepted GroupingSuggestionStatus = "ACCEPTED"
	SuggestionRejected GroupingSuggestionStatus = "REJECTED"
	SuggestionExpired  GroupingSuggestionStatus = "EXPIRED"
	SuggestionModified GroupingSuggestionStatus = "MODIFIED"
)

// Valid reports whether s is a known status.
func (s GroupingSuggestionStatus) Valid() bool {
	switch s {
	case SuggestionPending, SuggestionAccepted, SuggestionRejected, SuggestionExpired, SuggestionModified:
		return true
	}
	return false
}

// GroupingTrigger is what made a suggestion.
type GroupingTrigger string

// Suggestion triggers.
const (
	TriggerTaskCreated       GroupingTrigger = "TASK_CREATED"
	TriggerDependencyChanged GroupingTrigger = "DEPENDENCY_CHANGED"
	TriggerManual            GroupingTrigger = "MANUAL"
)

// TaskAgentStatus is a task agent instance's state.
type TaskAgentStatus string

// Task agent statuses.
const (
	TaskAgentActive     TaskAgentStatus = "ACTIVE"
	TaskAgentPaused     TaskAgentStatus = "PAUSED"
	TaskAgentTerminated TaskAgentStatus = "TERMINATED"
)

// SuggestionLifetime is how long a suggestion stays PENDING before the sweep
// expires it.
const SuggestionLifetime = 7 * 24 * time.Hour

// DefaultMinScore is suggestGroupings' default minScore.
const DefaultMinScore = 0.5

// GroupingWeights weigh the grouping criteria (also the shape of a
// suggestion's breakdown: one value per criterion).
type GroupingWeights struct {
	FileOverlap           float64
	Dependency            float64
	Category              float64
	DescriptionSimilarity float64
	Component             float64
}

// DefaultGroupingWeights are the design's weights.
var DefaultGroupingWeights = GroupingWeights{FileOverlap: 0.3, Dependency: 0.25, Category: 0.2, DescriptionSimilarity: 0.15, Component: 0.1}

// CheckGroupingWeights: each weight in [0, 1], their sum 1 within 0.001.
func CheckGroupingWeights(w GroupingWeights) error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"fileOverlap", w.FileOverlap}, {"dependency", w.Dependency}, {"category", w.Category},
		{"descriptionSimilarity", w.DescriptionSimilarity}, {"component", w.Component}} {
		if math.IsNaN(f.v) || f.v < 0 || f.v > 1 {
			return InputError(f.name, "%s must be between 0 and 1", f.name)
		}
	}
	sum := w.FileOverlap + w.Dependency + w.Category + w.DescriptionSimilarity + w.Component
	if math.Abs(sum-1) > 0.001 {
		return InputError("weights", "the weights must sum to 1 (within 0.001), not %.4f", sum)
	}
	return nil
}

// GroupingWeightsRow is a project's stored weights.
type GroupingWeightsRow struct {
	ID                    string    `db:"id"`
	ProjectID             string    `db:"project_id"`
	FileOverlap           float64   `db:"file_overlap_weight"`
	Dependency            float64   `db:"dependency_weight"`
	Category              float64   `db:"category_weight"`
	DescriptionSimilarity float64   `db:"description_similarity_weight"`
	Component             float64   `db:"component_weight"`
	CreatedAt             time.Time `db:"created_at"`
	UpdatedAt             time.Time `db:"updated_at"`
}

// Weights are the row's values.
func (r *GroupingWeightsRow) Weights() GroupingWeights {
	return GroupingWeights{r.FileOverlap, r.Dependency, r.Category, r.DescriptionSimilarity, r.Component}
}

// GroupingSuggestion is a proposed task list made of candidate tasks.
type GroupingSuggestion struct {
	ID                    string                   `db:"id"`
	ProjectID             string                   `db:"project_id"`
	Status                GroupingSuggestionStatus `db:"status"`
	SuggestedName         string                   `db:"suggested_name"`
	TaskIDs               Strings                  `db:"suggested_tasks"`
	TaskSetKey            string                   `db:"task_set_key"`
	GroupingReason        string                   `db:"grouping_reason"`
	SimilarityScore       float64                  `db:"similarity_score"`
	FileOverlap           float64                  `db:"file_overlap"`
	Dependency            float64                  `db:"dependency"`
	Category              float64                  `db:"category"`
	DescriptionSimilarity float64                  `db:"description_similarity"`
	Component             float64                  `db:"component"`
	TriggeredBy           GroupingTrigger          `db:"triggered_by"`
	TriggerTaskID         *string                  `db:"trigger_task_id"`
	CreatedTaskListID     *string                  `db:"created_task_list_id"`
	TaskAgentID           *string                  `db:"task_agent_id"`
	ResolvedBy            *string                  `db:"resolved_by"`
	ResolvedAt            *time.Time               `db:"resolved_at"`
	ExpiresAt             time.Time                `db:"expires_at"`
	CreatedAt             time.Time                `db:"created_at"`
}

// Breakdown is each criterion averaged over the suggestion's pairs.
func (s *GroupingSuggestion) Breakdown() GroupingWeights {
	return GroupingWeights{s.FileOverlap, s.Dependency, s.Category, s.DescriptionSimilarity, s.Component}
}

// GlobalID is the id clients see.
func (s *GroupingSuggestion) GlobalID() string { return GlobalID(KindGroupingSuggestion, s.ID) }

// TaskAgentInstance is an orchestrator that manages one task list or a
// project's evaluation queue.
type TaskAgentInstance struct {
	ID                string          `db:"id"`
	ProjectID         string          `db:"project_id"`
	TaskListID        *string         `db:"task_list_id"`
	IsEvaluationQueue bool            `db:"is_evaluation_queue"`
	TelegramChannelID *string         `db:"telegram_channel_id"`
	TelegramBotToken  *string         `db:"telegram_bot_token"` // write-only: never exposed
	Status            TaskAgentStatus `db:"status"`
	LastHeartbeatAt   *time.Time      `db:"last_heartbeat_at"`
	ErrorCount        int             `db:"error_count"`
	LastError         *string         `db:"last_error"`
	TasksProcessed    int             `db:"tasks_processed"`
	SuggestionsMade   int             `db:"suggestions_made"`
	QuestionsAsked    int             `db:"questions_asked"`
	CreatedAt         time.Time       `db:"created_at"`
	UpdatedAt         time.Time       `db:"updated_at"`
	TerminatedAt      *time.Time      `db:"terminated_at"`
}

// GlobalID is the id clients see.
func (a *TaskAgentInstance) GlobalID() string { return GlobalID(KindTaskAgent, a.ID) }

// HasTelegramBotToken reports whether a bot token is stored (the token itself
// is never returned).
func (a *TaskAgentInstance) HasTelegramBotToken() bool {
	return a.TelegramBotToken != nil && *a.TelegramBotToken != ""
}

// Inputs of the grouping mutations.
type (
	SetGroupingWeightsInput struct {
		ProjectID             string
		FileOverlap           float64
		Dependency            float64
		Category              float64
		DescriptionSimilarity float64
		Component             float64
	}
	SuggestGroupingsInput struct {
		ProjectID   string
		MinScore    *float64
		TaskAgentID *string
	}
	AcceptGroupingSuggestionInput struct {
		ID      string
		Name    *string
		TaskIDs []string
	}
	RejectGroupingSuggestionInput struct {
		ID     string
		Reason *string
	}
	RegisterTaskAgentInput struct {
		ProjectID         string
		TaskListID        *string
		IsEvaluationQueue *bool
		TelegramChannelID *string
		TelegramBotToken  *string
	}
	TaskAgentHeartbeatInput struct {
		ID             string
		TasksProcessed *int
		Error          *string
	}
	TaskAgentActionInput struct {
		ID     string
		Reason *string
	}
)

// TaskAgentDirective answers a task agent's heartbeat: CONTINUE, PAUSE or
// CANCEL (terminated).
func TaskAgentDirective(s TaskAgentStatus) AgentDirective {
	switch s {
	case TaskAgentPaused:
		return DirectivePause
	case TaskAgentTerminated:
		return DirectiveCancel
	}
	return DirectiveContinue
}
