package validation

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/domain"
)

func TestRegexBounds(t *testing.T) {
	e := NewEngine()
	check := func(ty domain.ValidationRuleType, config map[string]any) error {
		raw, err := json.Marshal(config)
		require.NoError(t, err)
		_, err = e.Check(ty, raw)
		return err
	}
	blowUp := `(?:a|aa){1,1000}c`
	for _, err := range []error{
		check(domain.RulePatternMatch, map[string]any{"field": "description", "pattern": blowUp}),
		check(domain.RuleCustom, map[string]any{"expression": "task.description.matches('" + blowUp + "')"}),
		check(domain.RuleCustom, map[string]any{"expression": "matches(task.title, '" + blowUp + "') || true"}),
	} {
		require.Error(t, err)
		var de *domain.Error
		require.ErrorAs(t, err, &de)
		require.Equal(t, domain.CodeBadUserInput, de.Code)
		require.Contains(t, de.Message, "too complex")
	}
	require.NoError(t, check(domain.RulePatternMatch, map[string]any{"field": "description", "pattern": `(?i)acceptance`}))
	require.NoError(t, check(domain.RuleCustom, map[string]any{"expression": "task.title.matches('^[A-Z]')"}))

	// A pattern that only exists at evaluation (the task's title) is bounded
	// then: the rule fails closed instead of running.
	rule := &domain.ValidationRule{Name: "dynamic", RuleType: domain.RuleCustom, Enabled: true, Severity: domain.SeverityError,
		Config: domain.JSON(`{"expression": "task.description.matches(task.title)"}`)}
	task := &domain.Task{ID: "t", Title: blowUp, Description: strings.Repeat("a", 100_000)}
	vs := e.Evaluate(context.Background(), []*domain.ValidationRule{rule}, Subject{Task: task})
	require.Len(t, vs, 1)
	require.Contains(t, vs[0].Message, "too complex")
}

func TestRegexSeesABoundedText(t *testing.T) {
	re, err := compileRegex(`(?:a|aa){1,30}c`)
	require.NoError(t, err)
	require.LessOrEqual(t, re.program, MaxRegexProgram)
	text := strings.Repeat("a", 100_000) + "c"
	require.Equal(t, RegexWorkBudget/re.program, len(re.seen(text)))
	require.False(t, re.match(text), "the c past the bound is not seen")
	require.True(t, re.match("aac"))
	// Cut at a character boundary.
	wide, err := compileRegex(`é`)
	require.NoError(t, err)
	cut := wide.seen(strings.Repeat("é", RegexWorkBudget))
	require.True(t, strings.HasSuffix(cut, "é") && len(cut)%2 == 0)
}
