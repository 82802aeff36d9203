package grouping_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/auth"
	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/grouping"
	"github.com/taskgraph/taskgraph/internal/service"
	"github.com/taskgraph/taskgraph/internal/store"
	"github.com/taskgraph/taskgraph/internal/testdb"
)

// TestTriggers: a new dependency between candidates gives one suggestion; task agents register.
func TestTriggers(t *testing.T) {
	testdb.Run(t, func(t *testing.T, url string) {
		ctx := context.Background()
		db, err := store.Open(ctx, url)
		require.NoError(t, err)
		require.NoError(t, db.Migrate(ctx))
		clk := testdb.NewClock(time.Date(2025, 6, 1, 9, 0, 0, 0, time.UTC))
		u := &domain.User{ID: uuid.NewString(), Slug: "root", Name: "root", Email: "r@example.com",
			Settings: domain.JSON(`{}`), CreatedAt: clk.Now(), UpdatedAt: clk.Now()}
		require.NoError(t, db.Users.CreateUser(ctx, u))
		admin := &auth.Principal{UserID: u.ID, Role: domain.RoleAdmin}
		core := service.New(db, service.Options{})
		g := grouping.New(db, app.NewRunner(db, nil), core, grouping.Options{})
		actx := auth.WithPrincipal(ctx, admin)
		pr, err := core.Projects.CreateProject(actx, domain.CreateProjectInput{Name: "p", Slug: "p"})
		require.NoError(t, err)
		for _, title := range []string{"a", "b"} {
			_, err = core.Tasks.CreateTask(actx, domain.CreateTaskInput{ProjectID: pr.GlobalID(), Title: title, AffectedFiles: []string{"x/y.go"}})
			require.NoError(t, err)
		}
		_, err = g.SuggestGroupings(actx, domain.SuggestGroupingsInput{ProjectID: pr.GlobalID()})
		require.NoError(t, err)
		_, err = g.HandleTriggers(actx)
		require.NoError(t, err)
		f1, err := core.Tasks.CreateTask(actx, domain.CreateTaskInput{ProjectID: pr.GlobalID(), Title: "Rotate keys", Category: ptr(domain.CategoryInfra)})
		require.NoError(t, err)
		f2, err := core.Tasks.CreateTask(actx, domain.CreateTaskInput{ProjectID: pr.GlobalID(), Title: "Audit rotation", Category: ptr(domain.CategoryInfra)})
		require.NoError(t, err)
		n, err := g.HandleTriggers(actx)
		require.NoError(t, err)
		require.Zero(t, n, "no group yet")
		_, err = g.SetGroupingWeights(actx, domain.SetGroupingWeightsInput{ProjectID: pr.GlobalID(), FileOverlap: 0.1, Dependency: 0.5, Category: 0.2, DescriptionSimilarity: 0.1, Component: 0.1})
		require.NoError(t, err)
		_, err = core.Tasks.AddTaskRelationship(actx, domain.AddTaskRelationshipInput{SourceTaskID: f2.GlobalID(), TargetTaskID: f1.GlobalID(), Type: domain.RelBlocks})
		require.NoError(t, err)
		ps, err := db.ProjectsWithGroupingWork(ctx, 10)
		require.NoError(t, err)
		require.Equal(t, []string{pr.ID}, ps)
		n, err = g.HandleTriggers(actx)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		_, err = g.RegisterTaskAgent(actx, domain.RegisterTaskAgentInput{ProjectID: pr.GlobalID(), IsEvaluationQueue: ptr(true)})
		require.NoError(t, err)
	})
}

func ptr[T any](v T) *T { return &v }

// TestLinkRemovalTriggers: removing a dependency lets a new group form; the
// background grouping notices the removal (DEPENDENCY_CHANGED).
func TestLinkRemovalTriggers(t *testing.T) {
	testdb.Run(t, func(t *testing.T, url string) {
		ctx := context.Background()
		db, err := store.Open(ctx, url)
		require.NoError(t, err)
		t.Cleanup(func() { _ = db.Close() })
		require.NoError(t, db.Migrate(ctx))
		u := &domain.User{ID: uuid.NewString(), Slug: "root", Name: "root", Email: "r@example.com",
			Settings: domain.JSON(`{}`), CreatedAt: time.Now(), UpdatedAt: time.Now()}
		require.NoError(t, db.Users.CreateUser(ctx, u))
		actx := auth.WithPrincipal(ctx, &auth.Principal{UserID: u.ID, Role: domain.RoleAdmin})
		core := service.New(db, service.Options{})
		g := grouping.New(db, app.NewRunner(db, nil), core, grouping.Options{})
		pr, err := core.Projects.CreateProject(actx, domain.CreateProjectInput{Name: "p", Slug: "p"})
		require.NoError(t, err)
		_, err = g.SetGroupingWeights(actx, domain.SetGroupingWeightsInput{ProjectID: pr.GlobalID(), FileOverlap: 0.25, Dependency: 0.45, Category: 0.2, Component: 0.1})
		require.NoError(t, err)
		mk := func(title string, files ...string) *domain.Task {
			tk, err := core.Tasks.CreateTask(actx, domain.CreateTaskInput{ProjectID: pr.GlobalID(), Title: title,
				Category: ptr(domain.CategoryInfra), AffectedFiles: files})
			require.NoError(t, err)
			return tk
		}
		a, b, c := mk("alpha", "x/a.go"), mk("beta"), mk("gamma", "x/a.go")
		rel, err := core.Tasks.AddTaskRelationship(actx, domain.AddTaskRelationshipInput{SourceTaskID: b.GlobalID(), TargetTaskID: a.GlobalID(), Type: domain.RelBlocks})
		require.NoError(t, err)
		n, err := g.HandleTriggers(actx)
		require.NoError(t, err)
		require.Equal(t, 1, n, "{a, b}")
		_, err = core.Tasks.RemoveTaskRelationship(actx, domain.RemoveTaskRelationshipInput{ID: rel.GlobalID()})
		require.NoError(t, err)
		n, err = g.HandleTriggers(actx)
		require.NoError(t, err)
		require.Equal(t, 1, n, "{a, c} once the link is gone")
		pg, err := g.SuggestionsOfProject(actx, pr.ID, nil, domain.PageArgs{})
		require.NoError(t, err)
		require.Len(t, pg.Items, 2)
		last := pg.Items[1]
		require.Equal(t, domain.TriggerDependencyChanged, last.TriggeredBy)
		require.ElementsMatch(t, []string{a.ID, c.ID}, []string(last.TaskIDs))
		n, err = g.HandleTriggers(actx)
		require.NoError(t, err)
		require.Zero(t, n, "handled once")
	})
}
