// Package validation holds the use-cases of validation rules: checks a task
// must pass before it enters PENDING or an execution run of its list starts.
// A rule belongs to a project (its owner changes it) or is global (projectId
// null, ADMIN only) and then applies to every project's tasks; AGENT tokens
// never change rules.
//
// The evaluator (engine.go, cel.go) is pure code; Gate (gate.go) is what the
// core calls inside its transactions; Service reads and writes rules and
// gives the verdicts shown in Task.validation and WavePlan.violations. Its
// entities are in internal/domain (validation.go), its SQL in internal/store
// (q.Validation).
package validation

import (
	"context"
	"fmt"
	"time"

	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/auth"
	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/service"
	"github.com/taskgraph/taskgraph/internal/store"
)

// MaxRules bounds the rules of one project, and the global rules.
const MaxRules = 50

// Options configure a Service.
type Options struct {
	// Clock is the time source (tests inject their own); default the
	// database's clock (store.DB.Clock).
	Clock func() time.Time
}

// Service is the validation rules' use-cases.
type Service struct {
	db    *store.DB
	run   *app.Runner
	core  *service.Service
	eng   *Engine
	clock func() time.Time
}

// New returns the validation use-cases over db, committing through run, with
// eng (shared with the Gate given to the core) evaluating rules.
func New(db *store.DB, run *app.Runner, core *service.Service, eng *Engine, opts Options) *Service {
	s := &Service{db: db, run: run, core: core, eng: eng, clock: opts.Clock}
	if s.clock == nil {
		s.clock = db.Clock
	}
	return s
}

// now is the current time as stored: UTC, microsecond precision (PostgreSQL's).
func (s *Service) now() time.Time { return s.clock().UTC().Truncate(time.Microsecond) }

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// writer refuses AGENT tokens: they only call the agent mutations.
func writer(p *auth.Principal) error {
	if p.Role == domain.RoleAgent {
		return domain.Forbidden("agent tokens may only call the agent mutations")
	}
	return nil
}

// project loads a project the caller can see, by global id given in field.
func (s *Service) project(ctx context.Context, p *auth.Principal, gid, field string) (*domain.Project, error) {
	id, err := domain.DecodeID(domain.KindProject, gid, field)
	if err != nil {
		if domain.ErrorCode(err) == domain.CodeNotFound {
			return nil, &domain.Error{Code: domain.CodeNotFound, Field: field, Message: "project not found"}
		}
		return nil, err
	}
	// An entry point: read at once rather than wait for a batch.
	projects, err := s.db.Projects.ProjectsByIDs(ctx, []string{id})
	if err != nil {
		return nil, err
	}
	if len(projects) == 0 || !app.CanSee(p, projects[0]) {
		return nil, &domain.Error{Code: domain.CodeNotFound, Field: field, Message: "project not found"}
	}
	return projects[0], nil
}

// canSee reports whether p may read rule: global rules are everyone's, a
// project's rules are seen by those who see the project.
func (s *Service) canSee(ctx context.Context, p *auth.Principal, r *domain.ValidationRule) (bool, error) {
	if r.ProjectID == nil {
		return true, nil
	}
	project, err := s.core.Projects.ProjectByID(ctx, *r.ProjectID)
	if err != nil {
		return false, err
	}
	return app.CanSee(p, project), nil
}

// checkChangeable refuses a change of a rule p may not change: AGENT tokens
// and, for global rules, anyone but ADMIN.
func checkChangeable(p *auth.Principal, global bool) error {
	if err := writer(p); err != nil {
		return err
	}
	if global && p.Role != domain.RoleAdmin {
		return domain.Forbidden("only an admin may change global validation rules")
	}
	return nil
}

// visibleRule loads a rule the caller can see, by global id given in field.
func (s *Service) visibleRule(ctx context.Context, p *auth.Principal, gid, field string) (*domain.ValidationRule, error) {
	notFound := &domain.Error{Code: domain.CodeNotFound, Field: field, Message: "validation rule not found"}
	id, err := domain.DecodeID(domain.KindValidationRule, gid, field)
	if err != nil {
		if domain.ErrorCode(err) == domain.CodeNotFound {
			return nil, notFound
		}
		return nil, err
	}
	r, err := s.loads(ctx).rules.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	if r == nil {
		return nil, notFound
	}
	if ok, err := s.canSee(ctx, p, r); err != nil || !ok {
		if err != nil {
			return nil, err
		}
		return nil, notFound
	}
	return r, nil
}

func checkCategories(field string, cats []domain.TaskCategory) (domain.Categories, error) {
	out := domain.Categories{}
	seen := map[domain.TaskCategory]bool{}
	for _, c := range cats {
		if !c.Valid() {
			return nil, domain.InputError(field, "unknown category %q", c)
		}
		if !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	return out, nil
}

// CreateValidationRule creates a rule of a project, or a global one.
func (s *Service) CreateValidationRule(ctx context.Context, in domain.CreateValidationRuleInput) (*domain.ValidationRule, error) {
	p, err := app.Caller(ctx)
	if err != nil {
		return nil, err
	}
	var projectID *string
	if in.ProjectID != nil {
		project, err := s.project(ctx, p, *in.ProjectID, "projectId")
		if err != nil {
			return nil, err
		}
		projectID = &project.ID
	}
	if err := checkChangeable(p, projectID == nil); err != nil {
		return nil, err
	}
	name, err := domain.CheckText("name", in.Name, domain.MaxName, true)
	if err != nil {
		return nil, err
	}
	desc, err := domain.CheckText("description", deref(in.Description), domain.MaxDescription, false)
	if err != nil {
		return nil, err
	}
	if !in.RuleType.Valid() {
		return nil, domain.InputError("ruleType", "unknown rule type %q", in.RuleType)
	}
	cats, err := checkCategories("categoryFilter", in.CategoryFilter)
	if err != nil {
		return nil, err
	}
	config, err := s.eng.Check(in.RuleType, in.Config)
	if err != nil {
		return nil, err
	}
	severity := domain.SeverityError
	if in.Severity != nil {
		severity = *in.Severity
	}
	if !severity.Valid() {
		return nil, domain.InputError("severity", "unknown severity %q", severity)
	}
	enabled := true
	if in.Enabled != nil {
		enabled = *in.Enabled
	}
	now := s.now()
	r := &domain.ValidationRule{ID: app.NewID(), ProjectID: projectID, Name: name, Description: desc, RuleType: in.RuleType,
		CategoryFilter: cats, Config: config, Severity: severity, Enabled: enabled, Version: 1, CreatedAt: now, UpdatedAt: now}
	err = s.run.InTx(ctx, func(tx *app.Tx) error {
		// Every rule is evaluated on every task it applies to: their number
		// is bounded (two creations racing may pass it by one each on
		// PostgreSQL; the bound is on cost, not a count to the unit).
		n, err := tx.Validation.CountRules(ctx, projectID)
		if err != nil {
			return err
		}
		if n >= MaxRules {
			return &domain.Error{Code: domain.CodeLimitExceeded, Field: "projectId",
				Message: fmt.Sprintf("at most %d validation rules per project (and %d global ones)", MaxRules, MaxRules)}
		}
		return tx.Validation.InsertRule(ctx, r)
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// UpdateValidationRule changes the fields given.
func (s *Service) UpdateValidationRule(ctx context.Context, in domain.UpdateValidationRuleInput) (*domain.ValidationRule, error) {
	p, err := app.Caller(ctx)
	if err != nil {
		return nil, err
	}
	cur, err := s.visibleRule(ctx, p, in.ID, "id")
	if err != nil {
		return nil, err
	}
	if err := checkChangeable(p, cur.Global()); err != nil {
		return nil, err
	}
	var name, desc *string
	if in.Name != nil {
		v, err := domain.CheckText("name", *in.Name, domain.MaxName, true)
		if err != nil {
			return nil, err
		}
		name = &v
	}
	if in.Description != nil {
		v, err := domain.CheckText("description", *in.Description, domain.MaxDescription, false)
		if err != nil {
			return nil, err
		}
		desc = &v
	}
	var cats domain.Categories
	if in.CategoryFilter != nil {
		if cats, err = checkCategories("categoryFilter", in.CategoryFilter); err != nil {
			return nil, err
		}
	}
	var config domain.JSON
	if in.Config != nil && string(in.Config) != "null" {
		if config, err = s.eng.Check(cur.RuleType, in.Config); err != nil {
			return nil, err
		}
	}
	if in.Severity != nil && !in.Severity.Valid() {
		return nil, domain.InputError("severity", "unknown severity %q", *in.Severity)
	}
	var r *domain.ValidationRule
	err = s.run.InTx(ctx, func(tx *app.Tx) error {
		if r, err = tx.Validation.RuleForUpdate(ctx, cur.ID); err != nil {
			return app.NotFound(err, "validation rule")
		}
		if name != nil {
			r.Name = *name
		}
		if desc != nil {
			r.Description = *desc
		}
		if in.CategoryFilter != nil {
			r.CategoryFilter = cats
		}
		if config != nil {
			r.Config = config
		}
		if in.Severity != nil {
			r.Severity = *in.Severity
		}
		if in.Enabled != nil {
			r.Enabled = *in.Enabled
		}
		r.Version++
		r.UpdatedAt = s.now()
		return tx.Validation.UpdateRule(ctx, r)
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// DeleteValidationRule deletes a rule and returns its id.
func (s *Service) DeleteValidationRule(ctx context.Context, in domain.DeleteValidationRuleInput) (string, error) {
	p, err := app.Caller(ctx)
	if err != nil {
		return "", err
	}
	r, err := s.visibleRule(ctx, p, in.ID, "id")
	if err != nil {
		return "", err
	}
	if err := checkChangeable(p, r.Global()); err != nil {
		return "", err
	}
	if err := s.run.InTx(ctx, func(tx *app.Tx) error {
		if _, err := tx.Validation.RuleForUpdate(ctx, r.ID); err != nil {
			return app.NotFound(err, "validation rule")
		}
		return tx.Validation.DeleteRule(ctx, r.ID)
	}); err != nil {
		return "", err
	}
	return r.GlobalID(), nil
}

// ValidationRules pages, oldest first, a project's rules and the global ones;
// without a project, the global ones.
func (s *Service) ValidationRules(ctx context.Context, projectGID *string, page domain.PageArgs) (domain.Page[*domain.ValidationRule], error) {
	p, err := app.Caller(ctx)
	if err != nil {
		return domain.Page[*domain.ValidationRule]{}, err
	}
	var projectID *string
	if projectGID != nil {
		project, err := s.project(ctx, p, *projectGID, "projectId")
		if err != nil {
			return domain.Page[*domain.ValidationRule]{}, err
		}
		projectID = &project.ID
	}
	return s.db.Validation.Rules(ctx, projectID, page)
}

// NodeOf loads a rule for node(id:) (an app.NodeSource); ok is false for other
// kinds.
func (s *Service) NodeOf(ctx context.Context, p *auth.Principal, kind domain.Kind, id string) (domain.Node, bool, error) {
	if kind != domain.KindValidationRule {
		return nil, false, nil
	}
	r, err := s.loads(ctx).rules.Load(ctx, id)
	if err != nil || r == nil {
		return nil, true, err
	}
	if ok, err := s.canSee(ctx, p, r); err != nil || !ok {
		return nil, true, err
	}
	return r, true, nil
}

// ProjectOf is a rule's project, nil for a global rule.
func (s *Service) ProjectOf(ctx context.Context, r *domain.ValidationRule) (*domain.Project, error) {
	if r.ProjectID == nil {
		return nil, nil
	}
	return s.core.Projects.ProjectByID(ctx, *r.ProjectID)
}

// TaskOf is the task a violation is about.
func (s *Service) TaskOf(ctx context.Context, v *domain.RuleViolation) (*domain.Task, error) {
	t, err := s.core.Tasks.TaskByID(ctx, &v.TaskID)
	if err == nil && t == nil {
		return nil, domain.NotFound("task")
	}
	return t, err
}
