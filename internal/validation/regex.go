package validation

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"sync"
	"unicode/utf8"
)

// Regular expressions of rules (PATTERN_MATCH patterns and CEL `matches`) are
// RE2: matching is linear in the text, but the constant is the size of the
// compiled program — `(?:a|aa){1,1000}c` is thousands of instructions, and
// matching it on a 100 KB description took seconds. So both factors are
// bounded: a pattern compiles to at most MaxRegexProgram instructions (longer
// ones are refused when the rule is created), and one match looks at no more
// than RegexWorkBudget/program-size bytes of its text: one match is at most
// 1,000,000 "byte × instruction" steps, under 20 ms on this project's 2-core
// reference machine for the worst patterns (alternations under repetition),
// a few ms for typical ones. A 20-instruction pattern such as
// `(?i)acceptance` sees the first 50 KB of a description.
const (
	// MaxRegexProgram bounds a pattern's compiled RE2 program, in instructions.
	MaxRegexProgram = 200
	// RegexWorkBudget bounds one match: the text a pattern sees is cut to
	// RegexWorkBudget / (its program's instructions) bytes.
	RegexWorkBudget = 1_000_000
	// regexCostDivisor turns a match's work into CEL cost units: a match at
	// the full budget costs half of CostLimit, so a CUSTOM rule makes at
	// most two such matches before the cost limit stops it.
	regexCostDivisor = 2 * RegexWorkBudget / CostLimit
	// regexCacheSize bounds the patterns kept compiled.
	regexCacheSize = 1024
)

// boundedRegex is a compiled pattern and the text length one match may see.
type boundedRegex struct {
	re      *regexp.Regexp
	program int // instructions
	maxText int // bytes
}

// compileRegex compiles pattern, refusing a program larger than
// MaxRegexProgram instructions.
func compileRegex(pattern string) (*boundedRegex, error) {
	parsed, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return nil, fmt.Errorf("pattern is not a valid RE2 regular expression: %v", err)
	}
	prog, err := syntax.Compile(parsed.Simplify())
	if err != nil {
		return nil, fmt.Errorf("pattern is not a valid RE2 regular expression: %v", err)
	}
	if n := len(prog.Inst); n > MaxRegexProgram {
		return nil, fmt.Errorf("pattern is too complex: it compiles to %d instructions, at most %d (large repetition counts like {1,1000} multiply a pattern)", n, MaxRegexProgram)
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, fmt.Errorf("pattern is not a valid RE2 regular expression: %v", err)
	}
	n := len(prog.Inst)
	return &boundedRegex{re: re, program: n, maxText: RegexWorkBudget / n}, nil
}

// match reports whether the pattern matches text's first maxText bytes
// (cut at a character boundary).
func (b *boundedRegex) match(text string) bool {
	return b.re.MatchString(b.seen(text))
}

// seen is the part of text a match looks at.
func (b *boundedRegex) seen(text string) string {
	if len(text) <= b.maxText {
		return text
	}
	cut := b.maxText
	for cut > 0 && !utf8.RuneStart(text[cut]) {
		cut--
	}
	return text[:cut]
}

// work is the "byte × instruction" cost of matching text.
func (b *boundedRegex) work(text string) int {
	return len(b.seen(text)) * b.program
}

// regexCache keeps compiled patterns of CEL `matches` calls, whose patterns
// reach the engine only at evaluation.
type regexCache struct {
	mu sync.Mutex
	m  map[string]regexEntry
}

type regexEntry struct {
	re  *boundedRegex
	err error
}

var celRegexes = &regexCache{m: map[string]regexEntry{}}

func (c *regexCache) get(pattern string) (*boundedRegex, error) {
	c.mu.Lock()
	e, ok := c.m[pattern]
	c.mu.Unlock()
	if ok {
		return e.re, e.err
	}
	re, err := compileRegex(pattern)
	c.mu.Lock()
	if len(c.m) >= regexCacheSize {
		clear(c.m)
	}
	c.m[pattern] = regexEntry{re, err}
	c.mu.Unlock()
	return re, err
}
