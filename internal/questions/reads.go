package questions

import (
	"context"

	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/auth"
	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/loader"
)

// questionLoaders are the request's batched reads of questions: one
// statement per field and level, however many parents ask.
type questionLoaders struct {
	byID         *loader.Loader[string, *domain.Question]
	ofTask       *loader.Loader[string, []*domain.Question]
	ofList       *loader.Loader[string, []*domain.Question]
	ofRun        *loader.Loader[string, []*domain.Question]
	waitingOn    *loader.Loader[string, *domain.Question]
	pendingCount *loader.Loader[string, int]
}

type loadersKey struct{}

// Clear forgets every cached read.
func (l *questionLoaders) Clear() {
	l.byID.Clear()
	l.ofTask.Clear()
	l.ofList.Clear()
	l.ofRun.Clear()
	l.waitingOn.Clear()
	l.pendingCount.Clear()
}

func (s *Service) load(ctx context.Context) *questionLoaders {
	return app.Set(ctx, loadersKey{}, func(w loader.Timing) *questionLoaders {
		q := &s.db.Q
		of := func(column string) *loader.Loader[string, []*domain.Question] {
			return loader.New(w, app.Grouped(func(ctx context.Context, ids []string) ([]*domain.Question, error) {
				return q.Questions.QuestionsOf(ctx, column, ids)
			}, func(qu *domain.Question) []string {
				switch column {
				case "task_id":
					return optional(qu.TaskID)
				case "task_list_id":
					return optional(qu.TaskListID)
				default:
					return optional(qu.RunID)
				}
			}))
		}
		return &questionLoaders{
			byID:   loader.New(w, app.ByID(q.Questions.QuestionsByIDs, func(v *domain.Question) string { return v.ID })),
			ofTask: of("task_id"), ofList: of("task_list_id"), ofRun: of("run_id"),
			waitingOn: loader.New(w, app.ByID(func(ctx context.Context, ids []string) ([]*domain.Question, error) {
				return q.Questions.NewestPendingOfAgents(ctx, ids, domain.QuestionPending)
			}, func(v *domain.Question) string { return *v.AgentID })),
			pendingCount: loader.New(w, func(ctx context.Context, ids []string) (map[string]int, error) {
				return q.Questions.PendingCounts(ctx, ids, domain.QuestionPending)
			}),
		}
	})
}

func optional(id *string) []string {
	if id == nil {
		return nil
	}
	return []string{*id}
}

// list returns a loaded list, never nil.
func list(qs []*domain.Question, err error) ([]*domain.Question, error) {
	if qs == nil && err == nil {
		qs = []*domain.Question{}
	}
	return qs, err
}

// QuestionsOfTask lists a task's questions, newest first (a nested field:
// the task was shown to the caller).
func (s *Service) QuestionsOfTask(ctx context.Context, taskID string) ([]*domain.Question, error) {
	return list(s.load(ctx).ofTask.Load(ctx, taskID))
}

// QuestionsOfList lists a task list's questions, newest first.
func (s *Service) QuestionsOfList(ctx context.Context, listID string) ([]*domain.Question, error) {
	return list(s.load(ctx).ofList.Load(ctx, listID))
}

// QuestionsOfRun lists an execution run's questions, newest first.
func (s *Service) QuestionsOfRun(ctx context.Context, runID string) ([]*domain.Question, error) {
	return list(s.load(ctx).ofRun.Load(ctx, runID))
}

// WaitingOn is an agent's newest PENDING question, or nil.
func (s *Service) WaitingOn(ctx context.Context, agentID string) (*domain.Question, error) {
	return s.load(ctx).waitingOn.Load(ctx, agentID)
}

// PendingQuestionCount counts a project's PENDING questions.
func (s *Service) PendingQuestionCount(ctx context.Context, projectID string) (int, error) {
	return s.load(ctx).pendingCount.Load(ctx, projectID)
}

// QuestionByID loads a question by id through the request's loaders (a
// reference from something the caller was shown: an event).
func (s *Service) QuestionByID(ctx context.Context, id string) (*domain.Question, error) {
	return s.load(ctx).byID.Load(ctx, id)
}

// visibleQuestion loads a question p may see; nil otherwise.
func (s *Service) visibleQuestion(ctx context.Context, p *auth.Principal, id string) (*domain.Question, error) {
	q, err := s.load(ctx).byID.Load(ctx, id)
	if err != nil || q == nil {
		return nil, err
	}
	project, err := s.core.Projects.ProjectByID(ctx, q.ProjectID)
	if err != nil || !app.CanSee(p, project) {
		return nil, err
	}
	return q, nil
}

// Question finds a question by global id; nil when absent or invisible.
func (s *Service) Question(ctx context.Context, gid string) (*domain.Question, error) {
	p, err := app.Caller(ctx)
	if err != nil {
		return nil, err
	}
	id, err := domain.DecodeID(domain.KindQuestion, gid, "id")
	if err != nil {
		return nil, err
	}
	return s.visibleQuestion(ctx, p, id)
}

// NodeOf loads a question by kind (an app.NodeSource).
func (s *Service) NodeOf(ctx context.Context, p *auth.Principal, kind domain.Kind, id string) (domain.Node, bool, error) {
	if kind != domain.KindQuestion {
		return nil, false, nil
	}
	q, err := s.visibleQuestion(ctx, p, id)
	if err != nil || q == nil {
		return nil, true, err
	}
	return q, true, nil
}

// Questions pages a project's questions, newest first, narrowed by filter.
func (s *Service) Questions(ctx context.Context, projectGID string, in *domain.QuestionsFilterInput, page domain.PageArgs) (domain.Page[*domain.Question], error) {
	p, err := app.Caller(ctx)
	if err != nil {
		return domain.Page[*domain.Question]{}, err
	}
	if err := page.Validate(); err != nil {
		return domain.Page[*domain.Question]{}, err
	}
	projectID, err := domain.DecodeID(domain.KindProject, projectGID, "projectId")
	if err != nil {
		return domain.Page[*domain.Question]{}, err
	}
	project, err := s.core.Projects.ProjectByID(ctx, projectID)
	if err != nil {
		return domain.Page[*domain.Question]{}, err
	}
	if !app.CanSee(p, project) {
		return domain.Page[*domain.Question]{}, &domain.Error{Code: domain.CodeNotFound, Field: "projectId", Message: "project not found"}
	}
	var f domain.QuestionFilter
	if in != nil {
		const maxValues = 20
		if len(in.Status) > maxValues || len(in.Priority) > maxValues || len(in.QuestionType) > maxValues {
			return domain.Page[*domain.Question]{}, domain.InputError("filter", "at most %d values per filter", maxValues)
		}
		f.Status, f.Priority, f.QuestionType = in.Status, in.Priority, in.QuestionType
		if f.TaskListID, err = domain.DecodeOptionalID(domain.KindTaskList, in.TaskListID, "filter.taskListId"); err != nil {
			return domain.Page[*domain.Question]{}, err
		}
		if f.RunID, err = domain.DecodeOptionalID(domain.KindExecutionRun, in.RunID, "filter.runId"); err != nil {
			return domain.Page[*domain.Question]{}, err
		}
		if f.TaskID, err = domain.DecodeOptionalID(domain.KindTask, in.TaskID, "filter.taskId"); err != nil {
			return domain.Page[*domain.Question]{}, err
		}
	}
	return s.db.Questions.Questions(ctx, projectID, f, page)
}
