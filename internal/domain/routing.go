package domain

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// Routing: the routers that talk with a user, the planners a router starts,
// the workers (task records) a planner runs, the messages of each, and the
// function queue that drives planners and workers in the background.

// Kinds of the routing entities.
const (
	KindRouter        Kind = "Router"
	KindRouterMessage Kind = "RouterMessage"
	KindPlanner       Kind = "Planner"
	KindWorker        Kind = "Worker"
	KindAgentMessage  Kind = "AgentMessage"
	KindQueueFunction Kind = "QueueFunction"
	KindQueueItem     Kind = "QueueItem"
)

// RouterStatus is where a router's conversation stands.
type RouterStatus string

// Router statuses.
const (
	RouterActive     RouterStatus = "ACTIVE"
	RouterProcessing RouterStatus = "PROCESSING"
	RouterCompleted  RouterStatus = "COMPLETED"
	RouterFailed     RouterStatus = "FAILED"
	RouterArchived   RouterStatus = "ARCHIVED"
)

// Valid reports whether s is a router status.
func (s RouterStatus) Valid() bool {
	switch s {
	case RouterActive, RouterProcessing, RouterCompleted, RouterFailed, RouterArchived:
		return true
	}
	return false
}

// CheckRouterTransition: ACTIVE ⇄ PROCESSING, ACTIVE|PROCESSING → COMPLETED |
// FAILED, any but ARCHIVED → ARCHIVED (final).
func CheckRouterTransition(from, to RouterStatus) error {
	ok := false
	switch to {
	case RouterActive:
		ok = from == RouterProcessing
	case RouterProcessing:
		ok = from == RouterActive
	case RouterCompleted, RouterFailed:
		ok = from == RouterActive || from == RouterProcessing
	case RouterArchived:
		ok = from != RouterArchived
	}
	if !ok {
		return transitionError("router", string(from), string(to))
	}
	return nil
}

// RouterMessageRole is who wrote a router message.
type RouterMessageRole string

// Router message roles.
const (
	RouterMessageUser      RouterMessageRole = "USER"
	RouterMessageAssistant RouterMessageRole = "ASSISTANT"
)

// Valid reports whether r is a router message role.
func (r RouterMessageRole) Valid() bool { return r == RouterMessageUser || r == RouterMessageAssistant }

// AgentMessageRole is who wrote a planner's or worker's message.
type AgentMessageRole string

// Agent message roles.
const (
	AgentMessageUser      AgentMessageRole = "USER"
	AgentMessageAssistant AgentMessageRole = "ASSISTANT"
	AgentMessageSystem    AgentMessageRole = "SYSTEM"
	AgentMessageDeveloper AgentMessageRole = "DEVELOPER"
)

// Valid reports whether r is an agent message role.
func (r AgentMessageRole) Valid() bool {
	switch r {
	case AgentMessageUser, AgentMessageAssistant, AgentMessageSystem, AgentMessageDeveloper:
		return true
	}
	return false
}

// PlannerStatus is where a planner's execution stands.
type PlannerStatus string

// Planner statuses.
const (
	PlannerPlanning  PlannerStatus = "PLANNING"
	PlannerExecuting PlannerStatus = "EXECUTING"
	PlannerCompleted PlannerStatus = "COMPLETED"
	PlannerFailed    PlannerStatus = "FAILED"
)

// Valid reports whether s is a planner status.
func (s PlannerStatus) Valid() bool {
	switch s {
	case PlannerPlanning, PlannerExecuting, PlannerCompleted, PlannerFailed:
		return true
	}
	return false
}

// Final reports whether nothing moves a planner in s any more.
func (s PlannerStatus) Final() bool { return s == PlannerCompleted || s == PlannerFailed }

// CheckPlannerTransition: PLANNING → EXECUTING → COMPLETED | FAILED.
func CheckPlannerTransition(from, to PlannerStatus) error {
	if (from == PlannerPlanning && to == PlannerExecuting) ||
		(from == PlannerExecuting && (to == PlannerCompleted || to == PlannerFailed)) {
		return nil
	}
	return transitionError("planner", string(from), string(to))
}

// WorkerTaskStatus is where a worker's task stands.
type WorkerTaskStatus string

// Worker task statuses.
const (
	WorkerPending          WorkerTaskStatus = "PENDING"
	WorkerInProgress       WorkerTaskStatus = "IN_PROGRESS"
	WorkerCompleted        WorkerTaskStatus = "COMPLETED"
	WorkerFailedValidation WorkerTaskStatus = "FAILED_VALIDATION"
	WorkerRecorded         WorkerTaskStatus = "RECORDED"
)

// Valid reports whether s is a worker task status.
func (s WorkerTaskStatus) Valid() bool {
	switch s {
	case WorkerPending, WorkerInProgress, WorkerCompleted, WorkerFailedValidation, WorkerRecorded:
		return true
	}
	return false
}

// CheckWorkerTransition: PENDING → IN_PROGRESS → COMPLETED | FAILED_VALIDATION,
// COMPLETED → RECORDED, FAILED_VALIDATION → PENDING (a retry).
func CheckWorkerTransition(from, to WorkerTaskStatus) error {
	switch {
	case from == WorkerPending && to == WorkerInProgress,
		from == WorkerInProgress && (to == WorkerCompleted || to == WorkerFailedValidation),
		from == WorkerCompleted && to == WorkerRecorded,
		from == WorkerFailedValidation && to == WorkerPending:
		return nil
	}
	return transitionError("worker", string(from), string(to))
}

// PlannerLinkType is how a planner relates to a router (or one of its messages).
type PlannerLinkType string

// Planner link types.
const (
	LinkInitiated PlannerLinkType = "INITIATED"
	LinkContinued PlannerLinkType = "CONTINUED"
	LinkForked    PlannerLinkType = "FORKED"
)

// Valid reports whether t is a planner link type.
func (t PlannerLinkType) Valid() bool {
	return t == LinkInitiated || t == LinkContinued || t == LinkForked
}

func transitionError(what, from, to string) error {
	return &Error{Code: CodeInvalidTransition, Message: fmt.Sprintf("a %s cannot go from %s to %s", what, from, to),
		Details: map[string]any{"from": from, "to": to}}
}

// Router is a conversation with a user.
type Router struct {
	ID            string       `db:"id"`
	ProjectID     string       `db:"project_id"`
	Status        RouterStatus `db:"status"`
	Model         string       `db:"model"`
	Temperature   float64      `db:"temperature"`
	Title         *string      `db:"title"`
	Preview       *string      `db:"preview"`
	AgentMetadata JSON         `db:"agent_metadata"`
	SchemaVersion int          `db:"schema_version"`
	CreatedAt     time.Time    `db:"created_at"`
	UpdatedAt     time.Time    `db:"updated_at"`
}

// RouterMessage is one message of a router's conversation.
type RouterMessage struct {
	ID        string            `db:"id"`
	RouterID  string            `db:"router_id"`
	ProjectID string            `db:"project_id"`
	Role      RouterMessageRole `db:"role"`
	Content   string            `db:"content"`
	CreatedAt time.Time         `db:"created_at"`
}

// Planner is the state of one function-based planner execution.
type Planner struct {
	ID                string        `db:"id"`
	ProjectID         string        `db:"project_id"`
	PlannerName       *string       `db:"planner_name"`
	UserQuestion      string        `db:"user_question"`
	Instruction       *string       `db:"instruction"`
	ExecutionPlan     *string       `db:"execution_plan"`
	Model             string        `db:"model"`
	Temperature       float64       `db:"temperature"`
	FailedTaskLimit   int           `db:"failed_task_limit"`
	FailedTaskCount   int           `db:"failed_task_count"`
	Status            PlannerStatus `db:"status"`
	UserResponse      *string       `db:"user_response"`
	NextTask          *string       `db:"next_task"`
	VariableFilePaths JSON          `db:"variable_file_paths"`
	ImageFilePaths    JSON          `db:"image_file_paths"`
	AgentMetadata     JSON          `db:"agent_metadata"`
	SchemaVersion     int           `db:"schema_version"`
	CreatedAt         time.Time     `db:"created_at"`
	UpdatedAt         time.Time     `db:"updated_at"`
	// Workings: the planner's account of its workers' work.
	Workings PlannerWorkings `db:"workings"`
	// RequestValidation: its check of the user's request, once made.
	RequestValidation *PlannerRequestValidation `db:"request_validation"`
}

// Worker is one task a planner runs (the data model's worker / task record).
type Worker struct {
	ID                      string           `db:"id"`
	PlannerID               string           `db:"planner_id"`
	ProjectID               string           `db:"project_id"`
	WorkerName              *string          `db:"worker_name"`
	TaskStatus              WorkerTaskStatus `db:"task_status"`
	NextTask                *string          `db:"next_task"`
	TaskDescription         string           `db:"task_description"`
	AcceptanceCriteria      Strings          `db:"acceptance_criteria"`
	TaskContext             JSON             `db:"task_context"`
	TaskResult              *string          `db:"task_result"`
	QueryingStructuredData  bool             `db:"querying_structured_data"`
	ImageKeys               Strings          `db:"image_keys"`
	VariableKeys            Strings          `db:"variable_keys"`
	Tools                   Strings          `db:"tools"`
	InputVariableFilepaths  JSON             `db:"input_variable_filepaths"`
	InputImageFilepaths     JSON             `db:"input_image_filepaths"`
	OutputVariableFilepaths JSON             `db:"output_variable_filepaths"`
	OutputImageFilepaths    JSON             `db:"output_image_filepaths"`
	CurrentAttempt          int              `db:"current_attempt"`
	Tables                  JSON             `db:"tables"`
	Filepaths               Strings          `db:"filepaths"`
	AgentMetadata           JSON             `db:"agent_metadata"`
	SchemaVersion           int              `db:"schema_version"`
	CreatedAt               time.Time        `db:"created_at"`
	UpdatedAt               time.Time        `db:"updated_at"`
	// Failures: its FAILED_VALIDATIONs, oldest first (the newest 50).
	Failures WorkerFailures `db:"failures"`
}

// AgentMessage is one message of a planner or a worker: multimodal JSON
// content. OwnerID is the planner or worker it belongs to.
type AgentMessage struct {
	ID        string           `db:"id"`
	OwnerID   string           `db:"owner_id"`
	ProjectID string           `db:"project_id"`
	Role      AgentMessageRole `db:"role"`
	Content   JSON             `db:"content"`
	CreatedAt time.Time        `db:"created_at"`
	// OwnerKind: KindPlanner or KindWorker (read, never stored).
	OwnerKind Kind `db:"owner_kind"`
}

// RouterPlannerLink relates a planner to a router, and to the router message
// it was made for when MessageID is set (the design's planner-by-message).
type RouterPlannerLink struct {
	ID               string          `db:"id"`
	RouterID         string          `db:"router_id"`
	PlannerID        string          `db:"planner_id"`
	MessageID        *string         `db:"message_id"`
	RelationshipType PlannerLinkType `db:"relationship_type"`
	CreatedAt        time.Time       `db:"created_at"`
}

// GlobalID implementations of routing.
func (r *Router) GlobalID() string        { return GlobalID(KindRouter, r.ID) }
func (m *RouterMessage) GlobalID() string { return GlobalID(KindRouterMessage, m.ID) }
func (p *Planner) GlobalID() string       { return GlobalID(KindPlanner, p.ID) }
func (w *Worker) GlobalID() string        { return GlobalID(KindWorker, w.ID) }
func (m *AgentMessage) GlobalID() string  { return GlobalID(KindAgentMessage, m.ID) }

// Limits of routing inputs.
const (
	MaxModelName       = 200
	MaxMessageContent  = 1_000_000 // characters (router) or bytes of JSON (agents)
	MaxRoutingJSON     = 1_000_000 // bytes of a JSON input (metadata, context, maps, payloads)
	MaxPreview         = 200       // characters of a router's preview taken from its newest message
	MaxFailedTaskLimit = 1_000
)

// CheckJSONSize bounds a JSON input.
func CheckJSONSize(field string, j JSON) error {
	if len(j) > MaxRoutingJSON {
		return InputError(field, "%s is larger than %d bytes", field, MaxRoutingJSON)
	}
	return nil
}

// CheckFilePathMap validates a file-path map: a JSON object of string to
// string. nil (absent) stays nil; JSON null is the empty map.
func CheckFilePathMap(field string, j JSON) (JSON, error) {
	if j == nil {
		return nil, nil
	}
	if err := CheckJSONSize(field, j); err != nil {
		return nil, err
	}
	if bytes.Equal(bytes.TrimSpace(j), []byte("null")) {
		return JSON(`{}`), nil
	}
	var raw map[string]any
	dec := json.NewDecoder(bytes.NewReader(j))
	if err := dec.Decode(&raw); err != nil || raw == nil {
		return nil, InputError(field, "%s must be a JSON object of string keys to string file paths", field)
	}
	m := make(map[string]string, len(raw))
	for k, v := range raw {
		s, ok := v.(string)
		if k == "" || !ok {
			return nil, InputError(field, "%s must map non-empty keys to string file paths (key %q)", field, k)
		}
		m[k] = s
	}
	b, _ := json.Marshal(m)
	return JSON(b), nil
}

// CheckTemperature validates an LLM temperature (0..2).
func CheckTemperature(field string, v *float64) error {
	if v != nil && (*v < 0 || *v > 2) {
		return InputError(field, "%s must be between 0 and 2", field)
	}
	return nil
}

// PreviewOf is the preview a message's content gives its router: its first
// MaxPreview characters.
func PreviewOf(content string) string {
	r := []rune(content)
	if len(r) > MaxPreview {
		return string(r[:MaxPreview-1]) + "…"
	}
	return content
}
