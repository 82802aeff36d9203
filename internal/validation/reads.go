package validation

import (
	"context"

	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/loader"
	"github.com/taskgraph/taskgraph/internal/planning"
	"github.com/taskgraph/taskgraph/internal/store"
)

// ruleLoaders are the request's batched reads of rules. They hang off the
// request's loaders, made on first use and cleared with them after every
// write.
type ruleLoaders struct {
	rules *loader.Loader[string, *domain.ValidationRule]
	// enabled are the enabled rules applying to a project's tasks (its own
	// and the global ones), by project: one statement for every project of
	// a request.
	enabled *loader.Loader[string, []*domain.ValidationRule]
	impacts *loader.Loader[string, []*domain.TaskFileImpact]
}

type ruleLoadersKey struct{}

func newRuleLoaders(s *Service, w loader.Timing) *ruleLoaders {
	q := &s.db.Q
	return &ruleLoaders{
		rules: loader.New(w, app.ByID(q.Validation.RulesByIDs, func(r *domain.ValidationRule) string { return r.ID })),
		enabled: loader.New(w, func(ctx context.Context, projects []string) (map[string][]*domain.ValidationRule, error) {
			return enabledRules(ctx, q, projects)
		}),
		impacts: loader.New(w, app.GroupedBy(q.Tasks.FileImpactsOfTasks, func(f *domain.TaskFileImpact) string { return f.TaskID })),
	}
}

// Clear forgets every cached read.
func (l *ruleLoaders) Clear() {
	l.rules.Clear()
	l.enabled.Clear()
	l.impacts.Clear()
}

func (s *Service) loads(ctx context.Context) *ruleLoaders {
	return app.Set(ctx, ruleLoadersKey{}, func(w loader.Timing) *ruleLoaders { return newRuleLoaders(s, w) })
}

// enabledRules reads the enabled rules of projects, each project's list
// holding its own rules and the global ones, oldest first.
func enabledRules(ctx context.Context, q *store.Q, projects []string) (map[string][]*domain.ValidationRule, error) {
	rows, err := q.Validation.EnabledRulesOfProjects(ctx, projects)
	if err != nil {
		return nil, err
	}
	out := make(map[string][]*domain.ValidationRule, len(projects))
	for _, p := range projects {
		out[p] = []*domain.ValidationRule{}
	}
	for _, r := range rows {
		for _, p := range projects {
			if r.ProjectID == nil || *r.ProjectID == p {
				out[p] = append(out[p], r)
			}
		}
	}
	return out, nil
}

// applicable keeps the rules that apply to t.
func applicable(rules []*domain.ValidationRule, t *domain.Task) []*domain.ValidationRule {
	var out []*domain.ValidationRule
	for _, r := range rules {
		if r.AppliesTo(t) {
			out = append(out, r)
		}
	}
	return out
}

// TaskValidation is the verdict on t (Task.validation). Across the tasks of a
// request it costs one statement for the rules of every project involved and,
// when a rule reads them, one for the file impacts of every task.
func (s *Service) TaskValidation(ctx context.Context, t *domain.Task) (*domain.TaskValidation, error) {
	l := s.loads(ctx)
	all, err := l.enabled.Load(ctx, t.ProjectID)
	if err != nil {
		return nil, err
	}
	rules := applicable(all, t)
	sub := Subject{Task: t}
	if s.eng.NeedsImpacts(rules) {
		if sub.FileImpacts, err = l.impacts.Load(ctx, t.ID); err != nil {
			return nil, err
		}
	}
	return domain.NewTaskValidation(s.eng.Evaluate(ctx, rules, sub)), nil
}

// PlanViolations are the violations of a plan's tasks (WavePlan.violations),
// in plan order: the waves' tasks, then the unplannable ones. The plan's entry
// point primed its tasks; the rules and the file impacts cost a statement
// each.
func (s *Service) PlanViolations(ctx context.Context, plan *planning.Plan) ([]*domain.RuleViolation, error) {
	var ids []string
	for _, w := range plan.Waves {
		ids = append(ids, w.TaskIDs...)
	}
	for _, u := range plan.Unplannable {
		ids = append(ids, u.TaskID)
	}
	out := []*domain.RuleViolation{}
	if len(ids) == 0 {
		return out, nil
	}
	tasks, err := s.core.Lists.PlannedTasks(ctx, ids)
	if err != nil {
		return nil, err
	}
	var projects []string
	seen := map[string]bool{}
	for _, t := range tasks {
		if !seen[t.ProjectID] {
			seen[t.ProjectID] = true
			projects = append(projects, t.ProjectID)
		}
	}
	l := s.loads(ctx)
	byProject, err := l.enabled.LoadMany(ctx, projects)
	if err != nil {
		return nil, err
	}
	rulesOf := map[string][]*domain.ValidationRule{}
	needImpacts := false
	for i, p := range projects {
		rulesOf[p] = byProject[i]
		needImpacts = needImpacts || s.eng.NeedsImpacts(byProject[i])
	}
	var impacts [][]*domain.TaskFileImpact
	if needImpacts {
		taskIDs := make([]string, len(tasks))
		for i, t := range tasks {
			taskIDs[i] = t.ID
		}
		if impacts, err = l.impacts.LoadMany(ctx, taskIDs); err != nil {
			return nil, err
		}
	}
	for i, t := range tasks {
		sub := Subject{Task: t}
		if impacts != nil {
			sub.FileImpacts = impacts[i]
		}
		out = append(out, s.eng.Evaluate(ctx, rulesOf[t.ProjectID], sub)...)
	}
	return out, nil
}
