// Package questions holds the use-cases of questions put to people (human in
// the loop): agents and users ask them about a task, a task list or an
// agent's work; people answer or skip them; the sweep applies their timeout
// action when they expire; a run's end skips its pending questions.
//
// Its entities and rules are in internal/domain (questions.go), its SQL in
// internal/store (q.Questions). It uses the core (internal/service) for the
// fencing of agent calls and for failing a task.
package questions

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/auth"
	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/service"
	"github.com/taskgraph/taskgraph/internal/store"
)

// Options configure a Service.
type Options struct {
	// Logger logs the sweep's failures; default slog.Default().
	Logger *slog.Logger
	// SweepInterval is the period of the expiry sweep; default 1s.
	SweepInterval time.Duration
	// Notify, when set, hears of every question asked or settled, after the
	// commit (the chat integration).
	Notify func(q *domain.Question)
	// MinFailTaskDelay is the least time between asking a FAIL_TASK question
	// and its expiresAt; default domain.DefaultMinFailTaskDelay (0 is taken
	// as the default: set a tiny positive value to allow any).
	MinFailTaskDelay time.Duration
}

// Service is the questions' use-cases.
type Service struct {
	db     *store.DB
	run    *app.Runner
	core   *service.Service
	log    *slog.Logger
	every  time.Duration
	notify func(q *domain.Question)
	// minFail is Options.MinFailTaskDelay.
	minFail time.Duration
}

// New returns the questions over db, committing through run; it registers
// with the core the skipping of a run's questions when the run ends.
func New(db *store.DB, run *app.Runner, core *service.Service, opts Options) *Service {
	s := &Service{db: db, run: run, core: core, log: opts.Logger, every: opts.SweepInterval, notify: opts.Notify,
		minFail: opts.MinFailTaskDelay}
	if s.minFail <= 0 {
		s.minFail = domain.DefaultMinFailTaskDelay
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.every <= 0 {
		s.every = time.Second
	}
	core.Runs.OnRunEnd(s.skipQuestionsOfRun)
	return s
}

// SetNotify sets the hook that hears of questions asked and settled.
func (s *Service) SetNotify(fn func(q *domain.Question)) { s.notify = fn }

// notified queues the notification of q for after tx commits.
func (s *Service) notified(tx *app.Tx, q *domain.Question) {
	if s.notify == nil {
		return
	}
	c := *q
	tx.AfterCommit(func() { s.notify(&c) })
}

// now is the database clock, as stored.
func now(ctx context.Context, q *store.Q) (time.Time, error) {
	return q.Now(ctx)
}

// AskQuestion asks a question about an agent's task, a task or a task list.
func (s *Service) AskQuestion(ctx context.Context, in domain.AskQuestionInput) (*domain.Question, error) {
	p, err := app.Caller(ctx)
	if err != nil {
		return nil, err
	}
	var out *domain.Question
	err = s.run.InTx(ctx, func(tx *app.Tx) error {
		var (
			at       time.Time
			targetOK bool
			// heldTask: the question is the agent's own (agentId), on the
			// task the caller's agent holds.
			heldTask bool
		)
		q := &domain.Question{}
		switch {
		case in.AgentID != nil && in.TaskID == nil && in.TaskListID == nil:
			// The agent's call is fenced as its others: only the live holder
			// of its task asks.
			h, err := s.core.Runs.HoldAgent(ctx, tx, p, *in.AgentID)
			if err != nil {
				return err
			}
			at, targetOK, heldTask = h.Now, true, true
			q.ProjectID, q.TaskListID, q.TaskID = h.Run.ProjectID, &h.Run.TaskListID, &h.Agent.TaskID
			q.RunID, q.AgentID = &h.Run.ID, &h.Agent.ID
		case in.TaskID != nil && in.AgentID == nil && in.TaskListID == nil:
			id, err := domain.DecodeID(domain.KindTask, *in.TaskID, "taskId")
			if err != nil {
				return err
			}
			tasks, err := tx.Tasks.TasksByIDs(ctx, []string{id})
			if err != nil {
				return err
			}
			if len(tasks) == 0 || !s.visible(ctx, tx, p, tasks[0].ProjectID) {
				return &domain.Error{Code: domain.CodeNotFound, Field: "taskId", Message: "task not found"}
			}
			t := tasks[0]
			q.ProjectID, q.TaskID, q.TaskListID, targetOK = t.ProjectID, &t.ID, t.TaskListID, true
			if t.TaskListID != nil {
				if run, err := tx.Runs.ActiveRunOfList(ctx, *t.TaskListID); err == nil {
					q.RunID = &run.ID
				} else if !errors.Is(err, store.ErrNotFound) {
					return err
				}
			}
		case in.TaskListID != nil && in.AgentID == nil && in.TaskID == nil:
			id, err := domain.DecodeID(domain.KindTaskList, *in.TaskListID, "taskListId")
			if err != nil {
				return err
			}
			lists, err := tx.Lists.TaskListsByIDs(ctx, []string{id})
			if err != nil {
				return err
			}
			if len(lists) == 0 || !s.visible(ctx, tx, p, lists[0].ProjectID) {
				return &domain.Error{Code: domain.CodeNotFound, Field: "taskListId", Message: "task list not found"}
			}
			q.ProjectID, q.TaskListID, targetOK = lists[0].ProjectID, &lists[0].ID, true
		}
		if !targetOK {
			// AskRules names the fault.
			_, err := domain.AskRules(in, time.Now())
			return err
		}
		if at.IsZero() {
			if at, err = now(ctx, tx.Q); err != nil {
				return err
			}
		}
		rules, err := domain.AskRules(in, at)
		if err != nil {
			return err
		}
		if rules.TimeoutAction == domain.TimeoutFailTask {
			if err := s.mayFailTask(ctx, tx, p, heldTask, q.TaskID, rules.ExpiresAt, at); err != nil {
				return err
			}
		}
		taskAgentID, err := s.askingTaskAgent(ctx, tx, p, in.TaskAgentID, q.ProjectID)
		if err != nil {
			return err
		}
		rules.ID, rules.ProjectID, rules.TaskListID, rules.TaskID, rules.RunID, rules.AgentID, rules.TaskAgentID =
			app.NewID(), q.ProjectID, q.TaskListID, q.TaskID, q.RunID, q.AgentID, taskAgentID
		rules.CallbackData, rules.CreatedAt, rules.UpdatedAt = domain.NewCallbackData(), at, at
		if err := tx.Questions.InsertQuestion(ctx, rules); err != nil {
			return err
		}
		if taskAgentID != nil {
			if err := tx.Grouping.CountQuestionAsked(ctx, *taskAgentID); err != nil {
				return err
			}
		}
		tx.Record(domain.NewQuestionAsked(rules, at))
		s.notified(tx, rules)
		if err := s.agentMoved(ctx, tx, rules); err != nil {
			return err
		}
		out = rules
		return nil
	})
	return out, err
}

// mayFailTask checks a FAIL_TASK question: its timeout fails a task and
// takes the lease of whoever works on it, so p may ask it only about a task
// its own agent holds (asked with agentId, fenced like the agent's calls; or,
// for an AGENT token, with the taskId of a task whose live agent that token
// claimed), or when p may change the task (ADMIN, or a MEMBER of its project:
// visibility was checked). And people get at least s.minFail to answer.
func (s *Service) mayFailTask(ctx context.Context, tx *app.Tx, p *auth.Principal, heldTask bool, taskID *string,
	expiresAt *time.Time, at time.Time) error {
	if !heldTask && p.Role == domain.RoleAgent {
		held, err := s.heldByToken(ctx, tx, p, taskID)
		if err != nil {
			return err
		}
		if !held {
			return &domain.Error{Code: domain.CodeForbidden, Field: "timeoutAction",
				Message: "timeoutAction FAIL_TASK: an agent token may fail only the task its agent holds (ask with agentId)"}
		}
	}
	if expiresAt != nil && expiresAt.Sub(at) < s.minFail {
		return domain.InputError("expiresAt", "timeoutAction FAIL_TASK gives people at least %s to answer: expiresAt must be at least that far in the future", s.minFail)
	}
	return nil
}

// heldByToken reports whether task taskID has a live agent claimed by p's
// token (an agent records its claimer as the token's global id).
func (s *Service) heldByToken(ctx context.Context, tx *app.Tx, p *auth.Principal, taskID *string) (bool, error) {
	if taskID == nil || p.TokenID == "" {
		return false, nil
	}
	tasks, err := tx.Tasks.TasksByIDs(ctx, []string{*taskID})
	if err != nil || len(tasks) == 0 || tasks[0].AssignedAgentID == nil {
		return false, err
	}
	agents, err := tx.Runs.AgentsByIDs(ctx, []string{*tasks[0].AssignedAgentID})
	if err != nil || len(agents) == 0 {
		return false, err
	}
	a := agents[0]
	return a.Status.Live() && a.ClaimedBy != nil && *a.ClaimedBy == domain.GlobalID(domain.KindAPIToken, p.TokenID), nil
}

// askingTaskAgent checks the task agent a question names (gid, a global id;
// nil: none) and returns its id: it must exist, be visible to p, belong to
// the question's project and not be TERMINATED. Its row stays locked until
// commit, so it cannot be terminated while the question counts for it.
func (s *Service) askingTaskAgent(ctx context.Context, tx *app.Tx, p *auth.Principal, gid *string, projectID string) (*string, error) {
	if gid == nil {
		return nil, nil
	}
	notFound := &domain.Error{Code: domain.CodeNotFound, Field: "taskAgentId", Message: "task agent not found"}
	id, err := domain.DecodeID(domain.KindTaskAgent, *gid, "taskAgentId")
	var de *domain.Error
	if errors.As(err, &de) && de.Code == domain.CodeNotFound {
		return nil, notFound // an id of another kind
	} else if err != nil {
		return nil, err
	}
	a, err := tx.Grouping.TaskAgentForUpdate(ctx, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && !s.visible(ctx, tx, p, a.ProjectID)) {
		return nil, notFound
	} else if err != nil {
		return nil, err
	}
	if a.ProjectID != projectID {
		return nil, domain.InputError("taskAgentId", "the task agent belongs to another project")
	}
	if a.Status == domain.TaskAgentTerminated {
		return nil, domain.InputError("taskAgentId", "the task agent is terminated")
	}
	return &a.ID, nil
}

// visible reports whether p may see projectID (read in tx).
func (s *Service) visible(ctx context.Context, tx *app.Tx, p *auth.Principal, projectID string) bool {
	ok, err := app.CanSeeProjectID(ctx, tx.Q, p, projectID)
	return err == nil && ok
}

// answerer is the caller, when it may answer or skip questions: AGENT
// tokens may not.
func answerer(ctx context.Context) (*auth.Principal, error) {
	p, err := app.Caller(ctx)
	if err != nil {
		return nil, err
	}
	if p.Role == domain.RoleAgent {
		return nil, domain.Forbidden("agent tokens cannot answer or skip questions")
	}
	return p, nil
}

// lockVisible locks question id for a change by p (NOT_FOUND when p may not
// see it).
func (s *Service) lockVisible(ctx context.Context, tx *app.Tx, p *auth.Principal, id, field string) (*domain.Question, error) {
	q, err := tx.Questions.QuestionForUpdate(ctx, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && !s.visible(ctx, tx, p, q.ProjectID)) {
		return nil, &domain.Error{Code: domain.CodeNotFound, Field: field, Message: "question not found"}
	}
	return q, err
}

// AnswerQuestion answers a question, by id or by callbackData: the first
// answer wins; the same answer again returns the question unchanged.
func (s *Service) AnswerQuestion(ctx context.Context, in domain.AnswerQuestionInput) (*domain.Question, error) {
	p, err := answerer(ctx)
	if err != nil {
		return nil, err
	}
	return s.answer(ctx, p, in)
}

// AnswerAs is AnswerQuestion for principal p: the chat integration answers
// for the user behind a chat, under the same rules.
func (s *Service) AnswerAs(ctx context.Context, p *auth.Principal, in domain.AnswerQuestionInput) (*domain.Question, error) {
	if p.Role == domain.RoleAgent {
		return nil, domain.Forbidden("agent tokens cannot answer or skip questions")
	}
	return s.answer(ctx, p, in)
}

// answer answers for principal p.
func (s *Service) answer(ctx context.Context, p *auth.Principal, in domain.AnswerQuestionInput) (*domain.Question, error) {
	if (in.ID == nil) == (in.CallbackData == nil) {
		return nil, domain.InputError("id", "give exactly one of id and callbackData")
	}
	var out *domain.Question
	err := s.run.InTx(ctx, func(tx *app.Tx) error {
		var id, field string
		if in.ID != nil {
			var err error
			if id, err = domain.DecodeID(domain.KindQuestion, *in.ID, "id"); err != nil {
				return err
			}
			field = "id"
		} else {
			field = "callbackData"
			if len(*in.CallbackData) > domain.MaxCallbackData {
				return domain.InputError(field, "callbackData is at most %d bytes", domain.MaxCallbackData)
			}
			var err error
			id, err = tx.Questions.QuestionIDByCallbackData(ctx, *in.CallbackData)
			if errors.Is(err, store.ErrNotFound) {
				return &domain.Error{Code: domain.CodeNotFound, Field: field, Message: "question not found"}
			} else if err != nil {
				return err
			}
		}
		q, err := s.lockVisible(ctx, tx, p, id, field)
		if err != nil {
			return err
		}
		answer, err := domain.CheckAnswerText(q, in.Answer)
		if err != nil {
			return err
		}
		outcome, err := domain.AnswerRule(q, answer)
		if err != nil {
			return err
		}
		out = q
		if outcome == domain.AnswerReplayed {
			return nil
		}
		at, err := now(ctx, tx.Q)
		if err != nil {
			return err
		}
		var by *string
		if p.UserID != "" {
			by = &p.UserID
		}
		q.Status, q.Answer, q.AnsweredAt, q.AnsweredByID, q.AnsweredByTimeout, q.UpdatedAt =
			domain.QuestionAnswered, &answer, &at, by, false, at
		if err := tx.Questions.UpdateQuestion(ctx, q); err != nil {
			return err
		}
		tx.Record(domain.NewQuestionAnswered(q, at))
		s.notified(tx, q)
		return s.agentMoved(ctx, tx, q)
	})
	return out, err
}

// agentMoved moves the build agent that asked blocking question q between
// RUNNING and IDLE once q was asked or settled (in tx, which wrote q).
func (s *Service) agentMoved(ctx context.Context, tx *app.Tx, q *domain.Question) error {
	if q.AgentID == nil || !q.Blocking {
		return nil
	}
	return s.core.Runs.AgentQuestionsMoved(ctx, tx, *q.AgentID)
}

// SkipQuestion skips a PENDING question (skipping it again changes nothing).
func (s *Service) SkipQuestion(ctx context.Context, in domain.SkipQuestionInput) (*domain.Question, error) {
	p, err := answerer(ctx)
	if err != nil {
		return nil, err
	}
	id, err := domain.DecodeID(domain.KindQuestion, in.ID, "id")
	if err != nil {
		return nil, err
	}
	reason, err := domain.CheckOptText("reason", in.Reason, domain.MaxQuestionReason)
	if err != nil {
		return nil, err
	}
	if reason != nil && *reason == "" {
		reason = nil
	}
	var out *domain.Question
	err = s.run.InTx(ctx, func(tx *app.Tx) error {
		q, err := s.lockVisible(ctx, tx, p, id, "id")
		if err != nil {
			return err
		}
		replay, err := domain.SkipRule(q)
		if err != nil || replay {
			out = q
			return err
		}
		at, err := now(ctx, tx.Q)
		if err != nil {
			return err
		}
		s.skip(tx, q, reason, at)
		out = q
		if err := tx.Questions.UpdateQuestion(ctx, q); err != nil {
			return err
		}
		return s.agentMoved(ctx, tx, q)
	})
	return out, err
}

// skip marks q SKIPPED for reason and records it (the caller writes q).
func (s *Service) skip(tx *app.Tx, q *domain.Question, reason *string, at time.Time) {
	q.Status, q.SkipReason, q.UpdatedAt = domain.QuestionSkipped, reason, at
	tx.Record(domain.NewQuestionSkipped(q, reason, at))
	s.notified(tx, q)
}

// skipQuestionsOfRun skips the PENDING questions of a run that ends.
func (s *Service) skipQuestionsOfRun(ctx context.Context, tx *app.Tx, run *domain.ExecutionRun, at time.Time) error {
	qs, err := tx.Questions.PendingQuestionsOfRunForUpdate(ctx, run.ID, domain.QuestionPending)
	if err != nil {
		return err
	}
	reason := fmt.Sprintf("run %d ended %s", run.RunNumber, run.Status)
	for _, q := range qs {
		s.skip(tx, q, &reason, at)
		if err := tx.Questions.UpdateQuestion(ctx, q); err != nil {
			return err
		}
	}
	return nil
}
