package store_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/store"
	"github.com/taskgraph/taskgraph/internal/testdb"
)

// base is the fixed clock of the store tests: stored values are UTC at
// microsecond precision, as the service writes them.
var base = time.Date(2025, 6, 1, 9, 30, 0, 123456000, time.UTC)

func ts(d time.Duration) time.Time { return base.Add(d).UTC().Truncate(time.Microsecond) }

func ptr[T any](v T) *T { return &v }

// bundle is one migrated database with a user and a project in it.
type bundle struct {
	db      *store.DB
	ctx     context.Context
	user    *domain.User
	project *domain.Project
}

// setup opens and migrates the database at url and seeds one user and project.
func setup(t testing.TB, url string) *bundle {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, url)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	require.NoError(t, db.Migrate(ctx))
	b := &bundle{db: db, ctx: ctx}
	b.user = b.newUser(t, "owner")
	b.project = b.newProject(t, "proj")
	return b
}

// run runs f on every test database with a fresh bundle.
// Each test has databases of its own, so tests run in parallel.
func run(t *testing.T, f func(t *testing.T, b *bundle)) {
	t.Parallel()
	testdb.Run(t, func(t *testing.T, url string) { f(t, setup(t, url)) })
}

func (b *bundle) newUser(t testing.TB, slug string) *domain.User {
	t.Helper()
	u := &domain.User{ID: uuid.NewString(), Slug: slug, Name: "User " + slug, Email: slug + "@example.com",
		Settings: domain.JSON(`{}`), CreatedAt: ts(0), UpdatedAt: ts(0)}
	require.NoError(t, b.db.Users.CreateUser(b.ctx, u))
	return u
}

func (b *bundle) newProject(t testing.TB, slug string) *domain.Project {
	t.Helper()
	p := &domain.Project{ID: uuid.NewString(), Slug: slug, Name: "Project " + slug, OwnerID: b.user.ID,
		Status: domain.ProjectActive, CreatedAt: ts(0), UpdatedAt: ts(0)}
	require.NoError(t, b.db.Projects.CreateProject(b.ctx, p))
	return p
}

// newList inserts a draft task list of the project, running at most
// maxParallel agents at once.
func (b *bundle) newList(t testing.TB, name string, maxParallel int) *domain.TaskList {
	t.Helper()
	l := &domain.TaskList{ID: uuid.NewString(), Schedule: domain.ScheduleWaves, Name: name, ProjectID: b.project.ID, UserID: b.user.ID,
		Status: domain.ListDraft, MaxParallelAgents: maxParallel, CreatedAt: ts(0), UpdatedAt: ts(0)}
	require.NoError(t, b.db.Lists.InsertTaskList(b.ctx, l))
	return l
}

// task returns a minimal valid task of project p, number n; mutate it before insert.
func (b *bundle) task(p *domain.Project, n int) *domain.Task {
	t := &domain.Task{
		ID: uuid.NewString(), UserID: b.user.ID,
		ProjectID: p.ID, Title: fmt.Sprintf("task %d", n), Category: domain.CategoryTask, Status: domain.StatusDraft,
		RiskLevel: domain.RiskMedium, Priority: domain.PriorityP3, PriorityScore: 40, Version: 1,
		CreatedAt: ts(0), UpdatedAt: ts(0),
	}
	t.SetDisplayID(domain.DisplayID(p.DisplayCode, domain.CategoryTask, n))
	return t
}

func (b *bundle) insertTask(t *testing.T, task *domain.Task) *domain.Task {
	t.Helper()
	require.NoError(t, b.db.Tasks.InsertTask(b.ctx, task))
	return task
}

func (b *bundle) loadTask(t *testing.T, id string) *domain.Task {
	t.Helper()
	got, err := b.db.Tasks.TasksByIDs(b.ctx, []string{id})
	require.NoError(t, err)
	require.Len(t, got, 1)
	return got[0]
}

// utc rewrites every time.Time (and *time.Time) field of the struct v points to
// into UTC, so values read back compare equal with require.Equal.
func utc[T any](v *T) *T {
	rv := reflect.ValueOf(v).Elem()
	for i := 0; i < rv.NumField(); i++ {
		f := rv.Field(i)
		switch x := f.Interface().(type) {
		case time.Time:
			f.Set(reflect.ValueOf(x.UTC()))
		case *time.Time:
			if x != nil {
				u := x.UTC()
				f.Set(reflect.ValueOf(&u))
			}
		}
	}
	return v
}
