package sessions_test

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
	"github.com/taskgraph/taskgraph/internal/service"
	"github.com/taskgraph/taskgraph/internal/sessions"
	"github.com/taskgraph/taskgraph/internal/store"
	"github.com/taskgraph/taskgraph/internal/testdb"
)

// clock is a time the test moves by hand.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(time.Millisecond) // every reading later than the one before
	return c.now
}

// bundle is the sessions' use-cases over a fresh migrated database, with
// principals of every role and a project owned by owner.
type bundle struct {
	t         *testing.T
	db        *store.DB
	svc       *sessions.Service
	core      *service.Service
	admin     *auth.Principal
	owner     *auth.Principal // MEMBER owning the project
	other     *auth.Principal // another MEMBER
	agent     *auth.Principal // AGENT bound to the project
	projectID string
	project   string // its global id
}

func setup(t *testing.T, url string) *bundle {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, url)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	require.NoError(t, db.Migrate(ctx))
	clk := &clock{now: time.Date(2025, 6, 1, 9, 0, 0, 0, time.UTC)}
	core := service.New(db, service.Options{Clock: clk.Now})
	b := &bundle{t: t, db: db, core: core, svc: sessions.New(db, app.NewRunner(db, nil), core, sessions.Options{Clock: clk.Now})}
	user := func(slug string, role domain.Role) *auth.Principal {
		u := &domain.User{ID: uuid.NewString(), Slug: slug, Name: slug, Email: slug + "@example.com",
			Settings: domain.JSON(`{}`), CreatedAt: clk.now, UpdatedAt: clk.now}
		require.NoError(t, db.Users.CreateUser(ctx, u))
		return &auth.Principal{UserID: u.ID, Role: role}
	}
	b.admin = user("root", domain.RoleAdmin)
	b.owner = user("owner", domain.RoleMember)
	b.other = user("other", domain.RoleMember)
	project := &domain.Project{ID: uuid.NewString(), Slug: "web-app", Name: "Web app", OwnerID: b.owner.UserID,
		Status: domain.ProjectActive, CreatedAt: clk.now, UpdatedAt: clk.now}
	require.NoError(t, db.Projects.CreateProject(ctx, project))
	b.projectID, b.project = project.ID, project.GlobalID()
	b.agent = &auth.Principal{UserID: b.owner.UserID, Role: domain.RoleAgent, ProjectID: &project.ID}
	return b
}

// run runs f on every test database with a fresh bundle.
func run(t *testing.T, f func(t *testing.T, b *bundle)) {
	t.Parallel()
	testdb.Run(t, func(t *testing.T, url string) { f(t, setup(t, url)) })
}

// as is a context authenticated as p.
func as(p *auth.Principal) context.Context { return auth.WithPrincipal(context.Background(), p) }

// session opens a session in the bundle's project as the agent.
func (b *bundle) session(state string) *domain.AgentSession {
	b.t.Helper()
	in := domain.CreateAgentSessionInput{ProjectID: b.project, Mission: "ship the feature"}
	if state != "" {
		j := domain.JSON(state)
		in.State = &j
	}
	s, err := b.svc.CreateAgentSession(as(b.agent), in)
	require.NoError(b.t, err)
	return s
}

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

func js(s string) *domain.JSON { j := domain.JSON(s); return &j }
