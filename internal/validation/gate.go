package validation

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"sync"

	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/service"
	"github.com/taskgraph/taskgraph/internal/store"
)

// Gate is the core's service.Gate: inside the core's transaction, a task
// violating an enabled ERROR rule may not enter PENDING, and a run may not
// start while one of its tasks does. WARNING rules never block. It reads
// through the transaction: the rules of the tasks' projects in one statement,
// their file impacts in one more when a rule needs them.
//
// The rules run before the transaction (PrecheckPending, on a snapshot read
// from the pool), so that no evaluation holds the SQLite writer: the verdict
// is remembered under a fingerprint of what it depended on — the rules
// (id, type, config, severity, filter) and the task and file impacts as the
// rules see them. Inside, the gate re-reads the rules and impacts (two cheap
// statements) and evaluates again only when the fingerprint differs: the
// task or a rule changed in between.
type Gate struct {
	eng *Engine

	mu       sync.Mutex
	verdicts map[[sha256.Size]byte][]*domain.RuleViolation
}

var _ service.Gate = (*Gate)(nil)

// maxVerdicts bounds the remembered verdicts; past it they start over.
const maxVerdicts = 4096

// NewGate returns the gate evaluating with eng.
func NewGate(eng *Engine) *Gate {
	return &Gate{eng: eng, verdicts: map[[sha256.Size]byte][]*domain.RuleViolation{}}
}

// PrecheckPending evaluates t's move into PENDING outside the transaction (q
// on the pool) and remembers the verdict for EnterPending.
func (g *Gate) PrecheckPending(ctx context.Context, q *store.Q, t *domain.Task) error {
	return g.check(ctx, q, []*domain.Task{t})
}

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
		s := Subject{Task: t, FileImpacts: impacts[t.ID]}
		key, ok := fingerprint(rules, s)
		if ok {
			g.mu.Lock()
			vs, seen := g.verdicts[key]
			g.mu.Unlock()
			if seen {
				blocking = append(blocking, vs...)
				continue
			}
		}
		vs := domain.Blocking(g.eng.Evaluate(ctx, rules, s))
		if ok && ctx.Err() == nil {
			g.mu.Lock()
			if len(g.verdicts) >= maxVerdicts {
				g.verdicts = map[[sha256.Size]byte][]*domain.RuleViolation{}
			}
			g.verdicts[key] = vs
			g.mu.Unlock()
		}
		blocking = append(blocking, vs...)
	}
	if len(blocking) == 0 {
		return nil
	}
	return domain.ViolationsError(blocking)
}

// fingerprint identifies an evaluation: the rules and the subject as the
// rules see them. ok is false when it cannot be taken (nothing is then
// remembered).
func fingerprint(rules []*domain.ValidationRule, s Subject) (key [sha256.Size]byte, ok bool) {
	type ruleKey struct {
		ID, Name, Type, Severity string
		Version                  int
		Config                   json.RawMessage
		Categories               []domain.TaskCategory
		Project                  *string
	}
	rk := make([]ruleKey, len(rules))
	for i, r := range rules {
		rk[i] = ruleKey{r.ID, r.Name, string(r.RuleType), string(r.Severity), r.Version, json.RawMessage(r.Config), r.CategoryFilter, r.ProjectID}
	}
	h := sha256.New()
	enc := json.NewEncoder(h)
	if err := enc.Encode(rk); err != nil {
		return key, false
	}
	if err := enc.Encode(taskValue(s)); err != nil {
		return key, false
	}
	// The task's project decides which rules apply.
	if _, err := h.Write([]byte(s.Task.ProjectID)); err != nil {
		return key, false
	}
	copy(key[:], h.Sum(nil))
	return key, true
}
