package validation

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/taskgraph/taskgraph/internal/domain"
)

// The rule evaluator: pure code, no database. An Engine turns a rule's config
// into a compiled check (once per distinct config: a rule version compiles
// once, however many tasks it checks) and evaluates it on a task.

// Limits on what a client may put in a config.
const (
	// MaxConfigBytes bounds a rule's JSON config.
	MaxConfigBytes = 8 << 10
	// MaxPattern bounds a PATTERN_MATCH pattern, in characters.
	MaxPattern = 1000
	// MaxExpression bounds a CUSTOM CEL expression, in characters.
	MaxExpression = 2000
	// MaxMessage bounds a config's message, in characters.
	MaxMessage = 500
	// MaxRegexProgram bounds a regular expression's compiled program, in
	// instructions (regexp/syntax), for PATTERN_MATCH patterns and CEL
	// `matches`: Go's regexp runs in time linear in the text, but the factor
	// is the program's size (`(?:a|aa){1,1000}c` is 5,002 instructions).
	MaxRegexProgram = 100
	// MaxPatternText bounds the text a PATTERN_MATCH pattern sees: the first
	// 16 KiB of the field (cut at a character boundary). Program × text is
	// then at most 1.6M steps, a few milliseconds.
	MaxPatternText = 16 << 10
	// MaxTestsRequired bounds TEST_REQUIRED's min.
	MaxTestsRequired = 1000
	// cacheSize bounds the compiled configs kept; past it the cache starts over.
	cacheSize = 1024
)

// RequiredFields are the task fields a REQUIRED_FIELD rule may name, by their
// GraphQL names.
var RequiredFields = []string{"description", "acceptanceCriteria", "effort", "deadline", "affectedFiles",
	"fileImpacts", "codebaseTests", "apiTests", "uiTests", "owner", "phase"}

// testFields are the task fields of each test level.
var testFields = map[domain.TestLevel]string{
	domain.TestCodebase: "codebaseTests", domain.TestAPI: "apiTests", domain.TestUI: "uiTests",
}

// Subject is what a rule is checked on: a task and its file impacts.
type Subject struct {
	Task        *domain.Task
	FileImpacts []*domain.TaskFileImpact
}

// compiled is a checked config, ready to evaluate.
type compiled struct {
	ruleType domain.ValidationRuleType
	field    string             // REQUIRED_FIELD, PATTERN_MATCH
	levels   []domain.TestLevel // TEST_REQUIRED
	min      int                // TEST_REQUIRED
	re       *regexp.Regexp     // PATTERN_MATCH
	reSize   int                // PATTERN_MATCH: re's program size
	pattern  string             // PATTERN_MATCH
	message  string             // optional message of the config
	prog     *celProgram        // CUSTOM
}

// usesImpacts reports whether evaluating needs the task's file impacts.
func (c *compiled) usesImpacts() bool {
	return (c.ruleType == domain.RuleRequiredField && c.field == "fileImpacts") || c.prog != nil
}

// Engine compiles and evaluates rules. It is safe for concurrent use.
type Engine struct {
	cel   *celEnv
	mu    sync.Mutex
	cache map[string]*compiled
}

// NewEngine returns an engine with the CEL environment of tasks.
func NewEngine() *Engine {
	return &Engine{cel: newCELEnv(), cache: map[string]*compiled{}}
}

// Check parses a rule's config against its type: BAD_USER_INPUT, field
// `config`, when it does not fit (unknown key or field, bad regex, CEL that does
// not compile, is not boolean, or runs past the cost limit on a sample task).
// It returns the config re-encoded compactly.
func (e *Engine) Check(t domain.ValidationRuleType, config domain.JSON) (domain.JSON, error) {
	if len(config) > MaxConfigBytes {
		return nil, configError("the config is larger than %d bytes", MaxConfigBytes)
	}
	c, err := e.compile(t, config)
	if err != nil {
		return nil, err
	}
	if c.prog != nil {
		// Data-independent blow-ups (nested comprehensions over literals) are
		// refused now rather than failing on every task later.
		if _, err := c.prog.eval(context.Background(), sampleSubject()); errors.Is(err, errCostLimit) || errors.Is(err, errTimeLimit) {
			return nil, configError("the expression exceeds the evaluation cost limit")
		}
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, config); err != nil {
		return nil, configError("the config is not valid JSON")
	}
	return domain.JSON(buf.Bytes()), nil
}

// compile returns the compiled config, from the cache when it was compiled
// before.
func (e *Engine) compile(t domain.ValidationRuleType, config domain.JSON) (*compiled, error) {
	key := string(t) + "\x00" + string(config)
	e.mu.Lock()
	c, ok := e.cache[key]
	e.mu.Unlock()
	if ok {
		return c, nil
	}
	c, err := e.parse(t, config)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	if len(e.cache) >= cacheSize {
		e.cache = map[string]*compiled{}
	}
	e.cache[key] = c
	e.mu.Unlock()
	return c, nil
}

func configError(format string, args ...any) error {
	return domain.InputError("config", format, args...)
}

// parse checks config against the rule type.
func (e *Engine) parse(t domain.ValidationRuleType, config domain.JSON) (*compiled, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(config, &raw); err != nil || raw == nil {
		return nil, configError("the config must be a JSON object")
	}
	allowed := map[domain.ValidationRuleType][]string{
		domain.RuleRequiredField: {"field", "message"},
		domain.RuleTestRequired:  {"levels", "min", "message"},
		domain.RulePatternMatch:  {"field", "pattern", "message"},
		domain.RuleCustom:        {"expression", "message"},
	}[t]
	if allowed == nil {
		return nil, domain.InputError("ruleType", "unknown rule type %q", t)
	}
	for k := range raw {
		if !contains(allowed, k) {
			return nil, configError("unknown config key %q for %s (allowed: %s)", k, t, strings.Join(allowed, ", "))
		}
	}
	c := &compiled{ruleType: t}
	if m, ok := raw["message"]; ok {
		if err := decodeString(m, "message", &c.message); err != nil {
			return nil, err
		}
		if utf8.RuneCountInString(c.message) > MaxMessage {
			return nil, configError("message is longer than %d characters", MaxMessage)
		}
	}
	switch t {
	case domain.RuleRequiredField:
		if err := decodeString(raw["field"], "field", &c.field); err != nil {
			return nil, err
		}
		if !contains(RequiredFields, c.field) {
			return nil, configError("unknown field %q: one of %s", c.field, strings.Join(RequiredFields, ", "))
		}
	case domain.RuleTestRequired:
		c.levels = []domain.TestLevel{domain.TestCodebase, domain.TestAPI, domain.TestUI}
		if l, ok := raw["levels"]; ok {
			if err := json.Unmarshal(l, &c.levels); err != nil {
				return nil, configError("levels must be a list of CODEBASE, API, UI")
			}
			if len(c.levels) == 0 {
				return nil, configError("levels must name at least one level")
			}
			seen := map[domain.TestLevel]bool{}
			for _, lv := range c.levels {
				if testFields[lv] == "" {
					return nil, configError("unknown test level %q: one of CODEBASE, API, UI", lv)
				}
				if seen[lv] {
					return nil, configError("test level %s is listed twice", lv)
				}
				seen[lv] = true
			}
		}
		c.min = 1
		if m, ok := raw["min"]; ok {
			if err := json.Unmarshal(m, &c.min); err != nil {
				return nil, configError("min must be an integer")
			}
			if c.min < 1 || c.min > MaxTestsRequired {
				return nil, configError("min must be between 1 and %d", MaxTestsRequired)
			}
		}
	case domain.RulePatternMatch:
		if err := decodeString(raw["field"], "field", &c.field); err != nil {
			return nil, err
		}
		if c.field != "title" && c.field != "description" {
			return nil, configError("unknown field %q: title or description", c.field)
		}
		if err := decodeString(raw["pattern"], "pattern", &c.pattern); err != nil {
			return nil, err
		}
		if c.pattern == "" || utf8.RuneCountInString(c.pattern) > MaxPattern {
			return nil, configError("pattern must be 1 to %d characters", MaxPattern)
		}
		re, n, err := compileBounded(c.pattern)
		if err != nil {
			return nil, configError("pattern %v", err)
		}
		c.re, c.reSize = re, n
	case domain.RuleCustom:
		var expr string
		if err := decodeString(raw["expression"], "expression", &expr); err != nil {
			return nil, err
		}
		if strings.TrimSpace(expr) == "" || utf8.RuneCountInString(expr) > MaxExpression {
			return nil, configError("expression must be 1 to %d characters", MaxExpression)
		}
		prog, err := e.cel.compile(expr)
		if err != nil {
			return nil, configError("%v", err)
		}
		c.prog = prog
	}
	return c, nil
}

// compileBounded compiles a RE2 pattern whose program has at most
// MaxRegexProgram instructions.
// It returns the program's size too.
func compileBounded(pattern string) (*regexp.Regexp, int, error) {
	n, err := regexProgramSize(pattern)
	if err != nil {
		return nil, 0, fmt.Errorf("is not a valid RE2 regular expression: %v", err)
	}
	if n > MaxRegexProgram {
		return nil, 0, fmt.Errorf("compiles to %d instructions, more than the %d allowed: simplify it (fewer or smaller repetition counts)", n, MaxRegexProgram)
	}
	re, err := regexp.Compile(pattern)
	return re, n, err
}

// regexProgramSize is the number of instructions pattern compiles to (as
// regexp compiles it).
func regexProgramSize(pattern string) (int, error) {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return 0, err
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return 0, err
	}
	return len(prog.Inst), nil
}

// patternText is the part of text a PATTERN_MATCH pattern sees: at most
// MaxPatternText bytes, cut before a split character.
func patternText(text string) string {
	if len(text) <= MaxPatternText {
		return text
	}
	cut := MaxPatternText
	for cut > 0 && !utf8.RuneStart(text[cut]) {
		cut--
	}
	return text[:cut]
}

func decodeString(raw json.RawMessage, key string, out *string) error {
	if raw == nil {
		return configError("%s is required", key)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return configError("%s must be a string", key)
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// NeedsImpacts reports whether evaluating rules on tasks needs their file
// impacts (so that callers read them only then).
func (e *Engine) NeedsImpacts(rules []*domain.ValidationRule) bool {
	for _, r := range rules {
		if !r.Enabled {
			continue
		}
		c, err := e.compile(r.RuleType, r.Config)
		if err != nil || c.usesImpacts() {
			return true
		}
	}
	return false
}

// Evaluate checks s against the rules that apply to its task (enabled, of its
// project or global, letting its category through), in order, and returns the
// violations. A rule that cannot be evaluated (a stored config the engine no
// longer accepts, a CEL error or the cost limit) counts as violated, with
// the reason: the gate fails closed.
//
// The rules of one task share one budget, CostLimit (CEL cost; a
// PATTERN_MATCH costs its text × program like CEL's `matches`): once spent,
// the remaining PATTERN_MATCH and CUSTOM rules are not evaluated and count as
// violated, so that fifty rules cannot take fifty times one rule's limit.
func (e *Engine) Evaluate(ctx context.Context, rules []*domain.ValidationRule, s Subject) []*domain.RuleViolation {
	out := []*domain.RuleViolation{}
	var spent uint64
	for _, r := range rules {
		if !r.AppliesTo(s.Task) {
			continue
		}
		if v := e.evaluate(ctx, r, s, &spent); v != nil {
			out = append(out, v)
		}
	}
	return out
}

func (e *Engine) evaluate(ctx context.Context, r *domain.ValidationRule, s Subject, spent *uint64) *domain.RuleViolation {
	violation := func(msg string, field string) *domain.RuleViolation {
		v := &domain.RuleViolation{Rule: r, Severity: r.Severity, Message: msg, TaskID: s.Task.ID, TaskDisplayID: s.Task.DisplayID}
		if field != "" {
			v.Field = &field
		}
		return v
	}
	c, err := e.compile(r.RuleType, r.Config)
	if err != nil {
		return violation(fmt.Sprintf("rule %q cannot be evaluated: %v", r.Name, err), "")
	}
	msg := func(def string) string {
		if c.message != "" {
			return c.message
		}
		return def
	}
	t := s.Task
	if (c.ruleType == domain.RulePatternMatch || c.ruleType == domain.RuleCustom) && *spent >= CostLimit {
		return violation(fmt.Sprintf("rule %q was not evaluated: the task's rules together reached the evaluation cost limit", r.Name), "")
	}
	switch c.ruleType {
	case domain.RuleRequiredField:
		if missing(c.field, s) {
			return violation(msg(c.field+" is required"), c.field)
		}
	case domain.RuleTestRequired:
		n, names := 0, make([]string, len(c.levels))
		for i, lv := range c.levels {
			n += len(testsOf(t, lv))
			names[i] = string(lv)
		}
		if n < c.min {
			field := ""
			if len(c.levels) == 1 {
				field = testFields[c.levels[0]]
			}
			return violation(msg(fmt.Sprintf("at least %d %s test(s) required, the task declares %d",
				c.min, strings.Join(names, "/"), n)), field)
		}
	case domain.RulePatternMatch:
		text := t.Title
		if c.field == "description" {
			text = t.Description
		}
		text = patternText(text)
		*spent += (uint64(len(text)) + 1) * uint64(c.reSize) / regexCostDivisor
		if !c.re.MatchString(text) {
			return violation(msg(fmt.Sprintf("%s must match %s", c.field, c.pattern)), c.field)
		}
	case domain.RuleCustom:
		ok, cost, err := c.prog.evalCost(ctx, s)
		*spent += cost
		if err != nil {
			return violation(fmt.Sprintf("rule %q cannot be evaluated: %v", r.Name, err), "")
		}
		if !ok {
			return violation(msg(fmt.Sprintf("the task does not satisfy rule %q", r.Name)), "")
		}
	}
	return nil
}

func testsOf(t *domain.Task, lv domain.TestLevel) []string {
	switch lv {
	case domain.TestCodebase:
		return t.CodebaseTests
	case domain.TestAPI:
		return t.APITests
	case domain.TestUI:
		return t.UITests
	}
	return nil
}

// missing reports whether a REQUIRED_FIELD field is unset: null, an empty
// (or blank) string or an empty list.
func missing(field string, s Subject) bool {
	t := s.Task
	switch field {
	case "description":
		return strings.TrimSpace(t.Description) == ""
	case "acceptanceCriteria":
		return blankList(t.AcceptanceCriteria)
	case "effort":
		return t.Effort == nil || *t.Effort == ""
	case "deadline":
		return t.Deadline == nil
	case "affectedFiles":
		return blankList(t.AffectedFiles)
	case "fileImpacts":
		return len(s.FileImpacts) == 0
	case "codebaseTests":
		return blankList(t.CodebaseTests)
	case "apiTests":
		return blankList(t.APITests)
	case "uiTests":
		return blankList(t.UITests)
	case "owner":
		return t.Owner == nil || *t.Owner == ""
	case "phase":
		return t.Phase == nil || *t.Phase == ""
	}
	return true
}

func blankList(l []string) bool {
	for _, v := range l {
		if strings.TrimSpace(v) != "" {
			return false
		}
	}
	return true
}

// sampleSubject is a typical task, on which a new CUSTOM expression is run once
// to refuse those that blow the cost limit whatever the task.
func sampleSubject() Subject {
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	effort, owner, phase := domain.EffortMedium, domain.OwnerBuildAgent, domain.PhaseAPI
	t := &domain.Task{ID: "00000000-0000-0000-0000-000000000000", DisplayID: "TU-SAMPLE-TSK-001",
		Title: "Sample task", Description: "A task used to check a rule.", Category: domain.CategoryTask,
		Status: domain.StatusDraft, Priority: domain.PriorityP3, RiskLevel: domain.RiskMedium, Effort: &effort,
		Owner: &owner, Phase: &phase, Deadline: &now, AcceptanceCriteria: domain.Strings{"a", "b", "c"},
		CodebaseTests: domain.Strings{"unit"}, APITests: domain.Strings{"api"}, UITests: domain.Strings{"ui"},
		AffectedFiles: domain.Strings{"a.go", "b.go", "c.go"}, Version: 1, CreatedAt: now, UpdatedAt: now}
	impacts := []*domain.TaskFileImpact{
		{FilePath: "a.go", Operation: domain.OpUpdate, Confidence: 1, Source: domain.SourceUserDeclared},
		{FilePath: "b.go", Operation: domain.OpCreate, Confidence: 1, Source: domain.SourceUserDeclared},
	}
	return Subject{Task: t, FileImpacts: impacts}
}
