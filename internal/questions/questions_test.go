package questions_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/auth"
	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/questions"
	"github.com/taskgraph/taskgraph/internal/service"
	"github.com/taskgraph/taskgraph/internal/store"
	"github.com/taskgraph/taskgraph/internal/testdb"
)

// open returns the questions over their own handle of the database at url
// (a replica: its own pool).
func open(t *testing.T, url string) (*store.DB, *questions.Service) {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, url)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	require.NoError(t, db.Migrate(ctx))
	core := service.New(db, service.Options{})
	return db, questions.New(db, app.NewRunner(db, nil), core, questions.Options{})
}

// TestSweepExactlyOnce: sweepers of three replicas, four each, racing over
// the same expired questions handle each one once; a question not yet
// expired is left alone; a notified question is notified once.
func TestSweepExactlyOnce(t *testing.T) {
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

		var expires time.Time
		var ids []string
		for i := range 30 {
			expires = time.Now().Add(time.Second) // each a second after it is asked
			q, err := qs.AskQuestion(pctx, domain.AskQuestionInput{TaskListID: &listID, QuestionType: domain.QuestionDecision,
				QuestionText: fmt.Sprintf("q%d", i), ExpiresAt: &expires})
			require.NoError(t, err)
			ids = append(ids, q.ID)
		}
		later := time.Now().Add(time.Hour)
		kept, err := qs.AskQuestion(pctx, domain.AskQuestionInput{TaskListID: &listID, QuestionType: domain.QuestionDecision,
			QuestionText: "later", ExpiresAt: &later})
		require.NoError(t, err)
		for time.Now().Before(expires.Add(10 * time.Millisecond)) {
			time.Sleep(10 * time.Millisecond)
		}

		var notified sync.Map
		var dup atomic.Int32
		var handled atomic.Int64
		var wg sync.WaitGroup
		for range 3 {
			_, replica := open(t, url)
			replica.SetNotify(func(q *domain.Question) {
				if _, loaded := notified.LoadOrStore(q.ID, true); loaded {
					dup.Add(1)
				}
			})
			for range 4 {
				wg.Go(func() {
					n, err := replica.SweepExpired(ctx)
					require.NoError(t, err)
					handled.Add(int64(n))
				})
			}
		}
		wg.Wait()
		require.Equal(t, int64(30), handled.Load(), "each expired question handled once")
		require.Zero(t, dup.Load())
		got, err := db.Questions.QuestionsByIDs(ctx, append(ids, kept.ID))
		require.NoError(t, err)
		for _, q := range got {
			if q.ID == kept.ID {
				require.Equal(t, domain.QuestionPending, q.Status)
			} else {
				require.Equal(t, domain.QuestionExpired, q.Status)
			}
		}
	})
}
