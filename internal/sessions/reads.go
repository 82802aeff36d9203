package sessions

import (
	"context"
	"errors"
	"log/slog"

	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/auth"
	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/loader"
	"github.com/taskgraph/taskgraph/internal/store"
)

// loaders are the request's batched reads of session entities, cleared with
// the request's other loaders after every write.
type loaders struct {
	sessions       *loader.Loader[string, *domain.AgentSession]
	states         *loader.Loader[string, *domain.AgentSessionState]
	lists          *loader.Loader[string, *domain.TodoList]
	steps          *loader.Loader[string, *domain.ReActStep]
	lessons        *loader.Loader[string, *domain.Lesson]
	listsOfSession *loader.Loader[string, []*domain.TodoList]
	sessOfAgent    *loader.Loader[string, []*domain.AgentSession]
	all            []app.Clearer
}

type loadersKey struct{}

func newLoaders(s *Service, w loader.Timing) *loaders {
	q := &s.db.Q
	l := &loaders{}
	l.sessions = loader.New(w, app.ByID(q.Sessions.SessionsByIDs, func(v *domain.AgentSession) string { return v.ID }))
	l.states = loader.New(w, app.ByID(q.Sessions.StatesByIDs, func(v *domain.AgentSessionState) string { return v.ID }))
	l.lists = loader.New(w, app.ByID(q.Sessions.TodoListsByIDs, func(v *domain.TodoList) string { return v.ID }))
	l.steps = loader.New(w, app.ByID(q.Sessions.StepsByIDs, func(v *domain.ReActStep) string { return v.ID }))
	l.lessons = loader.New(w, app.ByID(q.Sessions.LessonsByIDs, func(v *domain.Lesson) string { return v.ID }))
	l.listsOfSession = loader.New(w, app.GroupedBy(q.Sessions.TodoListsBySessions, func(v *domain.TodoList) string { return v.SessionID }))
	l.sessOfAgent = loader.New(w, app.GroupedBy(q.Sessions.SessionsByAgents, func(v *domain.AgentSession) string { return deref(v.AgentID) }))
	l.all = []app.Clearer{l.sessions, l.states, l.lists, l.steps, l.lessons, l.listsOfSession, l.sessOfAgent}
	return l
}

// Clear forgets every cached read.
func (l *loaders) Clear() {
	for _, c := range l.all {
		c.Clear()
	}
}

// load returns the request's session loaders.
func (s *Service) load(ctx context.Context) *loaders {
	return app.Set(ctx, loadersKey{}, func(w loader.Timing) *loaders { return newLoaders(s, w) })
}

// AgentSession finds a session by global id; nil when absent or not visible.
func (s *Service) AgentSession(ctx context.Context, gid string) (*domain.AgentSession, error) {
	p, err := app.Caller(ctx)
	if err != nil {
		return nil, err
	}
	id, err := domain.DecodeID(domain.KindAgentSession, gid, "id")
	if domain.ErrorCode(err) == domain.CodeNotFound {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	return s.visibleSession(ctx, p, id, true)
}

// visibleSession loads a session, nil when absent or not visible; get reads
// at once (an entry point) rather than in a batch.
func (s *Service) visibleSession(ctx context.Context, p *auth.Principal, id string, get bool) (*domain.AgentSession, error) {
	var sess *domain.AgentSession
	var err error
	if get {
		sess, err = s.load(ctx).sessions.Get(ctx, id)
	} else {
		sess, err = s.load(ctx).sessions.Load(ctx, id)
	}
	if err != nil || sess == nil {
		return nil, err
	}
	if ok, err := s.canSeeProject(ctx, p, sess.ProjectID); err != nil || !ok {
		return nil, err
	}
	return sess, nil
}

// AgentSessionsArgs are the arguments of the agentSessions query.
type AgentSessionsArgs struct {
	ProjectID string
	// Status keeps the sessions in these statuses (empty: all).
	Status []domain.AgentSessionStatus
	// TaskID and RunID, global ids, keep the sessions of that task or of that
	// run (opened for one of its build agents); either must be the project's
	// (NOT_FOUND naming the argument).
	TaskID, RunID *string
	Page          domain.PageArgs
}

// AgentSessions pages a project's sessions, newest first, filtered by
// status, task and run when given.
func (s *Service) AgentSessions(ctx context.Context, args AgentSessionsArgs) (domain.Page[*domain.AgentSession], error) {
	var none domain.Page[*domain.AgentSession]
	p, err := app.Caller(ctx)
	if err != nil {
		return none, err
	}
	project, err := s.visibleProject(ctx, p, args.ProjectID, "projectId")
	if err != nil {
		return none, err
	}
	if err := domain.CheckSessionStatusFilter(args.Status); err != nil {
		return none, err
	}
	sq := store.SessionQuery{ProjectID: project.ID, Status: args.Status, Page: args.Page}
	if sq.TaskID, err = s.taskOfProject(ctx, args.TaskID, project.ID); err != nil {
		return none, err
	}
	if sq.RunID, err = s.runOfProject(ctx, args.RunID, project.ID); err != nil {
		return none, err
	}
	pg, err := s.db.Sessions.Sessions(ctx, sq)
	if err != nil {
		return pg, err
	}
	for _, sess := range pg.Items {
		s.load(ctx).sessions.Prime(sess.ID, sess)
	}
	return pg, nil
}

// taskOfProject decodes the taskId argument: nil without one, NOT_FOUND
// (field taskId) unless it names a task of the project.
func (s *Service) taskOfProject(ctx context.Context, gid *string, projectID string) (*string, error) {
	id, err := domain.DecodeOptionalID(domain.KindTask, gid, "taskId")
	if err != nil || id == nil {
		return nil, fieldNotFound(err, "taskId")
	}
	t, err := s.core.Tasks.TaskByID(ctx, id)
	if err != nil {
		return nil, err
	}
	if t == nil || t.ProjectID != projectID {
		return nil, &domain.Error{Code: domain.CodeNotFound, Field: "taskId", Message: "task not found in this project"}
	}
	return id, nil
}

// runOfProject decodes the runId argument: nil without one, NOT_FOUND
// (field runId) unless it names a run of the project.
func (s *Service) runOfProject(ctx context.Context, gid *string, projectID string) (*string, error) {
	id, err := domain.DecodeOptionalID(domain.KindExecutionRun, gid, "runId")
	if err != nil || id == nil {
		return nil, fieldNotFound(err, "runId")
	}
	r, err := s.core.Runs.RunByID(ctx, id)
	if err != nil {
		return nil, err
	}
	if r == nil || r.ProjectID != projectID {
		return nil, &domain.Error{Code: domain.CodeNotFound, Field: "runId", Message: "execution run not found in this project"}
	}
	return id, nil
}

// SessionByID loads a session for a nested field (its parent was shown).
func (s *Service) SessionByID(ctx context.Context, id *string) (*domain.AgentSession, error) {
	if id == nil {
		return nil, nil
	}
	return s.load(ctx).sessions.Load(ctx, *id)
}

// States pages a session's state snapshots, newest first.
func (s *Service) States(ctx context.Context, sessionID string, page domain.PageArgs) (domain.Page[*domain.AgentSessionState], error) {
	return app.NestedPage(ctx, s.db, "AgentSession.states", page, sessionID,
		func(ctx context.Context, q *store.Q, parents []string) (map[string]domain.Page[*domain.AgentSessionState], error) {
			return q.Sessions.StatesBySessions(ctx, parents, page)
		}, func(ctx context.Context, q *store.Q, parents []string) (map[string]int, error) {
			return q.Sessions.CountStatesBySessions(ctx, parents)
		})
}

// Steps pages a session's ReAct steps by stepId.
func (s *Service) Steps(ctx context.Context, sessionID string, page domain.PageArgs) (domain.Page[*domain.ReActStep], error) {
	return app.NestedPage(ctx, s.db, "AgentSession.steps", page, sessionID,
		func(ctx context.Context, q *store.Q, parents []string) (map[string]domain.Page[*domain.ReActStep], error) {
			return q.Sessions.StepsBySessions(ctx, parents, page)
		}, func(ctx context.Context, q *store.Q, parents []string) (map[string]int, error) {
			return q.Sessions.CountStepsBySessions(ctx, parents)
		})
}

// LessonsOfSession pages the lessons recorded in a session, oldest first (the
// session was shown, so its project, which is theirs, is visible).
func (s *Service) LessonsOfSession(ctx context.Context, sessionID string, page domain.PageArgs) (domain.Page[*domain.Lesson], error) {
	return app.NestedPage(ctx, s.db, "AgentSession.lessons", page, sessionID,
		func(ctx context.Context, q *store.Q, parents []string) (map[string]domain.Page[*domain.Lesson], error) {
			return q.Sessions.LessonsBySessions(ctx, parents, page)
		}, func(ctx context.Context, q *store.Q, parents []string) (map[string]int, error) {
			return q.Sessions.CountLessonsBySessions(ctx, parents)
		})
}

// TodoLists lists a session's todo lists, oldest first.
func (s *Service) TodoLists(ctx context.Context, sessionID string) ([]*domain.TodoList, error) {
	out, err := s.load(ctx).listsOfSession.Load(ctx, sessionID)
	if out == nil && err == nil {
		out = []*domain.TodoList{}
	}
	return out, err
}

// ActiveTodoList is a session's ACTIVE todo list, if any.
func (s *Service) ActiveTodoList(ctx context.Context, sessionID string) (*domain.TodoList, error) {
	lists, err := s.TodoLists(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	for _, l := range lists {
		if l.Status == domain.TodoListActive {
			return l, nil
		}
	}
	return nil, nil
}

// SessionsOfAgent lists a build agent's sessions, oldest first.
func (s *Service) SessionsOfAgent(ctx context.Context, agentID string) ([]*domain.AgentSession, error) {
	out, err := s.load(ctx).sessOfAgent.Load(ctx, agentID)
	if out == nil && err == nil {
		out = []*domain.AgentSession{}
	}
	return out, err
}

// LessonByID loads a lesson for an event's field; nil when not visible.
func (s *Service) LessonByID(ctx context.Context, id string) (*domain.Lesson, error) {
	p, err := app.Caller(ctx)
	if err != nil {
		return nil, err
	}
	return s.visibleLesson(ctx, p, id)
}

func (s *Service) visibleLesson(ctx context.Context, p *auth.Principal, id string) (*domain.Lesson, error) {
	l, err := s.load(ctx).lessons.Load(ctx, id)
	if err != nil || l == nil {
		return nil, err
	}
	if l.ProjectID != nil {
		if ok, err := s.canSeeProject(ctx, p, *l.ProjectID); err != nil || !ok {
			return nil, err
		}
	}
	return l, nil
}

// TodoListByID loads a todo list for an event's field.
func (s *Service) TodoListByID(ctx context.Context, id string) (*domain.TodoList, error) {
	return s.load(ctx).lists.Load(ctx, id)
}

// NodeOf loads a session entity by kind (an app.NodeSource) when the caller
// may see its project; ok is false for other kinds.
func (s *Service) NodeOf(ctx context.Context, p *auth.Principal, kind domain.Kind, id string) (domain.Node, bool, error) {
	var sessionID string
	var node domain.Node
	l := s.load(ctx)
	switch kind {
	case domain.KindAgentSession:
		sessionID = id
	case domain.KindAgentSessionState:
		v, err := l.states.Load(ctx, id)
		if err != nil || v == nil {
			return nil, true, err
		}
		sessionID, node = v.SessionID, v
	case domain.KindTodoList:
		v, err := l.lists.Load(ctx, id)
		if err != nil || v == nil {
			return nil, true, err
		}
		sessionID, node = v.SessionID, v
	case domain.KindReActStep:
		v, err := l.steps.Load(ctx, id)
		if err != nil || v == nil {
			return nil, true, err
		}
		sessionID, node = v.SessionID, v
	case domain.KindLesson:
		v, err := s.visibleLesson(ctx, p, id)
		if err != nil || v == nil {
			return nil, true, err
		}
		return v, true, nil
	default:
		return nil, false, nil
	}
	sess, err := s.visibleSession(ctx, p, sessionID, false)
	if err != nil || sess == nil {
		return nil, true, err
	}
	if node == nil {
		node = sess
	}
	return node, true, nil
}

// SessionEvents streams a session's events in commit order: the project's
// stream (the core's, with its replay and resume guarantees) filtered to the
// session. Without after, those committed from now on; with a cursor, every
// event of the session after it. onEnd receives the error that ends a stream
// early.
func (s *Service) SessionEvents(ctx context.Context, sessionGID string, after *string, types []domain.ExecutionEventType,
	onEnd func(error),
) (<-chan domain.ExecutionEvent, error) {
	sess, err := s.streamedSession(ctx, sessionGID)
	if err != nil {
		return nil, err
	}
	inner, err := s.core.Events.ProjectEvents(ctx, domain.GlobalID(domain.KindProject, sess.ProjectID), after, types, onEnd)
	if err != nil {
		return nil, projectGone(err)
	}
	out := make(chan domain.ExecutionEvent)
	go func() {
		defer close(out)
		for ev := range inner {
			if sid := ev.Record().SessionID; sid == nil || *sid != sess.ID {
				continue
			}
			select {
			case out <- ev:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, nil
}

// SessionStreamHead checks, as SessionEvents does, that the caller may
// stream the session's events, and returns the position of its project's
// stream now: the seq and cursor of the newest committed event (a
// subscriber joining a shared execution of sessionEvents is handed only the
// events after it).
func (s *Service) SessionStreamHead(ctx context.Context, sessionGID string) (int64, string, error) {
	sess, err := s.streamedSession(ctx, sessionGID)
	if err != nil {
		return 0, "", err
	}
	seq, cursor, err := s.core.Events.ProjectStreamHead(ctx, domain.GlobalID(domain.KindProject, sess.ProjectID))
	return seq, cursor, projectGone(err)
}

// streamedSession is the session whose events the caller of ctx asks to
// stream: NOT_FOUND (sessionId) when it may not see it.
func (s *Service) streamedSession(ctx context.Context, sessionGID string) (*domain.AgentSession, error) {
	p, err := app.Caller(ctx)
	if err != nil {
		return nil, err
	}
	id, err := domain.DecodeID(domain.KindAgentSession, sessionGID, "sessionId")
	if err != nil {
		return nil, fieldNotFound(err, "sessionId")
	}
	// The check reads through loaders of its own: the subscription's context
	// lives as long as it does.
	sess, err := s.visibleSession(app.WithoutLoaders(ctx), p, id, true)
	if err != nil {
		return nil, err
	}
	if sess == nil {
		return nil, &domain.Error{Code: domain.CodeNotFound, Field: "sessionId", Message: "agent session not found"}
	}
	return sess, nil
}

// projectGone turns the core's NOT_FOUND of a visible session's project
// (deleted meanwhile) into an internal error: the caller named no project.
func projectGone(err error) error {
	if de, ok := domain.AsError(err); ok && de.Field == "projectId" {
		return errors.New("sessions: the session's project is gone")
	}
	return err
}

// logger is the logger of the request ctx belongs to.
func (s *Service) logger(ctx context.Context) *slog.Logger { return s.loggerFrom(ctx) }
