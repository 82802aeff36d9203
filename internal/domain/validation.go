package domain

import (
	"database/sql/driver"
	"fmt"
	"strings"
	"time"
)

// Validation rules (issue 11): checks a task must pass before it may enter
// PENDING or run. A rule belongs to a project, or is global (no project) and
// then applies to every project's tasks. The rule evaluator itself (the config
// of each type, CEL) lives in internal/validation: CEL is not the standard
// library.

// KindValidationRule tags validation rule ids.
const KindValidationRule Kind = "ValidationRule"

// ValidationRuleType is what a rule checks.
type ValidationRuleType string

const (
	// RuleRequiredField: one field of the task must be set (non-empty).
	RuleRequiredField ValidationRuleType = "REQUIRED_FIELD"
	// RuleTestRequired: at least N declared tests over some levels.
	RuleTestRequired ValidationRuleType = "TEST_REQUIRED"
	// RulePatternMatch: the title or description matches an RE2 pattern.
	RulePatternMatch ValidationRuleType = "PATTERN_MATCH"
	// RuleCustom: a CEL boolean expression over the task.
	RuleCustom ValidationRuleType = "CUSTOM"
)

// Valid reports whether t is a known rule type.
func (t ValidationRuleType) Valid() bool {
	switch t {
	case RuleRequiredField, RuleTestRequired, RulePatternMatch, RuleCustom:
		return true
	}
	return false
}

// ValidationSeverity says whether a violated rule blocks.
type ValidationSeverity string

const (
	// SeverityError blocks: a task violating it may not enter PENDING or run.
	SeverityError ValidationSeverity = "ERROR"
	// SeverityWarning is shown, never blocks.
	SeverityWarning ValidationSeverity = "WARNING"
)

// Valid reports whether s is a known severity.
func (s ValidationSeverity) Valid() bool { return s == SeverityError || s == SeverityWarning }

// Categories is a set of task categories stored as one comma-separated text
// column (the data model's category_filter); empty means every category.
type Categories []TaskCategory

// Value stores the categories comma-separated.
func (c Categories) Value() (driver.Value, error) {
	parts := make([]string, len(c))
	for i, v := range c {
		parts[i] = string(v)
	}
	return strings.Join(parts, ","), nil
}

// Scan reads the comma-separated column.
func (c *Categories) Scan(src any) error {
	var s string
	switch v := src.(type) {
	case nil:
	case string:
		s = v
	case []byte:
		s = string(v)
	default:
		return fmt.Errorf("categories: cannot scan %T", src)
	}
	*c = Categories{}
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			*c = append(*c, TaskCategory(part))
		}
	}
	return nil
}

// Has reports whether the filter lets a task of category cat through: an
// empty filter lets every category through.
func (c Categories) Has(cat TaskCategory) bool {
	if len(c) == 0 {
		return true
	}
	for _, v := range c {
		if v == cat {
			return true
		}
	}
	return false
}

// ValidationRule is one rule. Config is the type's JSON configuration, checked
// when the rule is written. Version rises by one on every update.
type ValidationRule struct {
	ID             string             `db:"id"`
	ProjectID      *string            `db:"project_id"`
	Name           string             `db:"name"`
	Description    string             `db:"description"`
	RuleType       ValidationRuleType `db:"rule_type"`
	CategoryFilter Categories         `db:"category_filter"`
	Config         JSON               `db:"config"`
	Severity       ValidationSeverity `db:"severity"`
	Enabled        bool               `db:"enabled"`
	Version        int                `db:"version"`
	CreatedAt      time.Time          `db:"created_at"`
	UpdatedAt      time.Time          `db:"updated_at"`
}

// GlobalID is the rule's opaque id.
func (r *ValidationRule) GlobalID() string { return GlobalID(KindValidationRule, r.ID) }

// Global reports whether the rule applies to every project.
func (r *ValidationRule) Global() bool { return r.ProjectID == nil }

// AppliesTo reports whether the rule is checked on task: enabled, of the
// task's project or global, and letting its category through.
func (r *ValidationRule) AppliesTo(t *Task) bool {
	return r.Enabled && (r.ProjectID == nil || *r.ProjectID == t.ProjectID) && r.CategoryFilter.Has(t.Category)
}

// RuleViolation is one rule a task does not pass.
type RuleViolation struct {
	Rule     *ValidationRule
	Severity ValidationSeverity
	Message  string
	// Field is the task field at fault, when there is one.
	Field *string
	// TaskID and TaskDisplayID name the task.
	TaskID        string
	TaskDisplayID string
}

// TaskValidation is the verdict on one task: valid when no ERROR rule is
// violated (WARNING violations are listed but leave it valid).
type TaskValidation struct {
	Valid      bool
	Violations []*RuleViolation
}

// NewTaskValidation is the verdict made of violations.
func NewTaskValidation(violations []*RuleViolation) *TaskValidation {
	if violations == nil {
		violations = []*RuleViolation{}
	}
	return &TaskValidation{Valid: len(Blocking(violations)) == 0, Violations: violations}
}

// Blocking are the violations of ERROR rules.
func Blocking(violations []*RuleViolation) []*RuleViolation {
	var out []*RuleViolation
	for _, v := range violations {
		if v.Severity == SeverityError {
			out = append(out, v)
		}
	}
	return out
}

// ViolationsError is the gate's refusal: BAD_USER_INPUT with
// extensions.violations listing each violation ({rule, ruleName, message,
// field, task}) and extensions.tasks the display ids of the tasks at fault.
func ViolationsError(violations []*RuleViolation) *Error {
	var tasks []string
	seen := map[string]bool{}
	list := make([]map[string]any, len(violations))
	for i, v := range violations {
		var field any
		if v.Field != nil {
			field = *v.Field
		}
		list[i] = map[string]any{"rule": v.Rule.GlobalID(), "ruleName": v.Rule.Name, "message": v.Message,
			"field": field, "severity": string(v.Severity), "task": v.TaskDisplayID}
		if !seen[v.TaskDisplayID] {
			seen[v.TaskDisplayID] = true
			tasks = append(tasks, v.TaskDisplayID)
		}
	}
	var msg string
	if len(tasks) == 1 {
		msgs := make([]string, len(violations))
		for i, v := range violations {
			msgs[i] = v.Message
		}
		msg = fmt.Sprintf("task %s violates validation rules: %s", tasks[0], strings.Join(msgs, "; "))
	} else {
		msg = fmt.Sprintf("%d tasks violate validation rules: %s", len(tasks), strings.Join(tasks, ", "))
	}
	return &Error{Code: CodeBadUserInput, Message: msg, Details: map[string]any{"violations": list, "tasks": tasks}}
}

// Inputs of the validation rule mutations.

// CreateValidationRuleInput creates a rule; ProjectID nil makes it global.
type CreateValidationRuleInput struct {
	ProjectID      *string
	Name           string
	Description    *string
	RuleType       ValidationRuleType
	CategoryFilter []TaskCategory
	Config         JSON
	Severity       *ValidationSeverity
	Enabled        *bool
}

// UpdateValidationRuleInput changes the fields given; the type never changes.
type UpdateValidationRuleInput struct {
	ID             string
	Name           *string
	Description    *string
	CategoryFilter []TaskCategory
	Config         JSON
	Severity       *ValidationSeverity
	Enabled        *bool
}

// DeleteValidationRuleInput deletes a rule.
type DeleteValidationRuleInput struct {
	ID string
}
