package questions_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/auth"
	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/service"
	"github.com/taskgraph/taskgraph/internal/testdb"
)

// TestAskWithTaskAgentCounts: questions asked at once naming a task agent
// are each counted once in its questionsAsked, in their own transactions;
// once the task agent is TERMINATED it is refused and nothing is counted.
func TestAskWithTaskAgentCounts(t *testing.T) {
	t.Parallel()
	testdb.Run(t, func(t *testing.T, url string) {
		ctx := context.Background()
		db, qs := open(t, url)
		now := time.Now().UTC()
		u := &domain.User{ID: uuid.NewString(), Slug: "owner", Name: "Owner", Email: "o@example.com",
			Settings: domain.JSON(`{}`), CreatedAt: now, UpdatedAt: now}
		require.NoError(t, db.Users.CreateUser(ctx, u))
		pctx := auth.WithPrincipal(ctx, &auth.Principal{UserID: u.ID, Role: domain.RoleMember})
		core := service.New(db, service.Options{})
		project, err := core.Projects.CreateProject(pctx, domain.CreateProjectInput{Name: "P", Slug: "p"})
		require.NoError(t, err)
		list, err := core.Lists.CreateTaskList(pctx, domain.CreateTaskListInput{ProjectID: project.GlobalID(), Name: "L"})
		require.NoError(t, err)
		listID := list.GlobalID()
		ta := &domain.TaskAgentInstance{ID: uuid.NewString(), ProjectID: project.ID, IsEvaluationQueue: true,
			Status: domain.TaskAgentActive, CreatedAt: now, UpdatedAt: now}
		require.NoError(t, db.Grouping.InsertTaskAgent(ctx, ta))
		taID := ta.GlobalID()

		const n = 12
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = qs.AskQuestion(pctx, domain.AskQuestionInput{TaskListID: &listID, TaskAgentID: &taID,
					QuestionType: domain.QuestionDecision, QuestionText: fmt.Sprintf("q%d", i)})
			}()
		}
		wg.Wait()
		for _, err := range errs {
			require.NoError(t, err)
		}
		got, err := db.Grouping.TaskAgentsByIDs(ctx, []string{ta.ID})
		require.NoError(t, err)
		require.Len(t, got, 1)
		require.Equal(t, n, got[0].QuestionsAsked)

		got[0].Status = domain.TaskAgentTerminated
		require.NoError(t, db.Grouping.UpdateTaskAgent(ctx, got[0]))
		_, err = qs.AskQuestion(pctx, domain.AskQuestionInput{TaskListID: &listID, TaskAgentID: &taID,
			QuestionType: domain.QuestionDecision, QuestionText: "late"})
		var de *domain.Error
		require.ErrorAs(t, err, &de)
		require.Equal(t, domain.CodeBadUserInput, de.Code)
		require.Equal(t, "taskAgentId", de.Field)
		got, err = db.Grouping.TaskAgentsByIDs(ctx, []string{ta.ID})
		require.NoError(t, err)
		require.Equal(t, n, got[0].QuestionsAsked)
	})
}
