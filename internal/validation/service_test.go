package validation_test

import (
	"context"
	"io"
	"log/slog"
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
	"github.com/taskgraph/taskgraph/internal/validation"
)

// bundle is the core with validation rules over a fresh migrated database,
// with principals of every role.
type bundle struct {
	t       *testing.T
	db      *store.DB
	svc     *service.Service
	rules   *validation.Service
	admin   *auth.Principal
	owner   *auth.Principal // MEMBER owning project
	other   *auth.Principal // another MEMBER
	agent   *auth.Principal // AGENT bound to project
	project *domain.Project
}

func setup(t *testing.T, url string) *bundle {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, url)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	require.NoError(t, db.Migrate(ctx))
	now := time.Date(2025, 6, 1, 9, 0, 0, 0, time.UTC)
	clk := func() time.Time { return now }
	eng := validation.NewEngine()
	svc := service.New(db, service.Options{Clock: clk, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Gate: validation.NewGate(eng)})
	b := &bundle{t: t, db: db, svc: svc, rules: validation.New(db, app.NewRunner(db, nil), svc, eng, validation.Options{Clock: clk})}
	admin := &domain.User{ID: uuid.NewString(), Slug: "root", Name: "Root", CreatedAt: now, UpdatedAt: now}
	require.NoError(t, db.Users.CreateUser(ctx, admin))
	b.admin = &auth.Principal{UserID: admin.ID, Role: domain.RoleAdmin}
	member := func(slug string) *auth.Principal {
		u, err := svc.Accounts.CreateUser(as(b.admin), domain.CreateUserInput{Name: slug, Slug: slug, Email: slug + "@example.com"})
		require.NoError(t, err)
		return &auth.Principal{UserID: u.ID, Role: domain.RoleMember}
	}
	b.owner, b.other = member("owner"), member("other")
	b.project, err = svc.Projects.CreateProject(as(b.owner), domain.CreateProjectInput{Name: "Web", Slug: "web"})
	require.NoError(t, err)
	b.agent = &auth.Principal{UserID: b.owner.UserID, Role: domain.RoleAgent, ProjectID: &b.project.ID}
	return b
}

func run(t *testing.T, f func(t *testing.T, b *bundle)) {
	t.Parallel()
	testdb.Run(t, func(t *testing.T, url string) { f(t, setup(t, url)) })
}

func as(p *auth.Principal) context.Context { return auth.WithPrincipal(context.Background(), p) }

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

func ids(rules []*domain.ValidationRule) []string {
	out := make([]string, len(rules))
	for i, r := range rules {
		out[i] = r.ID
	}
	return out
}

func (b *bundle) rule(p *auth.Principal, projectID *string, typ domain.ValidationRuleType, config string, sev domain.ValidationSeverity) (*domain.ValidationRule, error) {
	return b.rules.CreateValidationRule(as(p), domain.CreateValidationRuleInput{ProjectID: projectID, Name: string(typ) + " rule",
		RuleType: typ, Config: domain.JSON(config), Severity: &sev})
}

func (b *bundle) mustRule(p *auth.Principal, projectID *string, typ domain.ValidationRuleType, config string, sev domain.ValidationSeverity) *domain.ValidationRule {
	b.t.Helper()
	r, err := b.rule(p, projectID, typ, config, sev)
	require.NoError(b.t, err)
	return r
}

func TestRuleRoles(t *testing.T) {
	run(t, func(t *testing.T, b *bundle) {
		pid := ptr(b.project.GlobalID())
		// Global rules: ADMIN only.
		_, err := b.rule(b.owner, nil, domain.RuleRequiredField, `{"field":"description"}`, domain.SeverityError)
		requireCode(t, err, domain.CodeForbidden)
		_, err = b.rule(b.agent, nil, domain.RuleRequiredField, `{"field":"description"}`, domain.SeverityError)
		requireCode(t, err, domain.CodeForbidden)
		global := b.mustRule(b.admin, nil, domain.RuleRequiredField, `{"field":"description"}`, domain.SeverityWarning)
		require.Nil(t, global.ProjectID)
		// A project's rules: its owner's (and ADMIN's); another MEMBER does not
		// see the project, an AGENT may not change anything.
		own := b.mustRule(b.owner, pid, domain.RuleTestRequired, `{"levels":["CODEBASE"],"min":1}`, domain.SeverityError)
		require.Equal(t, b.project.ID, *own.ProjectID)
		require.Equal(t, domain.Categories{}, own.CategoryFilter)
		require.True(t, own.Enabled)
		_, err = b.rule(b.other, pid, domain.RuleRequiredField, `{"field":"effort"}`, domain.SeverityError)
		requireCode(t, err, domain.CodeNotFound, "projectId")
		_, err = b.rule(b.agent, pid, domain.RuleRequiredField, `{"field":"effort"}`, domain.SeverityError)
		requireCode(t, err, domain.CodeForbidden)

		_, err = b.rules.UpdateValidationRule(as(b.owner), domain.UpdateValidationRuleInput{ID: global.GlobalID(), Enabled: ptr(false)})
		requireCode(t, err, domain.CodeForbidden)
		_, err = b.rules.UpdateValidationRule(as(b.agent), domain.UpdateValidationRuleInput{ID: own.GlobalID(), Enabled: ptr(false)})
		requireCode(t, err, domain.CodeForbidden)
		_, err = b.rules.UpdateValidationRule(as(b.other), domain.UpdateValidationRuleInput{ID: own.GlobalID(), Enabled: ptr(false)})
		requireCode(t, err, domain.CodeNotFound, "id")
		_, err = b.rules.DeleteValidationRule(as(b.agent), domain.DeleteValidationRuleInput{ID: own.GlobalID()})
		requireCode(t, err, domain.CodeForbidden)
		_, err = b.rules.DeleteValidationRule(as(b.owner), domain.DeleteValidationRuleInput{ID: global.GlobalID()})
		requireCode(t, err, domain.CodeForbidden)

		// Reads: the project's rules and the global ones.
		for _, p := range []*auth.Principal{b.owner, b.agent, b.admin} {
			pg, err := b.rules.ValidationRules(as(p), pid, domain.PageArgs{})
			require.NoError(t, err)
			require.Equal(t, []string{global.ID, own.ID}, ids(pg.Items))
		}
		pg, err := b.rules.ValidationRules(as(b.other), nil, domain.PageArgs{})
		require.NoError(t, err)
		require.Equal(t, []string{global.ID}, ids(pg.Items), "without a project: the global rules")
		_, err = b.rules.ValidationRules(as(b.other), pid, domain.PageArgs{})
		requireCode(t, err, domain.CodeNotFound, "projectId")

		nodes := app.NewNodes(b.svc.NodeOf, b.rules.NodeOf)
		n, err := nodes.Node(as(b.agent), own.GlobalID())
		require.NoError(t, err)
		require.Equal(t, own.ID, n.(*domain.ValidationRule).ID)
		n, err = nodes.Node(as(b.other), own.GlobalID())
		require.NoError(t, err)
		require.Nil(t, n, "invisible to another member")
		n, err = nodes.Node(as(b.other), global.GlobalID())
		require.NoError(t, err)
		require.Equal(t, global.ID, n.(*domain.ValidationRule).ID)
	})
}

func TestRuleUpdateAndDelete(t *testing.T) {
	run(t, func(t *testing.T, b *bundle) {
		pid := ptr(b.project.GlobalID())
		r := b.mustRule(b.owner, pid, domain.RulePatternMatch, `{"field": "title", "pattern": "^\\["}`, domain.SeverityError)
		require.Equal(t, `{"field":"title","pattern":"^\\["}`, string(r.Config))
		_, err := b.rules.UpdateValidationRule(as(b.owner), domain.UpdateValidationRuleInput{ID: r.GlobalID(), Config: domain.JSON(`{"field":"title","pattern":"("}`)})
		requireCode(t, err, domain.CodeBadUserInput, "config")
		_, err = b.rules.UpdateValidationRule(as(b.owner), domain.UpdateValidationRuleInput{ID: r.GlobalID(), Config: domain.JSON(`{"field":"description"}`)})
		requireCode(t, err, domain.CodeBadUserInput, "config")
		_, err = b.rules.UpdateValidationRule(as(b.owner), domain.UpdateValidationRuleInput{ID: r.GlobalID(), Name: ptr(" ")})
		requireCode(t, err, domain.CodeBadUserInput, "name")
		got, err := b.rules.UpdateValidationRule(as(b.owner), domain.UpdateValidationRuleInput{ID: r.GlobalID(), Name: ptr("Prefix"),
			CategoryFilter: []domain.TaskCategory{domain.CategoryBug, domain.CategoryBug, domain.CategoryFeature},
			Severity:       ptr(domain.SeverityWarning), Enabled: ptr(false), Config: domain.JSON(`{"field":"description","pattern":"x"}`)})
		require.NoError(t, err)
		require.Equal(t, "Prefix", got.Name)
		require.Equal(t, domain.Categories{domain.CategoryBug, domain.CategoryFeature}, got.CategoryFilter)
		require.Equal(t, domain.SeverityWarning, got.Severity)
		require.False(t, got.Enabled)
		require.Equal(t, 2, got.Version)
		stored, err := b.db.Validation.RulesByIDs(context.Background(), []string{r.ID})
		require.NoError(t, err)
		require.Equal(t, got.Name, stored[0].Name)
		require.Equal(t, got.CategoryFilter, stored[0].CategoryFilter)
		require.Equal(t, got.Config, stored[0].Config)
		require.Equal(t, got.Severity, stored[0].Severity)
		require.Equal(t, got.Enabled, stored[0].Enabled)
		require.Equal(t, got.Version, stored[0].Version)
		require.True(t, got.UpdatedAt.Equal(stored[0].UpdatedAt))

		id, err := b.rules.DeleteValidationRule(as(b.owner), domain.DeleteValidationRuleInput{ID: r.GlobalID()})
		require.NoError(t, err)
		require.Equal(t, r.GlobalID(), id)
		_, err = b.rules.DeleteValidationRule(as(b.owner), domain.DeleteValidationRuleInput{ID: r.GlobalID()})
		requireCode(t, err, domain.CodeNotFound, "id")
	})
}

func TestCreateRuleInput(t *testing.T) {
	run(t, func(t *testing.T, b *bundle) {
		pid := ptr(b.project.GlobalID())
		_, err := b.rule(b.owner, pid, domain.RuleCustom, `{"expression":"task.title"}`, domain.SeverityError)
		requireCode(t, err, domain.CodeBadUserInput, "config")
		_, err = b.rule(b.owner, pid, domain.RuleRequiredField, `{"field":"nope"}`, domain.SeverityError)
		requireCode(t, err, domain.CodeBadUserInput, "config")
		_, err = b.rule(b.owner, pid, "BOGUS", `{}`, domain.SeverityError)
		requireCode(t, err, domain.CodeBadUserInput, "ruleType")
		_, err = b.rule(b.owner, pid, domain.RuleRequiredField, `{"field":"effort"}`, "FATAL")
		requireCode(t, err, domain.CodeBadUserInput, "severity")
		_, err = b.rules.CreateValidationRule(as(b.owner), domain.CreateValidationRuleInput{ProjectID: pid, Name: "x",
			RuleType: domain.RuleRequiredField, Config: domain.JSON(`{"field":"effort"}`), CategoryFilter: []domain.TaskCategory{"NOPE"}})
		requireCode(t, err, domain.CodeBadUserInput, "categoryFilter")
		r, err := b.rules.CreateValidationRule(as(b.owner), domain.CreateValidationRuleInput{ProjectID: pid, Name: "x",
			RuleType: domain.RuleRequiredField, Config: domain.JSON(`{"field":"effort"}`)})
		require.NoError(t, err)
		require.Equal(t, domain.SeverityError, r.Severity, "default severity")
		require.True(t, r.Enabled, "enabled by default")
		for range validation.MaxRules - 1 {
			b.mustRule(b.owner, pid, domain.RuleRequiredField, `{"field":"effort"}`, domain.SeverityWarning)
		}
		_, err = b.rule(b.owner, pid, domain.RuleRequiredField, `{"field":"effort"}`, domain.SeverityWarning)
		requireCode(t, err, domain.CodeLimitExceeded, "projectId")
		b.mustRule(b.admin, nil, domain.RuleRequiredField, `{"field":"effort"}`, domain.SeverityWarning)
	})
}

func TestTaskValidation(t *testing.T) {
	run(t, func(t *testing.T, b *bundle) {
		pid := ptr(b.project.GlobalID())
		warn := b.mustRule(b.admin, nil, domain.RuleRequiredField, `{"field":"effort"}`, domain.SeverityWarning)
		errRule := b.mustRule(b.owner, pid, domain.RuleCustom,
			`{"expression":"task.fileImpacts.all(f, f.operation != 'DELETE')","message":"no deletes"}`, domain.SeverityError)
		other, err := b.svc.Projects.CreateProject(as(b.other), domain.CreateProjectInput{Name: "Other", Slug: "other"})
		require.NoError(t, err)
		b.mustRule(b.other, ptr(other.GlobalID()), domain.RuleRequiredField, `{"field":"description"}`, domain.SeverityError)

		task, err := b.svc.Tasks.CreateTask(as(b.owner), domain.CreateTaskInput{ProjectID: b.project.GlobalID(), Title: "t",
			FileImpacts: []*domain.FileImpactInput{{FilePath: "old.go", Operation: domain.OpDelete}}})
		require.NoError(t, err)
		v, err := b.rules.TaskValidation(as(b.owner), task)
		require.NoError(t, err)
		require.False(t, v.Valid)
		require.Len(t, v.Violations, 2)
		require.Equal(t, warn.ID, v.Violations[0].Rule.ID)
		require.Equal(t, domain.SeverityWarning, v.Violations[0].Severity)
		require.Equal(t, errRule.ID, v.Violations[1].Rule.ID)
		require.Equal(t, "no deletes", v.Violations[1].Message)
	})
}
