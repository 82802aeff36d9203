package validation

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/domain"
)

func rule(t domain.ValidationRuleType, config string, sev domain.ValidationSeverity, cats ...domain.TaskCategory) *domain.ValidationRule {
	return &domain.ValidationRule{ID: "11111111-1111-1111-1111-111111111111", Name: "r", RuleType: t,
		Config: domain.JSON(config), Severity: sev, Enabled: true, CategoryFilter: cats}
}

func task() *domain.Task {
	return &domain.Task{ID: "22222222-2222-2222-2222-222222222222", DisplayID: "TU-X-TSK-001", ProjectID: "p",
		Title: "Add login", Category: domain.CategoryTask, Status: domain.StatusDraft, Priority: domain.PriorityP2,
		RiskLevel: domain.RiskLow, PriorityScore: 70}
}

func TestCheckConfig(t *testing.T) {
	e := NewEngine()
	for _, c := range []struct {
		typ    domain.ValidationRuleType
		config string
		bad    string // part of the error message; "" = accepted
	}{
		{domain.RuleRequiredField, `{"field":"description"}`, ""},
		{domain.RuleRequiredField, `{"field":"fileImpacts","message":"say which files"}`, ""},
		{domain.RuleRequiredField, `{"field":"title"}`, "unknown field"},
		{domain.RuleRequiredField, `{}`, "field is required"},
		{domain.RuleRequiredField, `{"field":"effort","extra":1}`, "unknown config key"},
		{domain.RuleRequiredField, `[1]`, "JSON object"},
		{domain.RuleRequiredField, `{"field":3}`, "must be a string"},
		{domain.RuleTestRequired, `{"levels":["CODEBASE","API"],"min":2}`, ""},
		{domain.RuleTestRequired, `{}`, ""},
		{domain.RuleTestRequired, `{"levels":["E2E"],"min":1}`, "unknown test level"},
		{domain.RuleTestRequired, `{"levels":[],"min":1}`, "at least one level"},
		{domain.RuleTestRequired, `{"levels":["UI","UI"]}`, "twice"},
		{domain.RuleTestRequired, `{"min":0}`, "between 1"},
		{domain.RuleTestRequired, `{"min":"2"}`, "integer"},
		{domain.RulePatternMatch, `{"field":"title","pattern":"^\\[[A-Z]+\\] ","message":"prefix"}`, ""},
		{domain.RulePatternMatch, `{"field":"title","pattern":"(a"}`, "RE2"},
		{domain.RulePatternMatch, `{"field":"title","pattern":"(a)\\1"}`, "RE2"}, // backreferences are not RE2
		{domain.RulePatternMatch, `{"field":"owner","pattern":"x"}`, "unknown field"},
		{domain.RulePatternMatch, `{"field":"title","pattern":""}`, "pattern must be"},
		{domain.RuleCustom, `{"expression":"task.priority == 'P1' || size(task.codebaseTests) > 0"}`, ""},
		{domain.RuleCustom, `{"expression":"task.isQuickWin"}`, ""},
		{domain.RuleCustom, `{"expression":"task.effort == null || task.effort != 'EPIC'"}`, ""},
		{domain.RuleCustom, `{"expression":"task.fileImpacts.all(f, f.operation != 'DELETE')"}`, ""},
		{domain.RuleCustom, `{"expression":"task.title"}`, "must be boolean"},
		{domain.RuleCustom, `{"expression":"1 + 1"}`, "must be boolean"},
		{domain.RuleCustom, `{"expression":"task.titel == 'x'"}`, "does not compile"},
		{domain.RuleCustom, `{"expression":"task.title =="}`, "does not compile"},
		{domain.RuleCustom, `{"expression":"   "}`, "expression must be"},
		// Regex programs past MaxRegexProgram instructions: refused at creation.
		{domain.RulePatternMatch, `{"field":"description","pattern":"(?:a|aa){1,1000}c"}`, "instructions"},
		{domain.RulePatternMatch, `{"field":"description","pattern":"(?:a|aa){1,15}c"}`, ""},
		{domain.RuleCustom, `{"expression":"task.description.matches('(?:a|aa){1,1000}c')"}`, "regex program size"},
		{domain.RuleCustom, `{"expression":"matches(task.description, '(?:a|aa){1,1000}c')"}`, "regex program size"},
		{domain.RuleCustom, `{"expression":"` + strings.Repeat("true && ", 300) + `true"}`, "expression must be"},
		{domain.RuleCustom, `{"expression":"` + strings.Repeat("(", 40) + "true" + strings.Repeat(")", 40) + `"}`, "does not compile"},
		// Data-independent blow-up: refused when written.
		{domain.RuleCustom, `{"expression":"` + hostileLiteral + `"}`, "cost limit"},
	} {
		t.Run(string(c.typ)+" "+c.config[:min(len(c.config), 60)], func(t *testing.T) {
			_, err := e.Check(c.typ, domain.JSON(c.config))
			if c.bad == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			de, ok := domain.AsError(err)
			require.True(t, ok)
			require.Equal(t, domain.CodeBadUserInput, de.Code)
			require.Equal(t, "config", de.Field)
			require.Contains(t, de.Message, c.bad)
		})
	}
}

// hostileLiteral nests comprehensions over literal lists: 10^7 iterations
// whatever the task.
var hostileLiteral = func() string {
	l := "[0,1,2,3,4,5,6,7,8,9]"
	return fmt.Sprintf("%s.all(a, %s.all(b, %s.all(c, %s.all(d, %s.all(e, %s.all(f, %s.all(g, a+b+c+d+e+f+g >= 0)))))))",
		l, l, l, l, l, l, l)
}()

func TestEvaluate(t *testing.T) {
	e := NewEngine()
	effort := domain.EffortSmall
	deadline := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name    string
		rule    *domain.ValidationRule
		edit    func(t *domain.Task)
		impacts []*domain.TaskFileImpact
		want    string // message of the violation; "" = passes
		field   string
	}{
		{name: "required description missing", rule: rule(domain.RuleRequiredField, `{"field":"description"}`, domain.SeverityError),
			want: "description is required", field: "description"},
		{name: "required description blank", rule: rule(domain.RuleRequiredField, `{"field":"description"}`, domain.SeverityError),
			edit: func(t *domain.Task) { t.Description = "  " }, want: "description is required", field: "description"},
		{name: "required description set", rule: rule(domain.RuleRequiredField, `{"field":"description"}`, domain.SeverityError),
			edit: func(t *domain.Task) { t.Description = "why" }},
		{name: "required list empty", rule: rule(domain.RuleRequiredField, `{"field":"acceptanceCriteria"}`, domain.SeverityError),
			edit: func(t *domain.Task) { t.AcceptanceCriteria = domain.Strings{} }, want: "acceptanceCriteria is required", field: "acceptanceCriteria"},
		{name: "required list set", rule: rule(domain.RuleRequiredField, `{"field":"affectedFiles"}`, domain.SeverityError),
			edit: func(t *domain.Task) { t.AffectedFiles = domain.Strings{"a.go"} }},
		{name: "required effort", rule: rule(domain.RuleRequiredField, `{"field":"effort","message":"size it"}`, domain.SeverityWarning),
			want: "size it", field: "effort"},
		{name: "required effort set", rule: rule(domain.RuleRequiredField, `{"field":"effort"}`, domain.SeverityError),
			edit: func(t *domain.Task) { t.Effort = &effort }},
		{name: "required deadline set", rule: rule(domain.RuleRequiredField, `{"field":"deadline"}`, domain.SeverityError),
			edit: func(t *domain.Task) { t.Deadline = &deadline }},
		{name: "required file impacts", rule: rule(domain.RuleRequiredField, `{"field":"fileImpacts"}`, domain.SeverityError),
			want: "fileImpacts is required", field: "fileImpacts"},
		{name: "required file impacts set", rule: rule(domain.RuleRequiredField, `{"field":"fileImpacts"}`, domain.SeverityError),
			impacts: []*domain.TaskFileImpact{{FilePath: "a.go", Operation: domain.OpUpdate}}},
		{name: "tests too few", rule: rule(domain.RuleTestRequired, `{"levels":["CODEBASE","API"],"min":2}`, domain.SeverityError),
			edit: func(t *domain.Task) { t.CodebaseTests = domain.Strings{"unit"}; t.UITests = domain.Strings{"ui"} },
			want: "at least 2 CODEBASE/API test(s) required, the task declares 1"},
		{name: "tests enough", rule: rule(domain.RuleTestRequired, `{"levels":["CODEBASE","API"],"min":2}`, domain.SeverityError),
			edit: func(t *domain.Task) { t.CodebaseTests = domain.Strings{"unit"}; t.APITests = domain.Strings{"api"} }},
		{name: "tests one level names its field", rule: rule(domain.RuleTestRequired, `{"levels":["UI"],"min":1}`, domain.SeverityError),
			want: "at least 1 UI test(s) required, the task declares 0", field: "uiTests"},
		{name: "pattern fails", rule: rule(domain.RulePatternMatch, `{"field":"title","pattern":"^\\[[A-Z]+\\] "}`, domain.SeverityError),
			want: `title must match ^\[[A-Z]+\] `, field: "title"},
		{name: "pattern matches", rule: rule(domain.RulePatternMatch, `{"field":"title","pattern":"^\\[[A-Z]+\\] "}`, domain.SeverityError),
			edit: func(t *domain.Task) { t.Title = "[AUTH] Add login" }},
		{name: "pattern on description with message", rule: rule(domain.RulePatternMatch, `{"field":"description","pattern":"(?i)ticket-\\d+","message":"link a ticket"}`, domain.SeverityError),
			edit: func(t *domain.Task) { t.Description = "no link" }, want: "link a ticket", field: "description"},
		{name: "custom true", rule: rule(domain.RuleCustom, `{"expression":"task.priority == 'P2' && task.priorityScore >= 70 && task.effort == null"}`, domain.SeverityError)},
		{name: "custom false", rule: rule(domain.RuleCustom, `{"expression":"task.riskLevel != 'LOW'","message":"low risk needs review"}`, domain.SeverityError),
			want: "low risk needs review"},
		{name: "custom file impacts", rule: rule(domain.RuleCustom,
			`{"expression":"!task.fileImpacts.exists(f, f.filePath.startsWith('db/migrations/') && f.operation == 'DELETE')","message":"never delete a migration"}`, domain.SeverityError),
			impacts: []*domain.TaskFileImpact{{FilePath: "a.go", Operation: domain.OpUpdate}, {FilePath: "db/migrations/0001.sql", Operation: domain.OpDelete}},
			want:    "never delete a migration"},
		{name: "custom file impacts pass", rule: rule(domain.RuleCustom,
			`{"expression":"!task.fileImpacts.exists(f, f.filePath.startsWith('db/migrations/') && f.operation == 'DELETE')"}`, domain.SeverityError),
			impacts: []*domain.TaskFileImpact{{FilePath: "db/migrations/0001.sql", Operation: domain.OpUpdate}}},
		{name: "custom lists and timestamps", rule: rule(domain.RuleCustom,
			`{"expression":"'a.go' in task.affectedFiles && task.deadline != null && task.deadline < timestamp('2026-01-01T00:00:00Z')"}`, domain.SeverityError),
			edit: func(t *domain.Task) { t.AffectedFiles = domain.Strings{"a.go"}; t.Deadline = &deadline }},
		{name: "custom runtime error fails closed", rule: rule(domain.RuleCustom,
			`{"expression":"task.deadline < timestamp('2026-01-01T00:00:00Z')"}`, domain.SeverityError),
			want: `rule "r" cannot be evaluated: evaluation failed`},
		{name: "category filter skips", rule: rule(domain.RuleRequiredField, `{"field":"description"}`, domain.SeverityError, domain.CategoryBug)},
		{name: "category filter applies", rule: rule(domain.RuleRequiredField, `{"field":"description"}`, domain.SeverityError, domain.CategoryBug, domain.CategoryTask),
			want: "description is required", field: "description"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tk := task()
			if c.edit != nil {
				c.edit(tk)
			}
			got := e.Evaluate(context.Background(), []*domain.ValidationRule{c.rule}, Subject{Task: tk, FileImpacts: c.impacts})
			if c.want == "" {
				require.Empty(t, got)
				return
			}
			require.Len(t, got, 1)
			require.Contains(t, got[0].Message, c.want)
			require.Equal(t, c.rule.Severity, got[0].Severity)
			require.Equal(t, "TU-X-TSK-001", got[0].TaskDisplayID)
			if c.field == "" {
				require.Nil(t, got[0].Field)
			} else {
				require.NotNil(t, got[0].Field)
				require.Equal(t, c.field, *got[0].Field)
			}
		})
	}
}

func TestEvaluateSkipsDisabledAndOtherProjects(t *testing.T) {
	e := NewEngine()
	off := rule(domain.RuleRequiredField, `{"field":"description"}`, domain.SeverityError)
	off.Enabled = false
	other := rule(domain.RuleRequiredField, `{"field":"description"}`, domain.SeverityError)
	other.ProjectID = ptr("another")
	own := rule(domain.RuleRequiredField, `{"field":"description"}`, domain.SeverityWarning)
	own.ProjectID = ptr("p")
	got := e.Evaluate(context.Background(), []*domain.ValidationRule{off, other, own}, Subject{Task: task()})
	require.Len(t, got, 1)
	require.Equal(t, own, got[0].Rule)
	v := domain.NewTaskValidation(got)
	require.True(t, v.Valid, "a WARNING leaves the task valid")
}

// A hostile expression that depends on the task passes the write-time check
// but is stopped by the cost limit, quickly, when a big task is evaluated.
func TestHostileExpressionStoppedByCostLimit(t *testing.T) {
	e := NewEngine()
	expr := `task.affectedFiles.all(a, task.affectedFiles.all(b, task.affectedFiles.all(c, a + b + c != "x")))`
	config := domain.JSON(fmt.Sprintf(`{"expression":%q}`, expr))
	_, err := e.Check(domain.RuleCustom, config)
	require.NoError(t, err, "harmless on a small task")
	tk := task()
	for i := range domain.MaxListItems {
		tk.AffectedFiles = append(tk.AffectedFiles, fmt.Sprintf("internal/pkg%03d/file.go", i))
	}
	start := time.Now()
	got := e.Evaluate(context.Background(), []*domain.ValidationRule{rule(domain.RuleCustom, string(config), domain.SeverityError)}, Subject{Task: tk})
	elapsed := time.Since(start)
	require.Len(t, got, 1)
	require.Contains(t, got[0].Message, "cost limit exceeded")
	t.Logf("stopped after %v", elapsed)
}

// Programs are compiled once per config, not per task.
func TestCompiledOncePerConfig(t *testing.T) {
	e := NewEngine()
	r := rule(domain.RuleCustom, `{"expression":"task.title != ''"}`, domain.SeverityError)
	for range 5 {
		require.Empty(t, e.Evaluate(context.Background(), []*domain.ValidationRule{r}, Subject{Task: task()}))
	}
	c1, err := e.compile(r.RuleType, r.Config)
	require.NoError(t, err)
	c2, err := e.compile(r.RuleType, r.Config)
	require.NoError(t, err)
	require.Same(t, c1, c2)
	require.Len(t, e.cache, 1)
}

func TestViolationsError(t *testing.T) {
	r := rule(domain.RuleRequiredField, `{"field":"description"}`, domain.SeverityError)
	f := "description"
	err := domain.ViolationsError([]*domain.RuleViolation{
		{Rule: r, Severity: domain.SeverityError, Message: "description is required", Field: &f, TaskDisplayID: "TU-X-TSK-001"},
		{Rule: r, Severity: domain.SeverityError, Message: "description is required", Field: &f, TaskDisplayID: "TU-X-TSK-002"},
	})
	require.Equal(t, domain.CodeBadUserInput, err.Code)
	require.Contains(t, err.Message, "TU-X-TSK-001, TU-X-TSK-002")
	require.Equal(t, []string{"TU-X-TSK-001", "TU-X-TSK-002"}, err.Details["tasks"])
	list := err.Details["violations"].([]map[string]any)
	require.Len(t, list, 2)
	require.Equal(t, r.GlobalID(), list[0]["rule"])
	require.Equal(t, "description", list[0]["field"])
}

func ptr[T any](v T) *T { return &v }

// TestRegexWorkIsBounded: a pattern computed at evaluation time is held to the
// program limit; the cost of `matches` counts text × program, so repeated
// matches over a large description stop at the cost limit; PATTERN_MATCH
// sees the first MaxPatternText bytes.
func TestRegexWorkIsBounded(t *testing.T) {
	e := NewEngine()
	tk := task()
	tk.Description = strings.Repeat("a", 100_000)
	tk.Title = "(?:a|aa){1,1000}c"
	s := Subject{Task: tk}

	vs := e.Evaluate(context.Background(), []*domain.ValidationRule{
		rule(domain.RuleCustom, `{"expression":"task.description.matches(task.title)"}`, domain.SeverityError)}, s)
	require.Len(t, vs, 1)
	require.Contains(t, vs[0].Message, "regex program size")

	loop := `{"expression":"[1,2,3,4,5,6,7,8,9,10].all(i, !task.description.matches('(?:a|aa){1,15}c'))"}`
	_, err := e.Check(domain.RuleCustom, domain.JSON(loop))
	require.NoError(t, err, "cheap on the sample task")
	vs = e.Evaluate(context.Background(), []*domain.ValidationRule{rule(domain.RuleCustom, loop, domain.SeverityError)}, s)
	require.Len(t, vs, 1)
	require.Contains(t, vs[0].Message, "cost limit")

	// A pattern anchored at the end does not see past MaxPatternText.
	tk.Description = strings.Repeat("é", MaxPatternText) + "END"
	vs = e.Evaluate(context.Background(), []*domain.ValidationRule{
		rule(domain.RulePatternMatch, `{"field":"description","pattern":"END$"}`, domain.SeverityError)}, s)
	require.Len(t, vs, 1)
	require.Equal(t, MaxPatternText-(MaxPatternText%2), len(patternText(tk.Description)))
}

// TestRulesShareOneBudget: the rules of one task share CostLimit; past it the
// regex and CEL rules left are violated unevaluated, fail closed.
func TestRulesShareOneBudget(t *testing.T) {
	e := NewEngine()
	tk := task()
	tk.Description = strings.Repeat("a", 100_000)
	var rules []*domain.ValidationRule
	for i := range 8 {
		r := rule(domain.RuleCustom, fmt.Sprintf(`{"expression":"task.description.matches('(?:a|aa){1,19}c') || size(task.title) == %d"}`, 1000+i), domain.SeverityError)
		r.Name = fmt.Sprintf("r%d", i)
		rules = append(rules, r)
	}
	vs := e.Evaluate(context.Background(), rules, Subject{Task: tk})
	require.Len(t, vs, 8)
	require.Contains(t, vs[0].Message, "does not satisfy")
	require.Contains(t, vs[7].Message, "not evaluated")
}
