package domain

import "time"

// Inputs of routing and the function queue (global ids, decoded by the
// use-cases; nil: not given).

// CreateRouterInput creates a router.
type CreateRouterInput struct {
	ProjectID     string
	Model         string
	Temperature   *float64
	Title         *string
	Preview       *string
	AgentMetadata JSON
}

// SetRouterStatusInput moves a router.
type SetRouterStatusInput struct {
	ID     string
	Status RouterStatus
}

// AddRouterMessageInput adds a message to a router.
type AddRouterMessageInput struct {
	RouterID string
	Role     RouterMessageRole
	Content  string
}

// CreatePlannerInput creates a planner, linked to a router (and one of its
// messages) when given.
type CreatePlannerInput struct {
	ProjectID         string
	RouterID          *string
	MessageID         *string
	RelationshipType  *PlannerLinkType
	PlannerName       *string
	UserQuestion      string
	Instruction       *string
	ExecutionPlan     *string
	Model             string
	Temperature       *float64
	FailedTaskLimit   *int
	VariableFilePaths JSON
	ImageFilePaths    JSON
	AgentMetadata     JSON
}

// PlannerRequestValidationInput is a planner's check of the user's request.
type PlannerRequestValidationInput struct {
	UserRequestFulfilled bool
	ProgressSummary      string
}

// LinkPlannerInput links a planner to a router, or to one of its messages.
type LinkPlannerInput struct {
	RouterID         string
	PlannerID        string
	MessageID        *string
	RelationshipType PlannerLinkType
}

// UpdatePlannerInput changes a planner.
type UpdatePlannerInput struct {
	ID                string
	Status            *PlannerStatus
	ExecutionPlan     *string
	UserResponse      *string
	NextTask          *string
	VariableFilePaths JSON
	ImageFilePaths    JSON
	AgentMetadata     JSON
	// Workings replaces the planner's workings when given.
	Workings          []*PlannerWorkingInput
	RequestValidation *PlannerRequestValidationInput
}

// CreateWorkerInput creates a worker of a planner.
type CreateWorkerInput struct {
	PlannerID              string
	WorkerName             *string
	TaskDescription        string
	AcceptanceCriteria     []string
	TaskContext            JSON
	QueryingStructuredData *bool
	ImageKeys              []string
	VariableKeys           []string
	Tools                  []string
	InputVariableFilepaths JSON
	InputImageFilepaths    JSON
	Tables                 JSON
	Filepaths              []string
	NextTask               *string
	AgentMetadata          JSON
}

// UpdateWorkerInput changes a worker.
type UpdateWorkerInput struct {
	ID                      string
	TaskStatus              *WorkerTaskStatus
	NextTask                *string
	TaskResult              *string
	OutputVariableFilepaths JSON
	OutputImageFilepaths    JSON
	AgentMetadata           JSON
	// FailedCriteria and Message go with taskStatus FAILED_VALIDATION.
	FailedCriteria []string
	Message        *string
}

// AddAgentMessageInput adds a message to a planner or a worker (exactly one).
type AddAgentMessageInput struct {
	PlannerID *string
	WorkerID  *string
	Role      AgentMessageRole
	Content   JSON
}

// ClearAgentMessagesInput clears the messages of a router, a planner or a
// worker (exactly one).
type ClearAgentMessagesInput struct {
	RouterID  *string
	PlannerID *string
	WorkerID  *string
}

// RegisterQueueFunctionInput registers (or re-configures) a queue function.
type RegisterQueueFunctionInput struct {
	Name         string
	MaxAttempts  *int
	LeaseSeconds *int
}

// EnqueueFunctionInput adds an item to the queue.
type EnqueueFunctionInput struct {
	EntityType   QueueEntityType
	EntityID     string
	FunctionName string
	Payload      JSON
	Priority     *int
	UniqueKey    *string
	ScheduledAt  *time.Time
}

// ClaimQueueItemsInput claims due items of some functions.
type ClaimQueueItemsInput struct {
	FunctionNames []string
	WorkerName    string
	Limit         *int
}

// ExtendQueueLeaseInput names an item held by the caller's lease. Attempt, when
// given, must be the attempt the caller claimed (a fencing token: a call for
// an earlier attempt gets LEASE_LOST).
type ExtendQueueLeaseInput struct {
	ID      string
	Attempt *int
}

// CompleteQueueItemInput completes a claimed item.
type CompleteQueueItemInput struct {
	ID      string
	Attempt *int
	Result  JSON
}

// FailQueueItemInput fails a claimed item's attempt.
type FailQueueItemInput struct {
	ID        string
	Attempt   *int
	Error     string
	Retryable *bool
}

// CancelQueueItemInput cancels an item.
type CancelQueueItemInput struct {
	ID string
}

// QueueItemFilter narrows queueItems.
type QueueItemFilter struct {
	Status       []QueueItemStatus
	FunctionName *string
	EntityID     *string
}
