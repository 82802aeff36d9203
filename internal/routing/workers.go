package routing

import (
	"context"
	"fmt"

	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/domain"
)

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
	if err := domain.CheckTaskContext(in.TaskContext); err != nil {
		return nil, err
	}
	if err := domain.CheckTables(in.Tables); err != nil {
		return nil, err
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
// planner becomes FAILED in the same transaction. A finished planner's
// workers are not moved back to work (CONFLICT), and their failures no
// longer count, so the count never passes the limit.
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
	failing := in.TaskStatus != nil && *in.TaskStatus == domain.WorkerFailedValidation
	if !failing && (in.FailedCriteria != nil || in.Message != nil) {
		return nil, domain.InputError("failedCriteria", "failedCriteria and message go with taskStatus FAILED_VALIDATION")
	}
	criteria, err := domain.CheckList("failedCriteria", in.FailedCriteria, maxWorkerList, domain.MaxListEntry)
	if err != nil {
		return nil, err
	}
	message, err := domain.CheckOptText("message", in.Message, domain.MaxDescription)
	if err != nil {
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
			// A finished planner takes no more work: its workers are not
			// retried nor started (the outcome of one in progress is still
			// recorded, and no longer counted).
			if pl.Status.Final() && (to == domain.WorkerPending || to == domain.WorkerInProgress) {
				return &domain.Error{Code: domain.CodeConflict, Field: "id",
					Message: fmt.Sprintf("the planner is %s: its workers are not retried", pl.Status),
					Details: map[string]any{"status": string(pl.Status)}}
			}
			if from == domain.WorkerFailedValidation && to == domain.WorkerPending {
				w.CurrentAttempt++
			}
			w.TaskStatus = to
			tx.Record(domain.NewWorkerStatusChanged(w, from, now))
			if to == domain.WorkerFailedValidation {
				if criteria == nil {
					criteria = []string{}
				}
				w.Failures = w.Failures.Add(domain.WorkerFailure{Attempt: w.CurrentAttempt, FailedCriteria: criteria, Message: message, At: now})
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
