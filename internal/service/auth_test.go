package service_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/auth"
	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/testdb"
)

func TestAuthorization(t *testing.T) {
	run(t, func(t *testing.T, b *bundle) {
		task := b.createTask("owned")
		list, err := b.svc.Lists.CreateTaskList(as(b.owner), domain.CreateTaskListInput{ProjectID: b.project.GlobalID(), Name: "L"})
		require.NoError(t, err)
		peer := b.createTask("peer")
		b.mustLink(task, peer, domain.RelRelatedTo)

		// readers: admin, owner and the project's agent see everything of the project
		for name, p := range map[string]*auth.Principal{"admin": b.admin, "owner": b.owner, "agent": b.agent} {
			got, err := b.svc.Tasks.Task(as(p), ptr(task.GlobalID()), nil)
			require.NoError(t, err, name)
			require.NotNil(t, got, name)
			project, err := b.svc.Projects.Project(as(p), ptr(b.project.GlobalID()), nil)
			require.NoError(t, err, name)
			require.NotNil(t, project, name)
			page, err := b.svc.Tasks.ListTasks(as(p), ptr(b.project.GlobalID()), service_TasksArgs())
			require.NoError(t, err, name)
			require.Len(t, page.Items, 2, name)
			node, err := b.svc.Node(as(p), list.GlobalID())
			require.NoError(t, err, name)
			require.NotNil(t, node, name)
		}

		// another member: the project does not exist for them
		ctx := as(b.other)
		got, err := b.svc.Tasks.Task(ctx, ptr(task.GlobalID()), nil)
		require.NoError(t, err)
		require.Nil(t, got)
		got, err = b.svc.Tasks.Task(ctx, nil, &task.DisplayID)
		require.NoError(t, err)
		require.Nil(t, got)
		project, err := b.svc.Projects.Project(ctx, nil, &b.project.Slug)
		require.NoError(t, err)
		require.Nil(t, project)
		node, err := b.svc.Node(ctx, task.GlobalID())
		require.NoError(t, err)
		require.Nil(t, node)
		tl, err := b.svc.Lists.TaskList(ctx, list.GlobalID())
		require.NoError(t, err)
		require.Nil(t, tl)
		page, err := b.svc.Tasks.ListTasks(ctx, nil, service_TasksArgs())
		require.NoError(t, err)
		require.Empty(t, page.Items, "a member's task list holds only their projects")
		projects, err := b.svc.Projects.ListProjects(ctx, nil, domain.PageArgs{})
		require.NoError(t, err)
		require.Empty(t, projects.Items)

		notFound := []struct {
			name string
			call func() error
		}{
			{"tasks of project", func() error {
				_, err := b.svc.Tasks.ListTasks(ctx, ptr(b.project.GlobalID()), service_TasksArgs())
				return err
			}},
			{"createTask", func() error {
				_, err := b.svc.Tasks.CreateTask(ctx, domain.CreateTaskInput{ProjectID: b.project.GlobalID(), Title: "x"})
				return err
			}},
			{"updateTask", func() error {
				_, err := b.svc.Tasks.UpdateTask(ctx, domain.UpdateTaskInput{ID: task.GlobalID(), Title: ptr("x")})
				return err
			}},
			{"transitionTask", func() error {
				_, _, err := b.svc.Tasks.TransitionTask(ctx, domain.TransitionTaskInput{ID: task.GlobalID(), To: domain.StatusPending})
				return err
			}},
			{"addTaskRelationship", func() error {
				_, err := b.svc.Tasks.AddTaskRelationship(ctx, domain.AddTaskRelationshipInput{SourceTaskID: task.GlobalID(),
					TargetTaskID: peer.GlobalID(), Type: domain.RelDependsOn})
				return err
			}},
			{"createTaskList", func() error {
				_, err := b.svc.Lists.CreateTaskList(ctx, domain.CreateTaskListInput{ProjectID: b.project.GlobalID(), Name: "x"})
				return err
			}},
			{"addTasksToList", func() error {
				_, _, err := b.svc.Lists.AddTasksToList(ctx, domain.AddTasksToListInput{TaskListID: list.GlobalID(), TaskIDs: []string{task.GlobalID()}})
				return err
			}},
			{"createTaskBlock", func() error {
				_, _, err := b.svc.Tasks.CreateTaskBlock(ctx, domain.CreateTaskBlockInput{TaskID: task.GlobalID(), BlockType: domain.BlockManual, Reason: "x"})
				return err
			}},
			{"updateProject", func() error {
				_, err := b.svc.Projects.UpdateProject(ctx, domain.UpdateProjectInput{ID: b.project.GlobalID(), Name: ptr("x")})
				return err
			}},
		}
		for _, tc := range notFound {
			t.Run("other member "+tc.name, func(t *testing.T) { requireCode(t, tc.call(), domain.CodeNotFound) })
		}
		// a task of the member's own project cannot be linked to a task they cannot see
		mine := b.createProject(b.other, "mine")
		own, err := b.svc.Tasks.CreateTask(ctx, domain.CreateTaskInput{ProjectID: mine.GlobalID(), Title: "own"})
		require.NoError(t, err)
		_, err = b.svc.Tasks.AddTaskRelationship(ctx, domain.AddTaskRelationshipInput{SourceTaskID: own.GlobalID(),
			TargetTaskID: task.GlobalID(), Type: domain.RelRelatedTo})
		requireCode(t, err, domain.CodeNotFound, "targetTaskId")

		// the agent reads its project but calls no ordinary mutation
		actx := as(b.agent)
		forbidden := []struct {
			name string
			call func() error
		}{
			{"createTask", func() error {
				_, err := b.svc.Tasks.CreateTask(actx, domain.CreateTaskInput{ProjectID: b.project.GlobalID(), Title: "x"})
				return err
			}},
			{"updateTask", func() error {
				_, err := b.svc.Tasks.UpdateTask(actx, domain.UpdateTaskInput{ID: task.GlobalID(), Title: ptr("x")})
				return err
			}},
			{"transitionTask", func() error {
				_, _, err := b.svc.Tasks.TransitionTask(actx, domain.TransitionTaskInput{ID: task.GlobalID(), To: domain.StatusPending})
				return err
			}},
			{"addTaskRelationship", func() error {
				_, err := b.svc.Tasks.AddTaskRelationship(actx, domain.AddTaskRelationshipInput{SourceTaskID: task.GlobalID(),
					TargetTaskID: peer.GlobalID(), Type: domain.RelDependsOn})
				return err
			}},
			{"createProject", func() error {
				_, err := b.svc.Projects.CreateProject(actx, domain.CreateProjectInput{Name: "x", Slug: "agent-project"})
				return err
			}},
			{"createTaskList", func() error {
				_, err := b.svc.Lists.CreateTaskList(actx, domain.CreateTaskListInput{ProjectID: b.project.GlobalID(), Name: "x"})
				return err
			}},
			{"addTasksToList", func() error {
				_, _, err := b.svc.Lists.AddTasksToList(actx, domain.AddTasksToListInput{TaskListID: list.GlobalID(), TaskIDs: []string{task.GlobalID()}})
				return err
			}},
			{"createTaskBlock", func() error {
				_, _, err := b.svc.Tasks.CreateTaskBlock(actx, domain.CreateTaskBlockInput{TaskID: task.GlobalID(), BlockType: domain.BlockManual, Reason: "x"})
				return err
			}},
			{"createTaskTemplate", func() error {
				_, err := b.svc.Tasks.CreateTaskTemplate(actx, domain.CreateTaskTemplateInput{Name: "x", Category: domain.CategoryTask, Scope: domain.ScopeUser})
				return err
			}},
			{"createUser", func() error {
				_, err := b.svc.Accounts.CreateUser(actx, domain.CreateUserInput{Name: "x", Slug: "x"})
				return err
			}},
			{"createApiToken", func() error {
				_, _, err := b.svc.Accounts.CreateAPIToken(actx, domain.CreateAPITokenInput{UserID: domain.GlobalID(domain.KindUser, b.owner.UserID),
					Name: "x", Role: domain.RoleMember})
				return err
			}},
		}
		for _, tc := range forbidden {
			t.Run("agent "+tc.name, func(t *testing.T) { requireCode(t, tc.call(), domain.CodeForbidden) })
		}
		require.Equal(t, "owned", b.reload(task).Title, "nothing changed")
		require.Equal(t, 1, b.reload(task).Version)

		// an agent of another project sees nothing of this one
		stranger := &auth.Principal{UserID: b.other.UserID, Role: domain.RoleAgent, ProjectID: &mine.ID}
		got, err = b.svc.Tasks.Task(as(stranger), ptr(task.GlobalID()), nil)
		require.NoError(t, err)
		require.Nil(t, got)
		_, err = b.svc.Tasks.ListTasks(as(stranger), ptr(b.project.GlobalID()), service_TasksArgs())
		requireCode(t, err, domain.CodeNotFound)

		// members cannot create users or admin tokens
		_, err = b.svc.Accounts.CreateUser(as(b.owner), domain.CreateUserInput{Name: "x", Slug: "x"})
		requireCode(t, err, domain.CodeForbidden)
		_, _, err = b.svc.Accounts.CreateAPIToken(as(b.owner), domain.CreateAPITokenInput{UserID: domain.GlobalID(domain.KindUser, b.owner.UserID),
			Name: "x", Role: domain.RoleAdmin})
		requireCode(t, err, domain.CodeForbidden)
		_, _, err = b.svc.Accounts.CreateAPIToken(as(b.owner), domain.CreateAPITokenInput{UserID: domain.GlobalID(domain.KindUser, b.other.UserID),
			Name: "x", Role: domain.RoleMember})
		requireCode(t, err, domain.CodeForbidden)
		_, _, err = b.svc.Accounts.CreateAPIToken(as(b.other), domain.CreateAPITokenInput{UserID: domain.GlobalID(domain.KindUser, b.other.UserID),
			Name: "x", Role: domain.RoleAgent, ProjectID: ptr(b.project.GlobalID())})
		requireCode(t, err, domain.CodeNotFound, "projectId")

		// no principal at all
		_, err = b.svc.Tasks.CreateTask(context.Background(), domain.CreateTaskInput{ProjectID: b.project.GlobalID(), Title: "x"})
		requireCode(t, err, domain.CodeUnauthenticated)
		_, err = b.svc.Tasks.Task(context.Background(), ptr(task.GlobalID()), nil)
		requireCode(t, err, domain.CodeUnauthenticated)
		_, err = b.svc.Accounts.Viewer(context.Background())
		requireCode(t, err, domain.CodeUnauthenticated)
	})
}

func TestBootstrapAdminWithToken(t *testing.T) {
	testdb.Run(t, func(t *testing.T, url string) {
		db, svc, _ := newService(t, url)
		ctx := context.Background()
		const token = "operator-chosen-secret"
		for range 3 {
			printed, err := svc.Accounts.BootstrapAdmin(ctx, token)
			require.NoError(t, err)
			require.Empty(t, printed, "a given token is never printed")
		}
		p, err := svc.Accounts.Authenticate(ctx, token)
		require.NoError(t, err)
		require.NotNil(t, p)
		require.Equal(t, domain.RoleAdmin, p.Role)
		require.Nil(t, p.ProjectID)
		n, err := db.Users.CountUsers(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, n, "idempotent: one admin")
		toks, err := svc.Accounts.APITokensOfUser(as(p), p.UserID)
		require.NoError(t, err)
		require.Len(t, toks, 1, "idempotent: one token")
		require.NotContains(t, toks[0].TokenHash, token, "only the hash is stored")

		u, err := svc.Accounts.Viewer(as(p))
		require.NoError(t, err)
		require.Equal(t, "admin", u.Slug)

		// revoked, then given again on the next start: it works again
		_, err = svc.Accounts.RevokeAPIToken(as(p), domain.RevokeAPITokenInput{ID: toks[0].GlobalID()})
		require.NoError(t, err)
		gone, err := svc.Accounts.Authenticate(ctx, token)
		require.NoError(t, err)
		require.Nil(t, gone)
		_, err = svc.Accounts.BootstrapAdmin(ctx, token)
		require.NoError(t, err)
		p2, err := svc.Accounts.Authenticate(ctx, token)
		require.NoError(t, err)
		require.NotNil(t, p2)
		require.Equal(t, p.UserID, p2.UserID)

		// a second token for the same admin leaves the first in place
		_, err = svc.Accounts.BootstrapAdmin(ctx, "another-secret")
		require.NoError(t, err)
		for _, tok := range []string{token, "another-secret"} {
			p, err := svc.Accounts.Authenticate(ctx, tok)
			require.NoError(t, err)
			require.NotNil(t, p, tok)
		}
		n, err = db.Users.CountUsers(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, n)
	})
}

func TestBootstrapAdminWithoutToken(t *testing.T) {
	testdb.Run(t, func(t *testing.T, url string) {
		db, svc, _ := newService(t, url)
		ctx := context.Background()
		printed, err := svc.Accounts.BootstrapAdmin(ctx, "")
		require.NoError(t, err)
		require.True(t, strings.HasPrefix(printed, auth.TokenPrefix), printed)
		p, err := svc.Accounts.Authenticate(ctx, printed)
		require.NoError(t, err)
		require.NotNil(t, p)
		require.Equal(t, domain.RoleAdmin, p.Role)

		again, err := svc.Accounts.BootstrapAdmin(ctx, "")
		require.NoError(t, err)
		require.Empty(t, again, "printed once only")
		n, err := db.Users.CountUsers(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, n)
	})
	testdb.Run(t, func(t *testing.T, url string) {
		b := setup(t, url) // users exist already
		printed, err := b.svc.Accounts.BootstrapAdmin(context.Background(), "")
		require.NoError(t, err)
		require.Empty(t, printed, "a database with users gets no new admin")
		_, err = b.db.Users.UserBySlug(context.Background(), "admin")
		require.Error(t, err)
	})
}

func TestAuthenticate(t *testing.T) {
	run(t, func(t *testing.T, b *bundle) {
		ctx := context.Background()
		for _, tok := range []string{"", "tg_unknown", "Bearer x", strings.Repeat("x", 5000)} {
			p, err := b.svc.Accounts.Authenticate(ctx, tok)
			require.NoError(t, err, tok)
			require.Nil(t, p, tok)
		}

		plain, tok, err := b.svc.Accounts.CreateAPIToken(as(b.owner), domain.CreateAPITokenInput{UserID: domain.GlobalID(domain.KindUser, b.owner.UserID),
			Name: "ci agent", Role: domain.RoleAgent, ProjectID: ptr(b.project.GlobalID())})
		require.NoError(t, err)
		require.True(t, strings.HasPrefix(plain, auth.TokenPrefix))
		require.Equal(t, auth.HashToken(plain), tok.TokenHash)
		p, err := b.svc.Accounts.Authenticate(ctx, plain)
		require.NoError(t, err)
		require.Equal(t, &auth.Principal{UserID: b.owner.UserID, TokenID: tok.ID, Role: domain.RoleAgent, ProjectID: &b.project.ID}, p)

		toks, err := b.svc.Accounts.APITokensOfUser(as(b.owner), b.owner.UserID)
		require.NoError(t, err)
		require.Len(t, toks, 1)
		require.NotNil(t, toks[0].LastUsedAt, "use is recorded")
		require.True(t, at(0).Equal(*toks[0].LastUsedAt))
		hidden, err := b.svc.Accounts.APITokensOfUser(as(b.other), b.owner.UserID)
		require.NoError(t, err)
		require.Empty(t, hidden, "other members do not see the tokens")

		_, err = b.svc.Accounts.RevokeAPIToken(as(b.other), domain.RevokeAPITokenInput{ID: tok.GlobalID()})
		requireCode(t, err, domain.CodeNotFound)
		revoked, err := b.svc.Accounts.RevokeAPIToken(as(b.owner), domain.RevokeAPITokenInput{ID: tok.GlobalID()})
		require.NoError(t, err)
		require.NotNil(t, revoked.RevokedAt)
		p, err = b.svc.Accounts.Authenticate(ctx, plain)
		require.NoError(t, err)
		require.Nil(t, p, "a revoked token authenticates nobody")
		again, err := b.svc.Accounts.RevokeAPIToken(as(b.owner), domain.RevokeAPITokenInput{ID: tok.GlobalID()})
		require.NoError(t, err, "revoking twice is harmless")
		require.True(t, revoked.RevokedAt.Equal(*again.RevokedAt))
	})
}
