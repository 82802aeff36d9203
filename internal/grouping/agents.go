package grouping

import (
	"context"
	"errors"

	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/store"
)

// RegisterTaskAgent registers a task agent for a task list or for the
// project's evaluation queue: one live (ACTIVE or PAUSED) agent per each.
func (s *Service) RegisterTaskAgent(ctx context.Context, in domain.RegisterTaskAgentInput) (*domain.TaskAgentInstance, error) {
	p, err := writer(ctx)
	if err != nil {
		return nil, err
	}
	pr, err := s.project(ctx, p, in.ProjectID, "projectId")
	if err != nil {
		return nil, err
	}
	queue := deref(in.IsEvaluationQueue)
	if (in.TaskListID != nil) == queue {
		return nil, domain.InputError("taskListId", "give either taskListId or isEvaluationQueue: true")
	}
	var listID *string
	if in.TaskListID != nil {
		id, err := domain.DecodeID(domain.KindTaskList, *in.TaskListID, "taskListId")
		if err != nil {
			return nil, err
		}
		l, err := s.core.Lists.TaskListByID(ctx, &id)
		if err != nil && !isNotFound(err) {
			return nil, err
		}
		if l == nil || l.ProjectID != pr.ID {
			return nil, domain.NotFound("TaskList")
		}
		listID = &id
	}
	for field, v := range map[string]*string{"telegramChannelId": in.TelegramChannelID, "telegramBotToken": in.TelegramBotToken} {
		if _, err := domain.CheckText(field, deref(v), 500, false); err != nil {
			return nil, err
		}
	}
	a := &domain.TaskAgentInstance{ID: app.NewID(), ProjectID: pr.ID, TaskListID: listID, IsEvaluationQueue: queue,
		TelegramChannelID: in.TelegramChannelID, TelegramBotToken: in.TelegramBotToken, Status: domain.TaskAgentActive}
	err = s.tx(ctx, func(tx *app.Tx) error {
		now, err := dbNow(ctx, tx)
		if err != nil {
			return err
		}
		a.CreatedAt, a.UpdatedAt, a.LastHeartbeatAt = now, now, &now
		return tx.Grouping.InsertTaskAgent(ctx, a)
	})
	if errors.Is(err, store.ErrUnique) {
		what := "the task list"
		if queue {
			what = "the project's evaluation queue"
		}
		return nil, domain.Errorf(domain.CodeConflict, "%s already has an active or paused task agent", what)
	}
	return a, err
}

// changeAgent applies fn to a visible task agent under a row lock.
func (s *Service) changeAgent(ctx context.Context, gid string, fn func(a *domain.TaskAgentInstance, tx *app.Tx) error) (*domain.TaskAgentInstance, error) {
	p, err := writer(ctx)
	if err != nil {
		return nil, err
	}
	id, err := domain.DecodeID(domain.KindTaskAgent, gid, "id")
	if err != nil {
		return nil, err
	}
	a0, err := s.TaskAgentByID(ctx, &id)
	if err != nil {
		return nil, err
	}
	if a0 == nil {
		return nil, domain.NotFound("TaskAgentInstance")
	}
	if _, err := s.project(ctx, p, domain.GlobalID(domain.KindProject, a0.ProjectID), "id"); err != nil {
		return nil, domain.NotFound("TaskAgentInstance")
	}
	var a *domain.TaskAgentInstance
	err = s.tx(ctx, func(tx *app.Tx) error {
		var err error
		if a, err = tx.Grouping.TaskAgentForUpdate(ctx, id); err != nil {
			return err
		}
		if err := fn(a, tx); err != nil {
			return err
		}
		return tx.Grouping.UpdateTaskAgent(ctx, a)
	})
	return a, notFoundAs(err, "TaskAgentInstance")
}

// TaskAgentHeartbeat records a task agent's heartbeat (tasksProcessed is the
// number of tasks processed since the last heartbeat; error counts an error)
// and answers CONTINUE, PAUSE or CANCEL.
func (s *Service) TaskAgentHeartbeat(ctx context.Context, in domain.TaskAgentHeartbeatInput) (*domain.TaskAgentInstance, domain.AgentDirective, error) {
	if in.TasksProcessed != nil && (*in.TasksProcessed < 0 || *in.TasksProcessed > 1_000_000) {
		return nil, "", domain.InputError("tasksProcessed", "tasksProcessed must be between 0 and 1000000")
	}
	if _, err := domain.CheckText("error", deref(in.Error), 10_000, false); err != nil {
		return nil, "", err
	}
	a, err := s.changeAgent(ctx, in.ID, func(a *domain.TaskAgentInstance, tx *app.Tx) error {
		if a.Status == domain.TaskAgentTerminated {
			return nil // the directive says CANCEL; nothing changes
		}
		now, err := dbNow(ctx, tx)
		if err != nil {
			return err
		}
		a.LastHeartbeatAt, a.UpdatedAt = &now, now
		a.TasksProcessed += deref(in.TasksProcessed)
		if in.Error != nil && *in.Error != "" {
			a.ErrorCount++
			a.LastError = in.Error
		}
		return nil
	})
	if err != nil {
		return nil, "", err
	}
	return a, domain.TaskAgentDirective(a.Status), nil
}

// setAgentStatus moves a task agent from one of from to to.
func (s *Service) setAgentStatus(ctx context.Context, in domain.TaskAgentActionInput, to domain.TaskAgentStatus, from ...domain.TaskAgentStatus) (*domain.TaskAgentInstance, error) {
	if _, err := domain.CheckText("reason", deref(in.Reason), 10_000, false); err != nil {
		return nil, err
	}
	return s.changeAgent(ctx, in.ID, func(a *domain.TaskAgentInstance, tx *app.Tx) error {
		ok := false
		for _, f := range from {
			ok = ok || a.Status == f
		}
		if !ok {
			return &domain.Error{Code: domain.CodeInvalidTransition, Message: "the task agent is " + string(a.Status),
				Details: map[string]any{"from": string(a.Status), "to": string(to)}}
		}
		now, err := dbNow(ctx, tx)
		if err != nil {
			return err
		}
		a.Status, a.UpdatedAt = to, now
		if to == domain.TaskAgentTerminated {
			a.TerminatedAt = &now
			if in.Reason != nil {
				a.LastError = in.Reason
			}
		}
		return nil
	})
}

// PauseTaskAgent pauses an ACTIVE task agent.
func (s *Service) PauseTaskAgent(ctx context.Context, in domain.TaskAgentActionInput) (*domain.TaskAgentInstance, error) {
	return s.setAgentStatus(ctx, in, domain.TaskAgentPaused, domain.TaskAgentActive)
}

// ResumeTaskAgent resumes a PAUSED task agent.
func (s *Service) ResumeTaskAgent(ctx context.Context, in domain.TaskAgentActionInput) (*domain.TaskAgentInstance, error) {
	return s.setAgentStatus(ctx, in, domain.TaskAgentActive, domain.TaskAgentPaused)
}

// TerminateTaskAgent terminates a live task agent.
func (s *Service) TerminateTaskAgent(ctx context.Context, in domain.TaskAgentActionInput) (*domain.TaskAgentInstance, error) {
	return s.setAgentStatus(ctx, in, domain.TaskAgentTerminated, domain.TaskAgentActive, domain.TaskAgentPaused)
}

// SweepTaskAgents terminates live task agents silent for missed-heartbeats ×
// heartbeat-interval by the database clock; rows are taken FOR UPDATE SKIP
// LOCKED, so each is terminated once across replicas.
func (s *Service) SweepTaskAgents(ctx context.Context) (int, error) {
	n := 0
	err := s.tx(ctx, func(tx *app.Tx) error {
		n = 0
		now, err := dbNow(ctx, tx)
		if err != nil {
			return err
		}
		silence := s.opts.HeartbeatInterval * timeMultiple(s.opts.MissedHeartbeats)
		rows, err := tx.Grouping.SilentTaskAgentsForUpdate(ctx, now.Add(-silence), 200)
		if err != nil {
			return err
		}
		for _, a := range rows {
			reason := "no heartbeat for " + silence.String()
			a.Status, a.UpdatedAt, a.TerminatedAt, a.LastError = domain.TaskAgentTerminated, now, &now, &reason
			if err := tx.Grouping.UpdateTaskAgent(ctx, a); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	return n, err
}
