package sessions

import (
	"context"
	"errors"
	"fmt"

	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/auth"
	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/service"
	"github.com/taskgraph/taskgraph/internal/store"
)

// CreateAgentSession opens a session in a project, at state version 1 (the
// given state, default {}). With agentId it belongs to that build agent's
// task and run; with taskId alone, to that task.
func (s *Service) CreateAgentSession(ctx context.Context, in domain.CreateAgentSessionInput) (*domain.AgentSession, error) {
	p, err := app.Caller(ctx)
	if err != nil {
		return nil, err
	}
	project, err := s.visibleProject(ctx, p, in.ProjectID, "projectId")
	if err != nil {
		return nil, err
	}
	mission, err := domain.CheckText("mission", in.Mission, domain.MaxMissionLen, true)
	if err != nil {
		return nil, err
	}
	profile := "dev"
	if in.Profile != nil {
		if profile, err = domain.CheckText("profile", *in.Profile, domain.MaxProfileLen, true); err != nil {
			return nil, err
		}
	}
	state := domain.JSON(`{}`)
	if in.State != nil && len(*in.State) > 0 && string(*in.State) != "null" {
		state = *in.State
	}
	if err := domain.CheckStateSize("state", state); err != nil {
		return nil, err
	}
	taskID, err := domain.DecodeOptionalID(domain.KindTask, in.TaskID, "taskId")
	if err != nil {
		return nil, fieldNotFound(err, "taskId")
	}
	agentID, err := domain.DecodeOptionalID(domain.KindBuildAgent, in.AgentID, "agentId")
	if err != nil {
		return nil, fieldNotFound(err, "agentId")
	}
	now := s.now()
	sess := &domain.AgentSession{ID: app.NewID(), ProjectID: project.ID, UserID: p.UserID, Mission: mission,
		Status: domain.SessionPending, Profile: profile, TaskID: taskID, State: state, StateVersion: 1,
		CreatedAt: now, UpdatedAt: now}
	err = s.tx(ctx, func(tx *app.Tx) error {
		if agentID != nil {
			agents, err := tx.Runs.AgentsByIDs(ctx, []string{*agentID})
			if err != nil {
				return err
			}
			var runs []*domain.ExecutionRun
			if len(agents) == 1 {
				if runs, err = tx.Runs.RunsByIDs(ctx, []string{agents[0].RunID}); err != nil {
					return err
				}
			}
			if len(runs) != 1 || runs[0].ProjectID != project.ID {
				return &domain.Error{Code: domain.CodeNotFound, Field: "agentId", Message: "build agent not found in this project"}
			}
			a := agents[0]
			if err := service.FenceAgent(a, p); err != nil {
				return err
			}
			if taskID != nil && *taskID != a.TaskID {
				return domain.InputError("taskId", "the agent works on another task")
			}
			sess.AgentID, sess.RunID, sess.TaskID = &a.ID, &a.RunID, &a.TaskID
		} else if taskID != nil {
			tasks, err := tx.Tasks.TasksByIDs(ctx, []string{*taskID})
			if err != nil {
				return err
			}
			if len(tasks) != 1 || tasks[0].ProjectID != project.ID {
				return &domain.Error{Code: domain.CodeNotFound, Field: "taskId", Message: "task not found in this project"}
			}
		}
		if err := tx.Sessions.InsertSession(ctx, sess); err != nil {
			return err
		}
		if err := tx.Sessions.InsertState(ctx, &domain.AgentSessionState{ID: app.NewID(), SessionID: sess.ID,
			Version: 1, State: state, CreatedAt: now}); err != nil {
			return err
		}
		tx.Record(domain.SessionEvent(sess, domain.EventSessionStateSaved, now, &domain.SessionStateSavedEvent{Version: 1}))
		return nil
	})
	if err != nil {
		return nil, err
	}
	return sess, nil
}

// SetAgentSessionStatus moves a session PENDING → IN_PROGRESS → COMPLETED |
// FAILED; any other move is INVALID_TRANSITION.
func (s *Service) SetAgentSessionStatus(ctx context.Context, in domain.SetAgentSessionStatusInput) (*domain.AgentSession, error) {
	p, err := app.Caller(ctx)
	if err != nil {
		return nil, err
	}
	var sess *domain.AgentSession
	err = s.tx(ctx, func(tx *app.Tx) error {
		var err error
		if sess, err = lockSession(ctx, tx, p, in.ID, "id"); err != nil {
			return err
		}
		if err := fenced(ctx, tx, p, sess); err != nil {
			return err
		}
		from := sess.Status
		if err := domain.CheckSessionTransition(from, in.Status); err != nil {
			return err
		}
		now := s.now()
		if err := tx.Sessions.SetSessionStatus(ctx, sess.ID, in.Status, now); err != nil {
			return err
		}
		sess.Status, sess.UpdatedAt = in.Status, now
		tx.Record(domain.SessionEvent(sess, domain.EventSessionStatusChanged, now,
			&domain.SessionStatusChangedEvent{From: from, To: in.Status}))
		return nil
	})
	if err != nil {
		return nil, err
	}
	return sess, nil
}

// fenced refuses a write to sess by a caller that is not its build agent's
// claimer: the agent calls' token fence (service.FenceAgentID), LEASE_LOST.
// A session without an agent is open to every writer of its project.
func fenced(ctx context.Context, tx *app.Tx, p *auth.Principal, sess *domain.AgentSession) error {
	if sess.AgentID == nil {
		return nil
	}
	return service.FenceAgentID(ctx, tx.Q, p, *sess.AgentID)
}

// writable refuses a write to sess that its build agent's fence does not
// allow (LEASE_LOST), or that a finished session takes no more: a COMPLETED
// or FAILED session refuses state, steps, todo lists and lessons (CONFLICT,
// field, extensions.status).
func writable(ctx context.Context, tx *app.Tx, p *auth.Principal, sess *domain.AgentSession, field string) error {
	if err := fenced(ctx, tx, p, sess); err != nil {
		return err
	}
	if sess.Status == domain.SessionCompleted || sess.Status == domain.SessionFailed {
		return &domain.Error{Code: domain.CodeConflict, Field: field,
			Message: fmt.Sprintf("the session is %s: it takes no more writes", sess.Status),
			Details: map[string]any{"status": string(sess.Status)}}
	}
	return nil
}

// versionConflict is the answer to a stale expectedVersion.
func versionConflict(what string, current int) error {
	return &domain.Error{Code: domain.CodeVersionConflict, Field: "expectedVersion",
		Message: fmt.Sprintf("the %s changed: it is at version %d", what, current),
		Details: map[string]any{"currentVersion": current}}
}

// SaveAgentSessionState stores a new version of a session's state: a
// compare-and-swap on the latest version. It stores version expected+1 — the
// whole state given, or the latest with the merge patch applied — or fails
// VERSION_CONFLICT (extensions.currentVersion) having stored nothing.
func (s *Service) SaveAgentSessionState(ctx context.Context, in domain.SaveAgentSessionStateInput) (*domain.AgentSession, *domain.AgentSessionState, error) {
	p, err := app.Caller(ctx)
	if err != nil {
		return nil, nil, err
	}
	hasState, hasPatch := in.State != nil && len(*in.State) > 0, in.Patch != nil && len(*in.Patch) > 0
	switch {
	case hasState == hasPatch:
		return nil, nil, domain.InputError("state", "give exactly one of state (the whole state) and patch (a JSON merge patch)")
	case hasState:
		if err := domain.CheckStateSize("state", *in.State); err != nil {
			return nil, nil, err
		}
	default:
		if err := domain.CheckStateSize("patch", *in.Patch); err != nil {
			return nil, nil, err
		}
	}
	var (
		sess *domain.AgentSession
		snap *domain.AgentSessionState
	)
	err = s.tx(ctx, func(tx *app.Tx) error {
		var err error
		if sess, err = lockSession(ctx, tx, p, in.SessionID, "sessionId"); err != nil {
			return err
		}
		if err := writable(ctx, tx, p, sess, "sessionId"); err != nil {
			return err
		}
		if in.ExpectedVersion != sess.StateVersion {
			return versionConflict("session state", sess.StateVersion)
		}
		next := domain.JSON(nil)
		if hasState {
			next = *in.State
		} else {
			if next, err = domain.MergePatch(sess.State, *in.Patch); err != nil {
				return err
			}
			if err := domain.CheckStateSize("patch", next); err != nil {
				return err
			}
		}
		now := s.now()
		snap = &domain.AgentSessionState{ID: app.NewID(), SessionID: sess.ID, Version: sess.StateVersion + 1, State: next, CreatedAt: now}
		if err := tx.Sessions.SwapState(ctx, snap, in.ExpectedVersion); errors.Is(err, store.ErrVersionMoved) {
			return versionConflict("session state", sess.StateVersion) // the row lock makes this unreachable
		} else if err != nil {
			return err
		}
		sess.State, sess.StateVersion, sess.UpdatedAt = next, snap.Version, now
		tx.Record(domain.SessionEvent(sess, domain.EventSessionStateSaved, now, &domain.SessionStateSavedEvent{Version: snap.Version}))
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return sess, snap, nil
}

// PruneAgentSessionStates deletes a session's snapshots but the newest
// keepLast (at least 1, so the latest state always stays) and says how many
// it deleted.
func (s *Service) PruneAgentSessionStates(ctx context.Context, in domain.PruneAgentSessionStatesInput) (int, error) {
	p, err := app.Caller(ctx)
	if err != nil {
		return 0, err
	}
	if in.KeepLast < 1 {
		return 0, domain.InputError("keepLast", "keepLast must be at least 1")
	}
	var deleted int
	err = s.tx(ctx, func(tx *app.Tx) error {
		sess, err := lockSession(ctx, tx, p, in.SessionID, "sessionId")
		if err != nil {
			return err
		}
		if err := fenced(ctx, tx, p, sess); err != nil {
			return err
		}
		deleted, err = tx.Sessions.PruneStates(ctx, sess.ID, in.KeepLast)
		return err
	})
	return deleted, err
}

// CreateTodoList gives a session a new plan, abandoning its ACTIVE one in the
// same transaction. Positions are 0..n-1 in input order; dependencies name
// other positions and are acyclic.
func (s *Service) CreateTodoList(ctx context.Context, in domain.CreateTodoListInput) (*domain.TodoList, error) {
	p, err := app.Caller(ctx)
	if err != nil {
		return nil, err
	}
	items, err := domain.NewTodoItems(in.Items)
	if err != nil {
		return nil, err
	}
	var mission *string
	if in.Mission != nil {
		m, err := domain.CheckText("mission", *in.Mission, domain.MaxMissionLen, true)
		if err != nil {
			return nil, err
		}
		mission = &m
	}
	var list *domain.TodoList
	err = s.tx(ctx, func(tx *app.Tx) error {
		sess, err := lockSession(ctx, tx, p, in.SessionID, "sessionId")
		if err != nil {
			return err
		}
		if err := writable(ctx, tx, p, sess, "sessionId"); err != nil {
			return err
		}
		now := s.now()
		if _, err := tx.Sessions.SetTodoListsStatus(ctx, sess.ID, domain.TodoListActive, domain.TodoListAbandoned, now); err != nil {
			return err
		}
		list = &domain.TodoList{ID: app.NewID(), SessionID: sess.ID, Mission: sess.Mission, Status: domain.TodoListActive,
			Version: 1, Items: items, CreatedAt: now, UpdatedAt: now}
		if mission != nil {
			list.Mission = *mission
		}
		if err := tx.Sessions.InsertTodoList(ctx, list); err != nil {
			return err
		}
		tx.Record(domain.SessionEvent(sess, domain.EventTodoListCreated, now,
			&domain.TodoListCreatedEvent{TodoListID: list.ID, ItemCount: len(items)}))
		return nil
	})
	if err != nil {
		return nil, err
	}
	return list, nil
}

// UpdateTodoItem changes one item of a list: its status (along the item
// lifecycle, see domain.MoveTodoItem), its chosen tool, its execution result.
// Every change raises the list's version; expectedVersion, when given, is a
// compare-and-swap. The list becomes COMPLETED when every item is COMPLETED
// or SKIPPED.
func (s *Service) UpdateTodoItem(ctx context.Context, in domain.UpdateTodoItemInput) (*domain.TodoList, error) {
	p, err := app.Caller(ctx)
	if err != nil {
		return nil, err
	}
	if in.Status == nil && in.ChosenTool == nil && in.ExecutionResult == nil {
		return nil, domain.InputError("status", "give status, chosenTool or executionResult")
	}
	var tool *string
	if in.ChosenTool != nil {
		t, err := domain.CheckText("chosenTool", *in.ChosenTool, domain.MaxToolNameLen, true)
		if err != nil {
			return nil, err
		}
		tool = &t
	}
	var result *domain.ToolExecutionResult
	if r := in.ExecutionResult; r != nil {
		result = &domain.ToolExecutionResult{Success: r.Success, DurationMs: r.DurationMs}
		if r.Output != nil && string(*r.Output) != "null" {
			if len(*r.Output) > domain.MaxStepJSONBytes {
				return nil, &domain.Error{Code: domain.CodeLimitExceeded, Field: "executionResult.output",
					Message: fmt.Sprintf("at most %d bytes", domain.MaxStepJSONBytes)}
			}
			result.Output = *r.Output
		}
		if result.Error, err = domain.CheckOptText("executionResult.error", r.Error, domain.MaxStepTextLen); err != nil {
			return nil, err
		}
		if r.DurationMs != nil && !(*r.DurationMs >= 0) {
			return nil, domain.InputError("executionResult.durationMs", "must not be negative")
		}
	}
	listID, err := domain.DecodeID(domain.KindTodoList, in.TodoListID, "todoListId")
	if err != nil {
		return nil, fieldNotFound(err, "todoListId")
	}
	var list *domain.TodoList
	err = s.tx(ctx, func(tx *app.Tx) error {
		var err error
		if list, err = tx.Sessions.TodoListForUpdate(ctx, listID); err != nil {
			return fieldNotFound(app.NotFound(err, "todo list"), "todoListId")
		}
		found, err := tx.Sessions.SessionsByIDs(ctx, []string{list.SessionID})
		if err != nil {
			return err
		}
		if len(found) != 1 {
			return &domain.Error{Code: domain.CodeNotFound, Field: "todoListId", Message: "todo list not found"}
		}
		sess := found[0]
		if ok, err := app.CanSeeProjectID(ctx, tx.Q, p, sess.ProjectID); err != nil {
			return err
		} else if !ok {
			return &domain.Error{Code: domain.CodeNotFound, Field: "todoListId", Message: "todo list not found"}
		}
		if err := writable(ctx, tx, p, sess, "todoListId"); err != nil {
			return err
		}
		if in.Position < 0 || in.Position >= len(list.Items) {
			return domain.InputError("position", "position must be between 0 and %d", len(list.Items)-1)
		}
		if in.ExpectedVersion != nil && *in.ExpectedVersion != list.Version {
			return versionConflict("todo list", list.Version)
		}
		if list.Status == domain.TodoListAbandoned {
			return &domain.Error{Code: domain.CodeConflict, Field: "todoListId",
				Message: "the todo list was abandoned for a newer one"}
		}
		it := list.Items[in.Position]
		from := it.Status
		if in.Status != nil {
			if err := domain.MoveTodoItem(list.Items, in.Position, *in.Status); err != nil {
				return err
			}
		}
		if tool != nil {
			it.ChosenTool = tool
		}
		if result != nil {
			it.ExecutionResult = result
		}
		now := s.now()
		list.Version++
		list.UpdatedAt = now
		if list.Status == domain.TodoListActive && domain.TodoItemsDone(list.Items) {
			list.Status = domain.TodoListCompleted
		}
		if err := tx.Sessions.UpdateTodoList(ctx, list); err != nil {
			return err
		}
		tx.Record(domain.SessionEvent(sess, domain.EventTodoItemChanged, now, &domain.TodoItemChangedEvent{
			TodoListID: list.ID, Position: in.Position, From: from, To: it.Status, ListVersion: list.Version, ListStatus: list.Status}))
		return nil
	})
	if err != nil {
		return nil, err
	}
	return list, nil
}

// RecordReActStep appends a step to a session. Its stepId is the session's
// next number, taken under the session's row lock: 1..N, gapless, in commit
// order, whatever runs concurrently. It checks no state version, so it never
// conflicts with state saves.
func (s *Service) RecordReActStep(ctx context.Context, in domain.RecordReActStepInput) (*domain.ReActStep, error) {
	p, err := app.Caller(ctx)
	if err != nil {
		return nil, err
	}
	id, err := domain.DecodeID(domain.KindAgentSession, in.SessionID, "sessionId")
	if err != nil {
		return nil, fieldNotFound(err, "sessionId")
	}
	step := &domain.ReActStep{ID: app.NewID(), SessionID: id, ActionType: in.ActionType, Success: in.Success}
	for _, f := range []struct {
		name string
		in   *string
		out  **string
	}{{"thought", in.Thought, &step.Thought}, {"action", in.Action, &step.Action}, {"error", in.Error, &step.Error}} {
		if f.in != nil && len(*f.in) > domain.MaxStepTextLen {
			return nil, &domain.Error{Code: domain.CodeLimitExceeded, Field: f.name,
				Message: fmt.Sprintf("%s is at most %d bytes", f.name, domain.MaxStepTextLen)}
		}
		*f.out = f.in
	}
	for _, f := range []struct {
		name string
		in   *domain.JSON
		out  *domain.JSON
	}{{"actionData", in.ActionData, &step.ActionData}, {"observation", in.Observation, &step.Observation}} {
		if f.in == nil || string(*f.in) == "null" {
			continue
		}
		if len(*f.in) > domain.MaxStepJSONBytes {
			return nil, &domain.Error{Code: domain.CodeLimitExceeded, Field: f.name,
				Message: fmt.Sprintf("%s is at most %d bytes", f.name, domain.MaxStepJSONBytes)}
		}
		*f.out = *f.in
	}
	err = s.tx(ctx, func(tx *app.Tx) error {
		now := s.now()
		sess, err := tx.Sessions.NextStepID(ctx, id, now)
		if err != nil {
			return fieldNotFound(app.NotFound(err, "agent session"), "sessionId")
		}
		if ok, err := app.CanSeeProjectID(ctx, tx.Q, p, sess.ProjectID); err != nil {
			return err
		} else if !ok {
			return &domain.Error{Code: domain.CodeNotFound, Field: "sessionId", Message: "agent session not found"}
		}
		// The step's number was taken above: a refusal rolls it back.
		if err := writable(ctx, tx, p, sess, "sessionId"); err != nil {
			return err
		}
		step.StepID, step.Timestamp = sess.LastStepID, now
		if err := tx.Sessions.InsertStep(ctx, step); err != nil {
			return err
		}
		tx.Record(domain.NewReActStepRecorded(sess, step, now))
		return nil
	})
	if err != nil {
		return nil, err
	}
	return step, nil
}
