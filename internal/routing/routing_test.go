package routing_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/auth"
	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/routing"
	"github.com/taskgraph/taskgraph/internal/store"
	"github.com/taskgraph/taskgraph/internal/testdb"
)

func as(p *auth.Principal) context.Context { return auth.WithPrincipal(context.Background(), p) }

func ptr[T any](v T) *T { return &v }

// TestFailedTaskLimitUnderConcurrency: workers of one planner failing at
// once count until the limit and never past it, and the planner fails
// exactly when the count reaches its limit (one PLANNER_STATUS_CHANGED to
// FAILED); the later failures are recorded, not counted.
func TestFailedTaskLimitUnderConcurrency(t *testing.T) {
	t.Parallel()
	testdb.Run(t, func(t *testing.T, url string) {
		ctx := context.Background()
		db, err := store.Open(ctx, url)
		require.NoError(t, err)
		t.Cleanup(func() { _ = db.Close() })
		require.NoError(t, db.Migrate(ctx))
		now := time.Date(2025, 6, 1, 9, 0, 0, 0, time.UTC)
		u := &domain.User{ID: uuid.NewString(), Slug: "owner", Name: "o", Email: "o@example.com", Settings: domain.JSON(`{}`), CreatedAt: now, UpdatedAt: now}
		require.NoError(t, db.Users.CreateUser(ctx, u))
		project := &domain.Project{ID: uuid.NewString(), Slug: "p", Name: "P", OwnerID: u.ID, Status: domain.ProjectActive, CreatedAt: now, UpdatedAt: now}
		require.NoError(t, db.Projects.CreateProject(ctx, project))
		owner := &auth.Principal{UserID: u.ID, Role: domain.RoleMember}
		svc := routing.New(db, app.NewRunner(db, nil), routing.Options{})
		pl, err := svc.CreatePlanner(as(owner), domain.CreatePlannerInput{ProjectID: project.GlobalID(), UserQuestion: "q", Model: "m", FailedTaskLimit: ptr(4)})
		require.NoError(t, err)
		_, err = svc.UpdatePlanner(as(owner), domain.UpdatePlannerInput{ID: pl.GlobalID(), Status: ptr(domain.PlannerExecuting)})
		require.NoError(t, err)
		const n = 6
		workers := make([]string, n)
		for i := range workers {
			w, err := svc.CreateWorker(as(owner), domain.CreateWorkerInput{PlannerID: pl.GlobalID(), TaskDescription: "t"})
			require.NoError(t, err)
			_, err = svc.UpdateWorker(as(owner), domain.UpdateWorkerInput{ID: w.GlobalID(), TaskStatus: ptr(domain.WorkerInProgress)})
			require.NoError(t, err)
			workers[i] = w.GlobalID()
		}
		var wg sync.WaitGroup
		for _, id := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := svc.UpdateWorker(as(owner), domain.UpdateWorkerInput{ID: id, TaskStatus: ptr(domain.WorkerFailedValidation)})
				require.NoError(t, err)
			}()
		}
		wg.Wait()
		got, err := db.Routing.PlannersByIDs(ctx, []string{pl.ID})
		require.NoError(t, err)
		require.Equal(t, 4, got[0].FailedTaskCount, "never counted past the limit")
		require.Equal(t, domain.PlannerFailed, got[0].Status)
		evs, err := db.Events.LastEventSeqs(ctx, []string{project.ID})
		require.NoError(t, err)
		// 1 EXECUTING + 1 FAILED planner change, 2n worker changes.
		require.Equal(t, int64(2+2*n), evs[project.ID])
	})
}
