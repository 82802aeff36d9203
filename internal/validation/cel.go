package validation

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/cost"
	"cel.dev/cel-go/common/overloads"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"

	"github.com/taskgraph/taskgraph/internal/domain"
)

// CUSTOM rules: a CEL boolean expression over `task`, the task's fields by
// their GraphQL names (enums as strings, lists as lists, fileImpacts as a list
// of maps with filePath, operation, confidence and source), evaluated under a
// cost limit and a time limit.

const (
	// CostLimit bounds the CEL cost of one evaluation: past it the evaluation
	// stops with an error.
	CostLimit = 200_000
	// evalTimeout bounds one evaluation's wall time, checked every
	// interruptEvery comprehension iterations: a safety net well behind the
	// cost limit, which stops an expression in milliseconds.
	evalTimeout    = time.Second
	interruptEvery = 10
	// regexCostDivisor turns a `matches` call's work (text bytes × program
	// instructions) into CEL cost: a call on a 100 KB description with a
	// 100-instruction pattern costs 40,000, so one evaluation makes at most
	// five such calls before the cost limit stops it.
	regexCostDivisor = 250
	// recursionLimit bounds the parser's nesting depth.
	recursionLimit = 32
)

// taskTypeName is the CEL type of `task`.
const taskTypeName = "taskgraph.Task"

// taskFields are the fields of `task` with their CEL types.
var taskFields = map[string]*types.Type{
	"id": cel.StringType, "displayId": cel.StringType, "title": cel.StringType, "description": cel.StringType,
	"category": cel.StringType, "status": cel.StringType, "priority": cel.StringType, "riskLevel": cel.StringType,
	"priorityScore": cel.IntType, "blocksCount": cel.IntType, "version": cel.IntType,
	"isQuickWin": cel.BoolType, "inEvaluationQueue": cel.BoolType,
	"effort": cel.NullableType(cel.StringType), "owner": cel.NullableType(cel.StringType),
	"phase":               cel.NullableType(cel.StringType),
	"actualEffortMinutes": cel.NullableType(cel.IntType),
	"deadline":            cel.DynType, "startedAt": cel.DynType, "completedAt": cel.DynType, // timestamp or null
	"createdAt": cel.TimestampType, "updatedAt": cel.TimestampType,
	"acceptanceCriteria": cel.ListType(cel.StringType), "codebaseTests": cel.ListType(cel.StringType),
	"apiTests": cel.ListType(cel.StringType), "uiTests": cel.ListType(cel.StringType),
	"affectedFiles": cel.ListType(cel.StringType),
	"fileImpacts":   cel.ListType(cel.MapType(cel.StringType, cel.DynType)),
}

// taskProvider declares the type of `task` to the checker; at run time the
// task is a map, which CEL selects fields of by key.
type taskProvider struct{ types.Provider }

func (p taskProvider) FindStructType(name string) (*types.Type, bool) {
	if name == taskTypeName {
		return types.NewTypeTypeWithParam(types.NewObjectType(taskTypeName)), true
	}
	return p.Provider.FindStructType(name)
}

func (p taskProvider) FindStructFieldNames(name string) ([]string, bool) {
	if name == taskTypeName {
		out := make([]string, 0, len(taskFields))
		for f := range taskFields {
			out = append(out, f)
		}
		return out, true
	}
	return p.Provider.FindStructFieldNames(name)
}

func (p taskProvider) FindStructFieldType(name, field string) (*types.FieldType, bool) {
	if name == taskTypeName {
		t, ok := taskFields[field]
		if !ok {
			return nil, false
		}
		return &types.FieldType{Type: t}, true
	}
	return p.Provider.FindStructFieldType(name, field)
}

func (p taskProvider) NewValue(name string, fields map[string]ref.Val) ref.Val {
	if name == taskTypeName {
		return types.NewErr("%s cannot be constructed", taskTypeName)
	}
	return p.Provider.NewValue(name, fields)
}

// celEnv is the CEL environment of rules.
type celEnv struct {
	env *cel.Env
	err error
}

func newCELEnv() *celEnv {
	// RegexProgramSizeLimit refuses literal patterns over the limit when the
	// expression compiles, and computed ones when they are evaluated.
	base, err := cel.NewEnv(cel.ParserRecursionLimit(recursionLimit), cel.ParserExpressionSizeLimit(MaxExpression),
		cel.RegexProgramSizeLimit(MaxRegexProgram))
	if err != nil {
		return &celEnv{err: err}
	}
	env, err := base.Extend(cel.CustomTypeProvider(taskProvider{base.CELTypeProvider()}),
		cel.Variable("task", cel.ObjectType(taskTypeName)))
	return &celEnv{env: env, err: err}
}

// celProgram is a compiled expression.
type celProgram struct{ prg cel.Program }

// compile parses and checks expr: it must compile and be boolean.
func (c *celEnv) compile(expr string) (*celProgram, error) {
	if c.err != nil {
		return nil, fmt.Errorf("CEL is unavailable: %w", c.err)
	}
	ast, iss := c.env.Compile(expr)
	if iss.Err() != nil {
		return nil, fmt.Errorf("the expression does not compile: %s", strings.TrimSpace(iss.Err().Error()))
	}
	if !ast.OutputType().IsExactType(cel.BoolType) {
		return nil, fmt.Errorf("the expression must be boolean, not %s", ast.OutputType())
	}
	prg, err := c.env.Program(ast, cel.CostLimit(CostLimit), cel.InterruptCheckFrequency(interruptEvery),
		cel.CostTrackerOptions(
			cost.OverloadTracker(overloads.Matches, matchesCost),
			cost.OverloadTracker(overloads.MatchesString, matchesCost)))
	if err != nil {
		return nil, fmt.Errorf("the expression does not compile: %w", err)
	}
	return &celProgram{prg: prg}, nil
}

// matchesCost is the CEL cost of a `matches` call by the work it did: the
// text's bytes times the pattern's program size (CEL's own estimate counts
// the pattern's characters, not what they compile to). Both overloads,
// matches(text, pattern) and text.matches(pattern), get [text, pattern].
func matchesCost(args []ref.Val, _ ref.Val) *uint64 {
	if len(args) != 2 {
		return nil
	}
	text, ok1 := args[0].(types.String)
	pattern, ok2 := args[1].(types.String)
	if !ok1 || !ok2 {
		return nil
	}
	n, err := regexProgramSize(string(pattern))
	if err != nil {
		return nil
	}
	c := (uint64(len(text)) + 1) * uint64(n) / regexCostDivisor
	return &c
}

// errCostLimit and errTimeLimit are evaluations stopped by a limit.
var (
	errCostLimit = errors.New("evaluation stopped: cost limit exceeded")
	errTimeLimit = errors.New("evaluation stopped: time limit exceeded")
)

// eval runs the program on s.
func (p *celProgram) eval(ctx context.Context, s Subject) (bool, error) {
	ok, _, err := p.evalCost(ctx, s)
	return ok, err
}

// evalCost runs the program on s and returns the CEL cost it took.
func (p *celProgram) evalCost(ctx context.Context, s Subject) (bool, uint64, error) {
	ctx, cancel := context.WithTimeout(ctx, evalTimeout)
	defer cancel()
	out, det, err := p.prg.ContextEval(ctx, map[string]any{"task": taskValue(s)})
	var spent uint64
	if det != nil && det.ActualCost() != nil {
		spent = *det.ActualCost()
	}
	ok, err := p.verdict(out, err)
	return ok, spent, err
}

// verdict reads an evaluation's result.
func (p *celProgram) verdict(out ref.Val, err error) (bool, error) {
	if err != nil {
		msg := err.Error()
		if strings.Contains(msg, "cost limit exceeded") {
			return false, errCostLimit
		}
		if strings.Contains(msg, "operation interrupted") || errors.Is(err, context.DeadlineExceeded) {
			return false, errTimeLimit
		}
		return false, fmt.Errorf("evaluation failed: %s", msg)
	}
	b, ok := out.Value().(bool)
	if !ok {
		return false, fmt.Errorf("evaluation gave %s, not a boolean", out.Type())
	}
	return b, nil
}

// taskValue is the task as CEL sees it.
func taskValue(s Subject) map[string]any {
	t := s.Task
	str := func(p *string) any {
		if p == nil {
			return nil
		}
		return *p
	}
	tm := func(p *time.Time) any {
		if p == nil {
			return nil
		}
		return *p
	}
	list := func(l domain.Strings) []string {
		if l == nil {
			return []string{}
		}
		return l
	}
	var effort, owner, phase *string
	if t.Effort != nil {
		effort = (*string)(t.Effort)
	}
	if t.Owner != nil {
		owner = (*string)(t.Owner)
	}
	if t.Phase != nil {
		phase = (*string)(t.Phase)
	}
	var actual any
	if t.ActualEffortMinutes != nil {
		actual = int64(*t.ActualEffortMinutes)
	}
	impacts := make([]any, len(s.FileImpacts))
	for i, fi := range s.FileImpacts {
		impacts[i] = map[string]any{"filePath": fi.FilePath, "operation": string(fi.Operation),
			"confidence": fi.Confidence, "source": string(fi.Source)}
	}
	return map[string]any{
		"id": t.GlobalID(), "displayId": t.DisplayID, "title": t.Title, "description": t.Description,
		"category": string(t.Category), "status": string(t.Status), "priority": string(t.Priority),
		"riskLevel": string(t.RiskLevel), "priorityScore": int64(t.PriorityScore), "blocksCount": int64(t.BlocksCount),
		"version": int64(t.Version), "isQuickWin": t.IsQuickWin, "inEvaluationQueue": t.InEvaluationQueue(),
		"effort": str(effort), "owner": str(owner), "phase": str(phase), "actualEffortMinutes": actual,
		"deadline": tm(t.Deadline), "startedAt": tm(t.StartedAt), "completedAt": tm(t.CompletedAt),
		"createdAt": t.CreatedAt, "updatedAt": t.UpdatedAt,
		"acceptanceCriteria": list(t.AcceptanceCriteria), "codebaseTests": list(t.CodebaseTests),
		"apiTests": list(t.APITests), "uiTests": list(t.UITests), "affectedFiles": list(t.AffectedFiles),
		"fileImpacts": impacts,
	}
}
