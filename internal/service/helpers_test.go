package service_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/auth"
	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/service"
	"github.com/taskgraph/taskgraph/internal/store"
	"github.com/taskgraph/taskgraph/internal/testdb"
)

// clock is a fixed time the test moves by hand.
type clock = testdb.Clock

// start is where every test clock begins; stored times are UTC microseconds.
var start = time.Date(2025, 6, 1, 9, 0, 0, 123456789, time.UTC)

func at(d time.Duration) time.Time { return start.Add(d).Truncate(time.Microsecond) }

// bundle is a service over a fresh migrated database, with principals of every role.
type bundle struct {
	t       *testing.T
	db      *store.DB
	svc     *service.Service
	clock   *clock
	admin   *auth.Principal
	owner   *auth.Principal // MEMBER owning project
	other   *auth.Principal // MEMBER owning nothing of project
	agent   *auth.Principal // AGENT bound to project
	project *domain.Project // owned by owner
}

func newService(t *testing.T, url string) (*store.DB, *service.Service, *clock) {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, url)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	require.NoError(t, db.Migrate(ctx))
	clk := testdb.NewClock(start)
	svc := service.New(db, service.Options{Clock: clk.Now, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	return db, svc, clk
}

func setup(t *testing.T, url string) *bundle {
	t.Helper()
	db, svc, clk := newService(t, url)
	b := &bundle{t: t, db: db, svc: svc, clock: clk}
	adminUser := &domain.User{ID: uuid.NewString(), Slug: "root", Name: "Root", CreatedAt: at(0), UpdatedAt: at(0)}
	require.NoError(t, db.Users.CreateUser(context.Background(), adminUser))
	b.admin = &auth.Principal{UserID: adminUser.ID, Role: domain.RoleAdmin}
	b.owner = b.member("owner")
	b.other = b.member("other")
	b.project = b.createProject(b.owner, "web-app")
	b.agent = &auth.Principal{UserID: b.owner.UserID, Role: domain.RoleAgent, ProjectID: &b.project.ID}
	return b
}

// run runs f on every test database with a fresh bundle.
// Each test has databases of its own, so tests run in parallel.
func run(t *testing.T, f func(t *testing.T, b *bundle)) {
	t.Parallel()
	testdb.Run(t, func(t *testing.T, url string) { f(t, setup(t, url)) })
}

// as is a context authenticated as p.
func as(p *auth.Principal) context.Context {
	return auth.WithPrincipal(context.Background(), p)
}

func (b *bundle) member(slug string) *auth.Principal {
	b.t.Helper()
	u, err := b.svc.Accounts.CreateUser(as(b.admin), domain.CreateUserInput{Name: "User " + slug, Slug: slug, Email: slug + "@example.com"})
	require.NoError(b.t, err)
	return &auth.Principal{UserID: u.ID, Role: domain.RoleMember}
}

func (b *bundle) createProject(p *auth.Principal, slug string) *domain.Project {
	b.t.Helper()
	project, err := b.svc.Projects.CreateProject(as(p), domain.CreateProjectInput{Name: "Project " + slug, Slug: slug})
	require.NoError(b.t, err)
	return project
}

// createTask creates a task in the bundle's project as its owner.
func (b *bundle) createTask(title string, edit ...func(*domain.CreateTaskInput)) *domain.Task {
	b.t.Helper()
	in := domain.CreateTaskInput{ProjectID: b.project.GlobalID(), Title: title}
	for _, e := range edit {
		e(&in)
	}
	task, err := b.svc.Tasks.CreateTask(as(b.owner), in)
	require.NoError(b.t, err)
	return task
}

// reload reads a task back from the database.
func (b *bundle) reload(task *domain.Task) *domain.Task {
	b.t.Helper()
	got, err := b.db.Tasks.TasksByIDs(context.Background(), []string{task.ID})
	require.NoError(b.t, err)
	require.Len(b.t, got, 1)
	return got[0]
}

func (b *bundle) link(source, target *domain.Task, typ domain.RelationshipType) (*domain.TaskRelationship, error) {
	return b.svc.Tasks.AddTaskRelationship(as(b.owner), domain.AddTaskRelationshipInput{
		SourceTaskID: source.GlobalID(), TargetTaskID: target.GlobalID(), Type: typ})
}

func (b *bundle) mustLink(source, target *domain.Task, typ domain.RelationshipType) *domain.TaskRelationship {
	b.t.Helper()
	r, err := b.link(source, target, typ)
	require.NoError(b.t, err)
	return r
}

func (b *bundle) transition(task *domain.Task, to domain.TaskStatus) *domain.Task {
	b.t.Helper()
	got, _, err := b.svc.Tasks.TransitionTask(as(b.owner), domain.TransitionTaskInput{ID: task.GlobalID(), To: to})
	require.NoError(b.t, err)
	return got
}

// requireCode asserts err is a domain error with code (and field, when given).
func requireCode(t *testing.T, err error, code domain.Code, field ...string) *domain.Error {
	t.Helper()
	require.Error(t, err)
	e, ok := domain.AsError(err)
	require.True(t, ok, "not a domain error: %v", err)
	require.Equal(t, code, e.Code, "%v", err)
	if len(field) > 0 {
		require.Equal(t, field[0], e.Field, "%v", err)
	}
	return e
}

func ptr[T any](v T) *T { return &v }

func service_TasksArgs() service.TasksArgs { return service.TasksArgs{} }
