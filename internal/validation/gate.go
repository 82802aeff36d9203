package validation

import (
	"context"

	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/service"
	"github.com/taskgraph/taskgraph/internal/store"
)

// Gate is the core's service.Gate: inside the core's transaction, a task
// violating an enabled ERROR rule may not enter PENDING, and a run may not
// start while one of its tasks does. WARNING rules never block. It reads
// through the transaction: the rules of the tasks' projects in one statement,
// their file impacts in one more when a rule needs them.
type Gate struct{ eng *Engine }

var _ service.Gate = (*Gate)(nil)

// NewGate returns the gate evaluating with eng.
func NewGate(eng *Engine) *Gate { return &Gate{eng: eng} }

// EnterPending refuses t's move into PENDING with BAD_USER_INPUT and
// extensions.violations when it violates an ERROR rule.
func (g *Gate) EnterPending(ctx context.Context, q *store.Q, t *domain.Task) error {
	return g.check(ctx, q, []*domain.Task{t})
}

// StartRun refuses a run whose tasks violate ERROR rules, listing every
// violating task's display id (extensions.tasks) and each violation.
func (g *Gate) StartRun(ctx context.Context, q *store.Q, tasks []*domain.Task) error {
	return g.check(ctx, q, tasks)
}

func (g *Gate) check(ctx context.Context, q *store.Q, tasks []*domain.Task) error {
	var projects []string
	seen := map[string]bool{}
	for _, t := range tasks {
		if !seen[t.ProjectID] {
			seen[t.ProjectID] = true
			projects = append(projects, t.ProjectID)
		}
	}
	all, err := q.Validation.EnabledRulesOfProjects(ctx, projects)
	if err != nil {
		return err
	}
	var rules []*domain.ValidationRule
	for _, r := range all {
		if r.Severity == domain.SeverityError {
			rules = append(rules, r)
		}
	}
	if len(rules) == 0 {
		return nil
	}
	impacts := map[string][]*domain.TaskFileImpact{}
	if g.eng.NeedsImpacts(rules) {
		ids := make([]string, len(tasks))
		for i, t := range tasks {
			ids[i] = t.ID
		}
		rows, err := q.Tasks.FileImpactsOfTasks(ctx, ids)
		if err != nil {
			return err
		}
		for _, fi := range rows {
			impacts[fi.TaskID] = append(impacts[fi.TaskID], fi)
		}
	}
	var blocking []*domain.RuleViolation
	for _, t := range tasks {
		vs := g.eng.Evaluate(ctx, rules, Subject{Task: t, FileImpacts: impacts[t.ID]})
		blocking = append(blocking, domain.Blocking(vs)...)
	}
	if len(blocking) == 0 {
		return nil
	}
	return domain.ViolationsError(blocking)
}
