package catalog_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/auth"
	"github.com/taskgraph/taskgraph/internal/catalog"
	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/store"
	"github.com/taskgraph/taskgraph/internal/testdb"
)

// clock is a fixed time the test moves by hand.
type clock = testdb.Clock

// bundle is the catalog over a fresh migrated database, with principals of
// every role.
type bundle struct {
	t     *testing.T
	db    *store.DB
	svc   *catalog.Service
	clock *clock
	admin *auth.Principal
	owner *auth.Principal // MEMBER owning a project
	other *auth.Principal // another MEMBER
	agent *auth.Principal // AGENT bound to owner's project
}

func setup(t *testing.T, url string) *bundle {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, url)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	require.NoError(t, db.Migrate(ctx))
	clk := testdb.NewClock(time.Date(2025, 6, 1, 9, 0, 0, 0, time.UTC))
	b := &bundle{t: t, db: db, clock: clk,
		svc: catalog.New(db, app.NewRunner(db, nil), catalog.Options{Clock: clk.Now, DataDir: t.TempDir()})}
	user := func(slug string, role domain.Role) *auth.Principal {
		u := &domain.User{ID: uuid.NewString(), Slug: slug, Name: slug, Email: slug + "@example.com",
			Settings: domain.JSON(`{}`), CreatedAt: clk.Now(), UpdatedAt: clk.Now()}
		require.NoError(t, db.Users.CreateUser(ctx, u))
		return &auth.Principal{UserID: u.ID, Role: role}
	}
	b.admin = user("root", domain.RoleAdmin)
	b.owner = user("owner", domain.RoleMember)
	b.other = user("other", domain.RoleMember)
	project := &domain.Project{ID: uuid.NewString(), Slug: "web-app", Name: "Web app", OwnerID: b.owner.UserID,
		Status: domain.ProjectActive, CreatedAt: clk.Now(), UpdatedAt: clk.Now()}
	require.NoError(t, db.Projects.CreateProject(ctx, project))
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

// node resolves a global id through the catalog, as node() does.
func (b *bundle) node(ctx context.Context, gid string) (domain.Node, error) {
	return app.NewNodes(b.svc.NodeOf).Node(ctx, gid)
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
