package reasoning_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/auth"
	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/reasoning"
	"github.com/taskgraph/taskgraph/internal/store"
	"github.com/taskgraph/taskgraph/internal/testdb"
)

// clock is a time the test moves by hand.
type clock struct{ now time.Time }

func (c *clock) Now() time.Time { return c.now }

func as(p *auth.Principal) context.Context { return auth.WithPrincipal(context.Background(), p) }

// TestPassDurationsFromServerClock: a pass's duration is the server's time
// between its start and its end, and the statistics sum them.
func TestPassDurationsFromServerClock(t *testing.T) {
	t.Parallel()
	testdb.Run(t, func(t *testing.T, url string) {
		ctx := context.Background()
		db, err := store.Open(ctx, url)
		require.NoError(t, err)
		t.Cleanup(func() { _ = db.Close() })
		require.NoError(t, db.Migrate(ctx))
		clk := &clock{now: time.Date(2025, 6, 1, 9, 0, 0, 0, time.UTC)}
		svc := reasoning.New(db, app.NewRunner(db, nil), reasoning.Options{Clock: clk.Now})
		u := &domain.User{ID: uuid.NewString(), Slug: "root", Name: "root", Email: "root@example.com",
			Settings: domain.JSON(`{}`), CreatedAt: clk.now, UpdatedAt: clk.now}
		require.NoError(t, db.Users.CreateUser(ctx, u))
		project := &domain.Project{ID: uuid.NewString(), Slug: "p", Name: "p", OwnerID: u.ID,
			Status: domain.ProjectActive, CreatedAt: clk.now, UpdatedAt: clk.now}
		require.NoError(t, db.Projects.CreateProject(ctx, project))
		admin := as(&auth.Principal{UserID: u.ID, Role: domain.RoleAdmin})

		e, err := svc.StartReasoningExecution(admin, domain.StartReasoningExecutionInput{
			ProjectID: domain.GlobalID(domain.KindProject, project.ID), TaskInput: "think", TTL: 2})
		require.NoError(t, err)
		var total int
		for i, ms := range []int{1500, 250} {
			p, err := svc.StartExecutionPass(admin, domain.StartExecutionPassInput{ExecutionID: e.GlobalID(),
				Phase: domain.PhaseC, TTLRemaining: 1 - i})
			require.NoError(t, err)
			require.Equal(t, i, p.PassNumber)
			clk.now = clk.now.Add(time.Duration(ms) * time.Millisecond)
			p, err = svc.CompleteExecutionPass(admin, domain.CompleteExecutionPassInput{PassID: p.GlobalID()})
			require.NoError(t, err)
			require.Equal(t, ms, *p.DurationMs)
			total += ms
		}
		done, err := svc.FinishReasoningExecution(admin, domain.FinishReasoningExecutionInput{ExecutionID: e.GlobalID(),
			Status: domain.ReasoningTTLExpired})
		require.NoError(t, err)
		require.Equal(t, domain.ReasoningTTLExpired, done.Status)
		st, err := svc.Statistics(admin, e.ID)
		require.NoError(t, err)
		require.Equal(t, total, st.TotalTimeMs)
		require.Equal(t, 2, st.TotalPasses)
	})
}
