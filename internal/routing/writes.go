package routing

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/auth"
	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/store"
)

// CreateRouter creates an ACTIVE router in a project the caller may change.
func (s *Service) CreateRouter(ctx context.Context, in domain.CreateRouterInput) (*domain.Router, error) {
	p, err := writer(ctx)
	if err != nil {
		return nil, err
	}
	projectID, err := domain.DecodeID(domain.KindProject, in.ProjectID, "projectId")
	if err != nil {
		return nil, err
	}
	model, err := domain.CheckText("model", in.Model, domain.MaxModelName, true)
	if err != nil {
		return nil, err
	}
	if err := domain.CheckTemperature("temperature", in.Temperature); err != nil {
		return nil, err
	}
	title, err := domain.CheckOptText("title", in.Title, domain.MaxTitle)
	if err != nil {
		return nil, err
	}
	preview, err := domain.CheckOptText("preview", in.Preview, domain.MaxTitle)
	if err != nil {
		return nil, err
	}
	if err := domain.CheckJSONSize("agentMetadata", in.AgentMetadata); err != nil {
		return nil, err
	}
	now := s.now()
	r := &domain.Router{ID: app.NewID(), ProjectID: projectID, Status: domain.RouterActive, Model: model,
		Temperature: deref(in.Temperature), Title: title, Preview: preview,
		AgentMetadata: defaultJSON(in.AgentMetadata, "{}"), SchemaVersion: 2, CreatedAt: now, UpdatedAt: now}
	if in.Temperature == nil {
		r.Temperature = 0.7
	}
	err = s.tx(ctx, func(tx *app.Tx) error {
		if err := visibleField(ctx, tx.Q, p, projectID, "project", "projectId"); err != nil {
			return err
		}
		return tx.Routing.InsertRouter(ctx, r)
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// visibleField is visible with the input field that named the entity.
func visibleField(ctx context.Context, q *store.Q, p *auth.Principal, projectID, what, field string) error {
	err := visible(ctx, q, p, projectID, what)
	if e, ok := domain.AsError(err); ok && e.Code == domain.CodeNotFound {
		return &domain.Error{Code: domain.CodeNotFound, Field: field, Message: what + " not found"}
	}
	return err
}

// routerForUpdate loads and locks a router the caller may see.
func routerForUpdate(ctx context.Context, tx *app.Tx, p *auth.Principal, id, field string) (*domain.Router, error) {
	r, err := tx.Routing.RouterForUpdate(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, &domain.Error{Code: domain.CodeNotFound, Field: field, Message: "router not found"}
	} else if err != nil {
		return nil, err
	}
	return r, visibleField(ctx, tx.Q, p, r.ProjectID, "router", field)
}

func plannerForUpdate(ctx context.Context, tx *app.Tx, p *auth.Principal, id, field string) (*domain.Planner, error) {
	pl, err := tx.Routing.PlannerForUpdate(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, &domain.Error{Code: domain.CodeNotFound, Field: field, Message: "planner not found"}
	} else if err != nil {
		return nil, err
	}
	return pl, visibleField(ctx, tx.Q, p, pl.ProjectID, "planner", field)
}

func workerForUpdate(ctx context.Context, tx *app.Tx, p *auth.Principal, id, field string) (*domain.Worker, error) {
	w, err := tx.Routing.WorkerForUpdate(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, &domain.Error{Code: domain.CodeNotFound, Field: field, Message: "worker not found"}
	} else if err != nil {
		return nil, err
	}
	return w, visibleField(ctx, tx.Q, p, w.ProjectID, "worker", field)
}

// SetRouterStatus moves a router along its lifecycle.
func (s *Service) SetRouterStatus(ctx context.Context, in domain.SetRouterStatusInput) (*domain.Router, error) {
	p, err := writer(ctx)
	if err != nil {
		return nil, err
	}
	id, err := domain.DecodeID(domain.KindRouter, in.ID, "id")
	if err != nil {
		return nil, err
	}
	if !in.Status.Valid() {
		return nil, domain.InputError("status", "unknown router status %q", in.Status)
	}
	var r *domain.Router
	err = s.tx(ctx, func(tx *app.Tx) error {
		r, err = routerForUpdate(ctx, tx, p, id, "id")
		if err != nil {
			return err
		}
		if err := domain.CheckRouterTransition(r.Status, in.Status); err != nil {
			return err
		}
		r.Status, r.UpdatedAt = in.Status, s.now()
		return tx.Routing.UpdateRouter(ctx, r)
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// AddRouterMessage adds a message to a router that is not ARCHIVED (CONFLICT);
// the router's updatedAt and preview follow it.
func (s *Service) AddRouterMessage(ctx context.Context, in domain.AddRouterMessageInput) (*domain.RouterMessage, error) {
	p, err := writer(ctx)
	if err != nil {
		return nil, err
	}
	id, err := domain.DecodeID(domain.KindRouter, in.RouterID, "routerId")
	if err != nil {
		return nil, err
	}
	if !in.Role.Valid() {
		return nil, domain.InputError("role", "unknown router message role %q", in.Role)
	}
	if in.Content == "" {
		return nil, domain.InputError("content", "content must not be empty")
	}
	if len(in.Content) > domain.MaxMessageContent {
		return nil, domain.InputError("content", "content is longer than %d bytes", domain.MaxMessageContent)
	}
	var m *domain.RouterMessage
	err = s.tx(ctx, func(tx *app.Tx) error {
		r, err := routerForUpdate(ctx, tx, p, id, "routerId")
		if err != nil {
			return err
		}
		if r.Status == domain.RouterArchived {
			return &domain.Error{Code: domain.CodeConflict, Field: "routerId",
				Message: "the router is ARCHIVED: it takes no more messages"}
		}
		now := s.now()
		if !now.After(r.UpdatedAt) {
			now = r.UpdatedAt.Add(time.Microsecond) // messages keep their order
		}
		m = &domain.RouterMessage{ID: app.NewID(), RouterID: r.ID, ProjectID: r.ProjectID, Role: in.Role,
			Content: in.Content, CreatedAt: now}
		if err := tx.Routing.InsertRouterMessage(ctx, m); err != nil {
			return err
		}
		preview := domain.PreviewOf(in.Content)
		r.Preview, r.UpdatedAt = &preview, now
		if err := tx.Routing.UpdateRouter(ctx, r); err != nil {
			return err
		}
		tx.Record(domain.NewRouterMessageAdded(m))
		return nil
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// CreatePlanner creates a PLANNING planner; with routerId it is linked to
// the router (and to messageId, one of the router's messages), as
// relationshipType (default INITIATED).
func (s *Service) CreatePlanner(ctx context.Context, in domain.CreatePlannerInput) (*domain.Planner, error) {
	p, err := writer(ctx)
	if err != nil {
		return nil, err
	}
	projectID, err := domain.DecodeID(domain.KindProject, in.ProjectID, "projectId")
	if err != nil {
		return nil, err
	}
	routerID, err := domain.DecodeOptionalID(domain.KindRouter, in.RouterID, "routerId")
	if err != nil {
		return nil, err
	}
	messageID, err := domain.DecodeOptionalID(domain.KindRouterMessage, in.MessageID, "messageId")
	if err != nil {
		return nil, err
	}
	if messageID != nil && routerID == nil {
		return nil, domain.InputError("routerId", "messageId needs the routerId of its router")
	}
	linkType := domain.LinkInitiated
	if in.RelationshipType != nil {
		if !in.RelationshipType.Valid() {
			return nil, domain.InputError("relationshipType", "unknown relationship type %q", *in.RelationshipType)
		}
		linkType = *in.RelationshipType
	}
	pl := &domain.Planner{ID: app.NewID(), ProjectID: projectID, Status: domain.PlannerPlanning, SchemaVersion: 2,
		FailedTaskLimit: 3, Temperature: 0.7}
	if pl.PlannerName, err = domain.CheckOptText("plannerName", in.PlannerName, domain.MaxName); err != nil {
		return nil, err
	}
	if pl.UserQuestion, err = domain.CheckText("userQuestion", in.UserQuestion, domain.MaxDescription, true); err != nil {
		return nil, err
	}
	if pl.Instruction, err = domain.CheckOptText("instruction", in.Instruction, domain.MaxDescription); err != nil {
		return nil, err
	}
	if pl.ExecutionPlan, err = domain.CheckOptText("executionPlan", in.ExecutionPlan, domain.MaxDescription); err != nil {
		return nil, err
	}
	if pl.Model, err = domain.CheckText("model", in.Model, domain.MaxModelName, true); err != nil {
		return nil, err
	}
	if err := domain.CheckTemperature("temperature", in.Temperature); err != nil {
		return nil, err
	}
	if in.Temperature != nil {
		pl.Temperature = *in.Temperature
	}
	if in.FailedTaskLimit != nil {
		if *in.FailedTaskLimit < 1 || *in.FailedTaskLimit > domain.MaxFailedTaskLimit {
			return nil, domain.InputError("failedTaskLimit", "failedTaskLimit must be between 1 and %d", domain.MaxFailedTaskLimit)
		}
		pl.FailedTaskLimit = *in.FailedTaskLimit
	}
	if pl.VariableFilePaths, err = domain.CheckFilePathMap("variableFilePaths", in.VariableFilePaths); err != nil {
		return nil, err
	}
	if pl.ImageFilePaths, err = domain.CheckFilePathMap("imageFilePaths", in.ImageFilePaths); err != nil {
		return nil, err
	}
	if err := domain.CheckJSONSize("agentMetadata", in.AgentMetadata); err != nil {
		return nil, err
	}
	pl.VariableFilePaths = defaultJSON(pl.VariableFilePaths, "{}")
	pl.ImageFilePaths = defaultJSON(pl.ImageFilePaths, "{}")
	pl.AgentMetadata = defaultJSON(in.AgentMetadata, "{}")
	now := s.now()
	pl.CreatedAt, pl.UpdatedAt = now, now
	err = s.tx(ctx, func(tx *app.Tx) error {
		if err := visibleField(ctx, tx.Q, p, projectID, "project", "projectId"); err != nil {
			return err
		}
		if err := tx.Routing.InsertPlanner(ctx, pl); err != nil {
			return err
		}
		if routerID == nil {
			return nil
		}
		_, err := s.link(ctx, tx, p, *routerID, pl, messageID, linkType, now)
		return err
	})
	if err != nil {
		return nil, err
	}
	return pl, nil
}

// link links planner pl to a router (and one of its messages) in tx.
func (s *Service) link(ctx context.Context, tx *app.Tx, p *auth.Principal, routerID string, pl *domain.Planner,
	messageID *string, typ domain.PlannerLinkType, now time.Time) (*domain.RouterPlannerLink, error) {
	r, err := routerForUpdate(ctx, tx, p, routerID, "routerId")
	if err != nil {
		return nil, err
	}
	if r.ProjectID != pl.ProjectID {
		return nil, domain.InputError("routerId", "the router belongs to another project than the planner")
	}
	if messageID != nil {
		ms, err := tx.Routing.RouterMessagesByIDs(ctx, []string{*messageID})
		if err != nil {
			return nil, err
		}
		if len(ms) == 0 {
			return nil, &domain.Error{Code: domain.CodeNotFound, Field: "messageId", Message: "router message not found"}
		}
		if ms[0].RouterID != r.ID {
			return nil, domain.InputError("messageId", "the message belongs to another router")
		}
	} else {
		exists, err := tx.Routing.RouterLinkExists(ctx, r.ID, pl.ID)
		if err != nil {
			return nil, err
		}
		if exists {
			return nil, &domain.Error{Code: domain.CodeConflict, Field: "plannerId",
				Message: "the planner is already linked to this router"}
		}
	}
	l := &domain.RouterPlannerLink{ID: app.NewID(), RouterID: r.ID, PlannerID: pl.ID, MessageID: messageID,
		RelationshipType: typ, CreatedAt: now}
	if err := tx.Routing.InsertLink(ctx, l); err != nil {
		if errors.Is(err, store.ErrUnique) {
			return nil, &domain.Error{Code: domain.CodeConflict, Field: "messageId",
				Message: "the planner is already linked to this message"}
		}
		return nil, err
	}
	return l, nil
}

// LinkPlanner links a planner to a router, or to one of the router's
// messages (one message may start several planners).
func (s *Service) LinkPlanner(ctx context.Context, in domain.LinkPlannerInput) (*domain.RouterPlannerLink, error) {
	p, err := writer(ctx)
	if err != nil {
		return nil, err
	}
	routerID, err := domain.DecodeID(domain.KindRouter, in.RouterID, "routerId")
	if err != nil {
		return nil, err
	}
	plannerID, err := domain.DecodeID(domain.KindPlanner, in.PlannerID, "plannerId")
	if err != nil {
		return nil, err
	}
	messageID, err := domain.DecodeOptionalID(domain.KindRouterMessage, in.MessageID, "messageId")
	if err != nil {
		return nil, err
	}
	if !in.RelationshipType.Valid() {
		return nil, domain.InputError("relationshipType", "unknown relationship type %q", in.RelationshipType)
	}
	var l *domain.RouterPlannerLink
	err = s.tx(ctx, func(tx *app.Tx) error {
		pl, err := plannerForUpdate(ctx, tx, p, plannerID, "plannerId")
		if err != nil {
			return err
		}
		l, err = s.link(ctx, tx, p, routerID, pl, messageID, in.RelationshipType, s.now())
		return err
	})
	if err != nil {
		return nil, err
	}
	return l, nil
}

// UpdatePlanner changes a planner; a status change follows PLANNING →
// EXECUTING → COMPLETED | FAILED, and COMPLETED needs a userResponse.
func (s *Service) UpdatePlanner(ctx context.Context, in domain.UpdatePlannerInput) (*domain.Planner, error) {
	p, err := writer(ctx)
	if err != nil {
		return nil, err
	}
	id, err := domain.DecodeID(domain.KindPlanner, in.ID, "id")
	if err != nil {
		return nil, err
	}
	if in.Status != nil && !in.Status.Valid() {
		return nil, domain.InputError("status", "unknown planner status %q", *in.Status)
	}
	plan, err := domain.CheckOptText("executionPlan", in.ExecutionPlan, domain.MaxDescription)
	if err != nil {
		return nil, err
	}
	response, err := domain.CheckOptText("userResponse", in.UserResponse, domain.MaxDescription)
	if err != nil {
		return nil, err
	}
	next, err := domain.CheckOptText("nextTask", in.NextTask, domain.MaxName)
	if err != nil {
		return nil, err
	}
	vars, err := domain.CheckFilePathMap("variableFilePaths", in.VariableFilePaths)
	if err != nil {
		return nil, err
	}
	images, err := domain.CheckFilePathMap("imageFilePaths", in.ImageFilePaths)
	if err != nil {
		return nil, err
	}
	if err := domain.CheckJSONSize("agentMetadata", in.AgentMetadata); err != nil {
		return nil, err
	}
	var pl *domain.Planner
	err = s.tx(ctx, func(tx *app.Tx) error {
		pl, err = plannerForUpdate(ctx, tx, p, id, "id")
		if err != nil {
			return err
		}
		from := pl.Status
		if plan != nil {
			pl.ExecutionPlan = plan
		}
		if response != nil {
			pl.UserResponse = response
		}
		if next != nil {
			pl.NextTask = next
		}
		if vars != nil {
			pl.VariableFilePaths = vars
		}
		if images != nil {
			pl.ImageFilePaths = images
		}
		if in.AgentMetadata != nil {
			pl.AgentMetadata = defaultJSON(in.AgentMetadata, "{}")
		}
		now := s.now()
		if in.Status != nil && *in.Status != from {
			if err := domain.CheckPlannerTransition(from, *in.Status); err != nil {
				return err
			}
			if *in.Status == domain.PlannerCompleted && (pl.UserResponse == nil || *pl.UserResponse == "") {
				return domain.InputError("userResponse", "a planner completes with a userResponse")
			}
			pl.Status = *in.Status
			tx.Record(domain.NewPlannerStatusChanged(pl, from, "", now))
		} else if in.Status != nil && pl.Status.Final() {
			return &domain.Error{Code: domain.CodeInvalidTransition, Message: fmt.Sprintf("the planner is already %s", pl.Status),
				Details: map[string]any{"from": string(pl.Status), "to": string(*in.Status)}}
		}
		pl.UpdatedAt = now
		return tx.Routing.UpdatePlanner(ctx, pl)
	})
	if err != nil {
		return nil, err
	}
	return pl, nil
}

// Limits of worker inputs.
const maxWorkerList = 1_000

// CreateWorker creates a PENDING worker of a planner that has not finished
// (CONFLICT otherwise).
func (s *Service) CreateWorker(ctx context.Context, in domain.CreateWorkerInput) (*domain.Worker, error) {
	p, err := writer(ctx)
	if err != nil {
		return nil, err
	}
	plannerID, err := domain.DecodeID(domain.KindPlanner, in.PlannerID, "plannerId")
	if err != nil {
		return nil, err
	}
	w := &domain.Worker{ID: app.NewID(), PlannerID: plannerID, TaskStatus: domain.WorkerPending, CurrentAttempt: 1,
		SchemaVersion: 2, QueryingStructuredData: deref(in.QueryingStructuredData)}
	if w.WorkerName, err = domain.CheckOptText("workerName", in.WorkerName, domain.MaxName); err != nil {
		return nil, err
	}
	if w.TaskDescription, err = domain.CheckText("taskDescription", in.TaskDescription, domain.MaxDescription, true); err != nil {
		return nil, err
	}
	if w.NextTask, err = domain.CheckOptText("nextTask", in.NextTask, domain.MaxName); err != nil {
		return nil, err
	}
	lists := []struct {
		field string
		in    []string
		out   *domain.Strings
	}{{"acceptanceCriteria", in.AcceptanceCriteria, &w.AcceptanceCriteria}, {"imageKeys", in.ImageKeys, &w.ImageKeys},
		{"variableKeys", in.VariableKeys, &w.VariableKeys}, {"tools", in.Tools, &w.Tools}, {"filepaths", in.Filepaths, &w.Filepaths}}
	for _, l := range lists {
		v, err := domain.CheckList(l.field, l.in, maxWorkerList, domain.MaxListEntry)
		if err != nil {
			return nil, err
		}
		*l.out = v
	}
	for _, j := range []struct {
		field string
		v     domain.JSON
	}{{"taskContext", in.TaskContext}, {"tables", in.Tables}, {"agentMetadata", in.AgentMetadata}} {
		if err := domain.CheckJSONSize(j.field, j.v); err != nil {
			return nil, err
		}
	}
	if w.InputVariableFilepaths, err = domain.CheckFilePathMap("inputVariableFilepaths", in.InputVariableFilepaths); err != nil {
		return nil, err
	}
	if w.InputImageFilepaths, err = domain.CheckFilePathMap("inputImageFilepaths", in.InputImageFilepaths); err != nil {
		return nil, err
	}
	w.InputVariableFilepaths = defaultJSON(w.InputVariableFilepaths, "{}")
	w.InputImageFilepaths = defaultJSON(w.InputImageFilepaths, "{}")
	w.OutputVariableFilepaths, w.OutputImageFilepaths = domain.JSON("{}"), domain.JSON("{}")
	w.TaskContext = defaultJSON(in.TaskContext, "{}")
	w.Tables = defaultJSON(in.Tables, "[]")
	w.AgentMetadata = defaultJSON(in.AgentMetadata, "{}")
	err = s.tx(ctx, func(tx *app.Tx) error {
		pl, err := plannerForUpdate(ctx, tx, p, plannerID, "plannerId")
		if err != nil {
			return err
		}
		if pl.Status.Final() {
			return &domain.Error{Code: domain.CodeConflict, Field: "plannerId",
				Message: fmt.Sprintf("the planner is %s: it takes no more workers", pl.Status)}
		}
		now := s.now()
		w.ProjectID, w.CreatedAt, w.UpdatedAt = pl.ProjectID, now, now
		return tx.Routing.InsertWorker(ctx, w)
	})
	if err != nil {
		return nil, err
	}
	return w, nil
}

// UpdateWorker changes a worker. A status change follows PENDING →
// IN_PROGRESS → COMPLETED | FAILED_VALIDATION, COMPLETED → RECORDED,
// FAILED_VALIDATION → PENDING (a retry: currentAttempt + 1). Reaching
// FAILED_VALIDATION counts against the planner: at its failedTaskLimit the
// planner becomes FAILED in the same transaction.
func (s *Service) UpdateWorker(ctx context.Context, in domain.UpdateWorkerInput) (*domain.Worker, error) {
	p, err := writer(ctx)
	if err != nil {
		return nil, err
	}
	id, err := domain.DecodeID(domain.KindWorker, in.ID, "id")
	if err != nil {
		return nil, err
	}
	if in.TaskStatus != nil && !in.TaskStatus.Valid() {
		return nil, domain.InputError("taskStatus", "unknown worker task status %q", *in.TaskStatus)
	}
	next, err := domain.CheckOptText("nextTask", in.NextTask, domain.MaxName)
	if err != nil {
		return nil, err
	}
	result, err := domain.CheckOptText("taskResult", in.TaskResult, domain.MaxDescription)
	if err != nil {
		return nil, err
	}
	vars, err := domain.CheckFilePathMap("outputVariableFilepaths", in.OutputVariableFilepaths)
	if err != nil {
		return nil, err
	}
	images, err := domain.CheckFilePathMap("outputImageFilepaths", in.OutputImageFilepaths)
	if err != nil {
		return nil, err
	}
	if err := domain.CheckJSONSize("agentMetadata", in.AgentMetadata); err != nil {
		return nil, err
	}
	var w *domain.Worker
	err = s.tx(ctx, func(tx *app.Tx) error {
		// Lock order: the planner, then its worker (as CreateWorker).
		w0, err := tx.Routing.WorkersByIDs(ctx, []string{id})
		if err != nil {
			return err
		}
		if len(w0) == 0 {
			return &domain.Error{Code: domain.CodeNotFound, Field: "id", Message: "worker not found"}
		}
		var pl *domain.Planner
		if in.TaskStatus != nil {
			if pl, err = plannerForUpdate(ctx, tx, p, w0[0].PlannerID, "id"); err != nil {
				return err
			}
		}
		if w, err = workerForUpdate(ctx, tx, p, id, "id"); err != nil {
			return err
		}
		if next != nil {
			w.NextTask = next
		}
		if result != nil {
			w.TaskResult = result
		}
		if vars != nil {
			w.OutputVariableFilepaths = vars
		}
		if images != nil {
			w.OutputImageFilepaths = images
		}
		if in.AgentMetadata != nil {
			w.AgentMetadata = defaultJSON(in.AgentMetadata, "{}")
		}
		now := s.now()
		w.UpdatedAt = now
		if in.TaskStatus != nil {
			from, to := w.TaskStatus, *in.TaskStatus
			if err := domain.CheckWorkerTransition(from, to); err != nil {
				return err
			}
			if from == domain.WorkerFailedValidation && to == domain.WorkerPending {
				w.CurrentAttempt++
			}
			w.TaskStatus = to
			tx.Record(domain.NewWorkerStatusChanged(w, from, now))
			if to == domain.WorkerFailedValidation {
				if err := s.countFailure(ctx, tx, pl, now); err != nil {
					return err
				}
			}
		}
		return tx.Routing.UpdateWorker(ctx, w)
	})
	if err != nil {
		return nil, err
	}
	return w, nil
}

// countFailure counts a worker's FAILED_VALIDATION against its planner (locked
// by the caller) and fails the planner when the count reaches its limit.
func (s *Service) countFailure(ctx context.Context, tx *app.Tx, pl *domain.Planner, now time.Time) error {
	pl.FailedTaskCount++
	pl.UpdatedAt = now
	if pl.FailedTaskCount >= pl.FailedTaskLimit && !pl.Status.Final() {
		from := pl.Status
		pl.Status = domain.PlannerFailed
		tx.Record(domain.NewPlannerStatusChanged(pl, from,
			fmt.Sprintf("%d failed tasks reached the failed-task limit of %d", pl.FailedTaskCount, pl.FailedTaskLimit), now))
	}
	return tx.Routing.UpdatePlanner(ctx, pl)
}

// AddAgentMessage adds a message with JSON content to a planner or a worker.
func (s *Service) AddAgentMessage(ctx context.Context, in domain.AddAgentMessageInput) (*domain.AgentMessage, error) {
	p, err := writer(ctx)
	if err != nil {
		return nil, err
	}
	kind, id, field, err := oneOwner(in.PlannerID, in.WorkerID, nil)
	if err != nil {
		return nil, err
	}
	if !in.Role.Valid() {
		return nil, domain.InputError("role", "unknown message role %q", in.Role)
	}
	if len(in.Content) == 0 || string(in.Content) == "null" {
		return nil, domain.InputError("content", "content must not be empty")
	}
	if len(in.Content) > domain.MaxMessageContent {
		return nil, domain.InputError("content", "content is larger than %d bytes", domain.MaxMessageContent)
	}
	m := &domain.AgentMessage{ID: app.NewID(), OwnerID: id, Role: in.Role, Content: in.Content, CreatedAt: s.now()}
	err = s.tx(ctx, func(tx *app.Tx) error {
		projectID, err := ownerProject(ctx, tx, p, kind, id, field)
		if err != nil {
			return err
		}
		m.ProjectID = projectID
		return tx.Routing.InsertAgentMessage(ctx, kind, m)
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// ownerProject locks a planner or worker the caller may see and returns its project.
func ownerProject(ctx context.Context, tx *app.Tx, p *auth.Principal, kind domain.Kind, id, field string) (string, error) {
	switch kind {
	case domain.KindRouter:
		r, err := routerForUpdate(ctx, tx, p, id, field)
		if err != nil {
			return "", err
		}
		return r.ProjectID, nil
	case domain.KindPlanner:
		pl, err := plannerForUpdate(ctx, tx, p, id, field)
		if err != nil {
			return "", err
		}
		return pl.ProjectID, nil
	default:
		w, err := workerForUpdate(ctx, tx, p, id, field)
		if err != nil {
			return "", err
		}
		return w.ProjectID, nil
	}
}

// oneOwner decodes the one of plannerId, workerId (and routerId) given.
func oneOwner(plannerID, workerID, routerID *string) (domain.Kind, string, string, error) {
	var (
		kind  domain.Kind
		gid   *string
		field string
		n     int
	)
	for _, o := range []struct {
		kind  domain.Kind
		gid   *string
		field string
	}{{domain.KindRouter, routerID, "routerId"}, {domain.KindPlanner, plannerID, "plannerId"}, {domain.KindWorker, workerID, "workerId"}} {
		if o.gid != nil {
			kind, gid, field = o.kind, o.gid, o.field
			n++
		}
	}
	if n != 1 {
		names := "plannerId or workerId"
		if routerID != nil || (plannerID == nil && workerID == nil) {
			names = "routerId, plannerId or workerId"
		}
		return "", "", "", domain.InputError("plannerId", "give exactly one of %s", names)
	}
	id, err := domain.DecodeID(kind, *gid, field)
	return kind, id, field, err
}

// ClearAgentMessages deletes every message of a router, a planner or a
// worker and returns how many it deleted. Links of planners to a router's
// cleared messages stay, as links to the router.
func (s *Service) ClearAgentMessages(ctx context.Context, in domain.ClearAgentMessagesInput) (int, error) {
	p, err := writer(ctx)
	if err != nil {
		return 0, err
	}
	kind, id, field, err := oneOwner(in.PlannerID, in.WorkerID, in.RouterID)
	if err != nil {
		return 0, err
	}
	n := 0
	err = s.tx(ctx, func(tx *app.Tx) error {
		if _, err := ownerProject(ctx, tx, p, kind, id, field); err != nil {
			return err
		}
		if kind == domain.KindRouter {
			n, err = tx.Routing.DeleteRouterMessages(ctx, id)
		} else {
			n, err = tx.Routing.DeleteAgentMessages(ctx, kind, id)
		}
		return err
	})
	return n, err
}
