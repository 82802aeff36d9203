package app_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/store"
	"github.com/taskgraph/taskgraph/internal/testdb"
)

// TestRunnerInTx: the events a use-case records are written with its change
// and numbered in order; a failed use-case writes neither its change nor its
// events and runs none of its after-commit work; after-commit work runs after
// the commit, in order; the run a transaction acts for is its own.
func TestRunnerInTx(t *testing.T) {
	t.Parallel()
	testdb.Run(t, func(t *testing.T, url string) {
		ctx := context.Background()
		db, err := store.Open(ctx, url)
		require.NoError(t, err)
		t.Cleanup(func() { _ = db.Close() })
		require.NoError(t, db.Migrate(ctx))
		now := time.Now().UTC().Truncate(time.Microsecond)
		user := &domain.User{ID: uuid.NewString(), Slug: "owner", Name: "Owner", Email: "o@example.com",
			Settings: domain.JSON(`{}`), CreatedAt: now, UpdatedAt: now}
		require.NoError(t, db.Users.CreateUser(ctx, user))
		project := &domain.Project{ID: uuid.NewString(), Slug: "proj", Name: "Proj", OwnerID: user.ID,
			Status: domain.ProjectActive, CreatedAt: now, UpdatedAt: now}
		require.NoError(t, db.Projects.CreateProject(ctx, project))
		event := func(n string) *domain.Event {
			return domain.NewTaskUpdated(&domain.Task{ID: uuid.NewString(), ProjectID: project.ID}, []string{n}, now)
		}
		runner := app.NewRunner(db, nil)
		seqs := func() map[string]int64 {
			got, err := db.Events.LastEventSeqs(ctx, []string{project.ID})
			require.NoError(t, err)
			return got
		}

		boom := errors.New("boom")
		var order []string
		err = runner.InTx(ctx, func(tx *app.Tx) error {
			tx.Record(event("a"))
			tx.AfterCommit(func() { order = append(order, "after") })
			return boom
		})
		require.ErrorIs(t, err, boom)
		require.Empty(t, order, "no after-commit work after a rollback")
		require.Zero(t, seqs()[project.ID], "no event of a rolled-back use-case")

		var first, second *domain.Event
		err = runner.InTx(ctx, func(tx *app.Tx) error {
			require.Nil(t, tx.Run(), "a fresh transaction acts for no run")
			tx.ActFor("run-1")
			require.Equal(t, "run-1", *tx.Run())
			first, second = event("b"), event("c")
			tx.Record(first)
			tx.AfterCommit(func() { order = append(order, "after 1") })
			tx.Record(second)
			tx.AfterCommit(func() { order = append(order, "after 2") })
			order = append(order, "work")
			return nil
		})
		require.NoError(t, err)
		require.Equal(t, []string{"work", "after 1", "after 2"}, order)
		require.Equal(t, int64(1), first.Seq)
		require.Equal(t, int64(2), second.Seq)
		require.Equal(t, int64(2), seqs()[project.ID])
	})
}
