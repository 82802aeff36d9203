package store

import (
	"context"
	"time"

	"github.com/taskgraph/taskgraph/internal/domain"
)

// Validation rules: a project's, and the global ones (project_id NULL).

const ruleCols = `id, project_id, name, description, rule_type, category_filter, config, severity, enabled, version,
	created_at, updated_at`

// InsertRule inserts a validation rule.
func (q ValidationQueries) InsertRule(ctx context.Context, r *domain.ValidationRule) error {
	_, err := q.exec(ctx, `INSERT INTO validation_rules (`+ruleCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.ID, r.ProjectID, r.Name, r.Description, r.RuleType, r.CategoryFilter, r.Config, r.Severity, r.Enabled,
		r.Version, r.CreatedAt, r.UpdatedAt)
	return err
}

// UpdateRule writes a rule's changeable fields (its project and type never
// change).
func (q ValidationQueries) UpdateRule(ctx context.Context, r *domain.ValidationRule) error {
	_, err := q.exec(ctx, `UPDATE validation_rules SET name = ?, description = ?, category_filter = ?, config = ?,
		severity = ?, enabled = ?, version = ?, updated_at = ? WHERE id = ?`,
		r.Name, r.Description, r.CategoryFilter, r.Config, r.Severity, r.Enabled, r.Version, r.UpdatedAt, r.ID)
	return err
}

// DeleteRule deletes a rule.
func (q ValidationQueries) DeleteRule(ctx context.Context, id string) error {
	_, err := q.exec(ctx, `DELETE FROM validation_rules WHERE id = ?`, id)
	return err
}

// RuleForUpdate reads a rule inside a transaction, locking it; ErrNotFound
// when absent.
func (q ValidationQueries) RuleForUpdate(ctx context.Context, id string) (*domain.ValidationRule, error) {
	var r domain.ValidationRule
	if err := q.get(ctx, &r, `SELECT * FROM validation_rules WHERE id = ?`+q.forUpdate(), id); err != nil {
		return nil, err
	}
	return &r, nil
}

// CountRules counts a project's rules, or the global ones when projectID is
// nil.
func (q ValidationQueries) CountRules(ctx context.Context, projectID *string) (int, error) {
	var n int
	var err error
	if projectID == nil {
		err = q.get(ctx, &n, `SELECT COUNT(*) FROM validation_rules WHERE project_id IS NULL`)
	} else {
		err = q.get(ctx, &n, `SELECT COUNT(*) FROM validation_rules WHERE project_id = ?`, *projectID)
	}
	return n, err
}

// RulesByIDs loads rules by id.
func (q ValidationQueries) RulesByIDs(ctx context.Context, ids []string) ([]*domain.ValidationRule, error) {
	return byIDs[domain.ValidationRule](ctx, q.Q, "validation_rules", ids)
}

// Rules pages, oldest first, the global rules and, when projectID is given,
// that project's.
func (q ValidationQueries) Rules(ctx context.Context, projectID *string, page domain.PageArgs) (domain.Page[*domain.ValidationRule], error) {
	pq := createdPage("r", "validation_rules", func(r *domain.ValidationRule) time.Time { return r.CreatedAt },
		func(r *domain.ValidationRule) string { return r.ID }, page)
	if projectID != nil {
		pq.filter("(r.project_id = ? OR r.project_id IS NULL)", *projectID)
	} else {
		pq.filter("r.project_id IS NULL")
	}
	return rootPage(ctx, q.Q, pq)
}

// EnabledRulesOfProjects lists, oldest first, the enabled rules that apply to
// tasks of the given projects: theirs and the global ones, in one statement.
func (q ValidationQueries) EnabledRulesOfProjects(ctx context.Context, projectIDs []string) ([]*domain.ValidationRule, error) {
	var out []*domain.ValidationRule
	if len(projectIDs) == 0 {
		return out, nil
	}
	query, args := in(`SELECT * FROM validation_rules WHERE enabled = ? AND (project_id IS NULL OR project_id IN (?))
		ORDER BY created_at, id`, true, projectIDs)
	err := q.selectx(ctx, &out, query, args...)
	return out, err
}
