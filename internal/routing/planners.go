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
	if err := notArchived(r, "it takes no more planners"); err != nil {
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
		// A message of another router is not found here, whoever owns it:
		// the answer never tells that an id of another tenant exists.
		if len(ms) == 0 || ms[0].RouterID != r.ID {
			return nil, &domain.Error{Code: domain.CodeNotFound, Field: "messageId", Message: "router message not found"}
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
	workings, workers, err := checkWorkings(in.Workings)
	if err != nil {
		return nil, err
	}
	var validation *domain.PlannerRequestValidation
	if v := in.RequestValidation; v != nil {
		summary, err := domain.CheckText("requestValidation.progressSummary", v.ProgressSummary, domain.MaxDescription, true)
		if err != nil {
			return nil, err
		}
		validation = &domain.PlannerRequestValidation{UserRequestFulfilled: v.UserRequestFulfilled, ProgressSummary: summary}
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
		if workings != nil {
			if err := plannersWorkers(ctx, tx, pl.ID, workers); err != nil {
				return err
			}
			pl.Workings = workings
		}
		if validation != nil {
			pl.RequestValidation = validation
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

// countFailure counts a worker's FAILED_VALIDATION against its planner (locked
// by the caller) and fails the planner when the count reaches its limit. A
// finished planner counts no more: the count stops at the limit.
func (s *Service) countFailure(ctx context.Context, tx *app.Tx, pl *domain.Planner, now time.Time) error {
	if pl.Status.Final() {
		return nil
	}
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

// checkWorkings checks updatePlanner's workings: a title each, at most
// MaxWorkings, workers named by global id. It returns them, with each
// worker's row id, and the row ids to check against the planner (by
// index; "" where none is named). nil input: no change.
func checkWorkings(in []*domain.PlannerWorkingInput) (domain.PlannerWorkings, []string, error) {
	if in == nil {
		return nil, nil, nil
	}
	if len(in) > domain.MaxWorkings {
		return nil, nil, domain.InputError("workings", "at most %d workings", domain.MaxWorkings)
	}
	out := make(domain.PlannerWorkings, len(in))
	workers := make([]string, len(in))
	for i, w := range in {
		f := func(name string) string { return fmt.Sprintf("workings[%d].%s", i, name) }
		title, err := domain.CheckText(f("title"), w.Title, domain.MaxName, true)
		if err != nil {
			return nil, nil, err
		}
		desc, err := domain.CheckOptText(f("description"), w.Description, domain.MaxDescription)
		if err != nil {
			return nil, nil, err
		}
		outcome, err := domain.CheckOptText(f("outcome"), w.Outcome, domain.MaxDescription)
		if err != nil {
			return nil, nil, err
		}
		out[i] = domain.PlannerWorking{Title: title, Description: desc, Outcome: outcome}
		if w.WorkerID != nil {
			id, err := domain.DecodeID(domain.KindWorker, *w.WorkerID, f("workerId"))
			if err != nil {
				return nil, nil, err
			}
			out[i].WorkerID, workers[i] = &id, id
		}
	}
	return out, workers, nil
}

// plannersWorkers checks that the workers named (by index) are the
// planner's: another's, or none, is NOT_FOUND on workings[i].workerId.
func plannersWorkers(ctx context.Context, tx *app.Tx, plannerID string, workers []string) error {
	var ids []string
	for _, id := range workers {
		if id != "" {
			ids = append(ids, id)
		}
	}
	found, err := tx.Routing.WorkersByIDs(ctx, ids)
	if err != nil {
		return err
	}
	mine := map[string]bool{}
	for _, w := range found {
		mine[w.ID] = w.PlannerID == plannerID
	}
	for i, id := range workers {
		if id != "" && !mine[id] {
			return &domain.Error{Code: domain.CodeNotFound, Field: fmt.Sprintf("workings[%d].workerId", i), Message: "the planner has no such worker"}
		}
	}
	return nil
}
