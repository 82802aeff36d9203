package grouping

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/auth"
	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/service"
	"github.com/taskgraph/taskgraph/internal/store"
	"github.com/taskgraph/taskgraph/internal/testdb"
)

// TestBackgroundRest: the background grouping lets a project it has just
// handled rest (groupingRest times the handling's duration); its triggers
// wait, none is lost, and they are handled once the rest is over.
// HandleTriggers, which has no rests, handles every project at once.
func TestBackgroundRest(t *testing.T) {
	testdb.Run(t, func(t *testing.T, url string) {
		ctx := context.Background()
		db, err := store.Open(ctx, url)
		require.NoError(t, err)
		require.NoError(t, db.Migrate(ctx))
		now := time.Now().UTC()
		u := &domain.User{ID: uuid.NewString(), Slug: "root", Name: "root", Email: "r@example.com",
			Settings: domain.JSON(`{}`), CreatedAt: now, UpdatedAt: now}
		require.NoError(t, db.Users.CreateUser(ctx, u))
		actx := auth.WithPrincipal(ctx, &auth.Principal{UserID: u.ID, Role: domain.RoleAdmin})
		core := service.New(db, service.Options{})
		g := New(db, app.NewRunner(db, nil), core, Options{})
		pr, err := core.Projects.CreateProject(actx, domain.CreateProjectInput{Name: "p", Slug: "p"})
		require.NoError(t, err)
		// Tasks that share nothing: no suggestion (whose event would be a
		// trigger of its own).
		create := func(title string) {
			_, err := core.Tasks.CreateTask(actx, domain.CreateTaskInput{ProjectID: pr.GlobalID(), Title: title, AffectedFiles: []string{title + "/own.go"}})
			require.NoError(t, err)
		}
		pending := func() []string {
			ps, err := db.ProjectsWithGroupingWork(ctx, 10)
			require.NoError(t, err)
			return ps
		}

		create("a")
		rest := map[string]time.Time{}
		_, err = g.handleTriggers(actx, rest)
		require.NoError(t, err)
		require.Empty(t, pending(), "handled")
		require.Contains(t, rest, pr.ID, "handled, then resting")

		// A long rest: the new trigger waits.
		rest[pr.ID] = time.Now().Add(time.Hour)
		create("b")
		_, err = g.handleTriggers(actx, rest)
		require.NoError(t, err)
		require.Equal(t, []string{pr.ID}, pending(), "resting: its trigger waits")

		// The rest over: handled, and the rest forgotten once it ends.
		rest[pr.ID] = time.Now().Add(-time.Millisecond)
		_, err = g.handleTriggers(actx, rest)
		require.NoError(t, err)
		require.Empty(t, pending())
		require.Eventually(t, func() bool {
			_, err := g.handleTriggers(actx, rest)
			require.NoError(t, err)
			return len(rest) == 0
		}, 5*time.Second, time.Millisecond, "a rest over is forgotten")

		// HandleTriggers has no rests.
		create("c")
		_, err = g.HandleTriggers(actx)
		require.NoError(t, err)
		require.Empty(t, pending())
	})
}
