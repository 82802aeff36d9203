package domain

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode"
)

// MergePatch applies an RFC 7396 JSON merge patch to doc and returns the
// result: an object patch merges key by key (null removes a key, objects
// merge recursively); any other patch replaces doc.
func MergePatch(doc, patch JSON) (JSON, error) {
	var p any
	if err := decodeJSON(patch, &p); err != nil {
		return nil, InputError("patch", "not JSON: %v", err)
	}
	var d any
	if len(doc) > 0 {
		if err := decodeJSON(doc, &d); err != nil {
			return nil, fmt.Errorf("stored state: %w", err)
		}
	}
	out, err := json.Marshal(mergeValue(d, p))
	if err != nil {
		return nil, err
	}
	return JSON(out), nil
}

func decodeJSON(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber() // numbers stay as written
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("trailing data")
	}
	return nil
}

func mergeValue(target, patch any) any {
	pm, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	tm, ok := target.(map[string]any)
	if !ok {
		tm = map[string]any{}
	}
	for k, v := range pm {
		if v == nil {
			delete(tm, k)
			continue
		}
		tm[k] = mergeValue(tm[k], v)
	}
	return tm
}

// CheckStateSize is LIMIT_EXCEEDED for a state above MaxSessionStateBytes.
func CheckStateSize(field string, state JSON) error {
	if len(state) > MaxSessionStateBytes {
		return &Error{Code: CodeLimitExceeded, Field: field,
			Message: fmt.Sprintf("a session state is at most %d bytes (this one is %d)", MaxSessionStateBytes, len(state)),
			Details: map[string]any{"max": MaxSessionStateBytes}}
	}
	return nil
}

// NewTodoItems checks a new list's items and numbers them 0..n-1: each
// dependency names another position, and the dependencies are acyclic
// (CYCLE_DETECTED, extensions.cycle the positions on the cycle).
func NewTodoItems(in []*TodoItemInput) (TodoItems, error) {
	if len(in) == 0 {
		return nil, InputError("items", "a todo list needs at least one item")
	}
	if len(in) > MaxTodoItems {
		return nil, &Error{Code: CodeLimitExceeded, Field: "items", Message: fmt.Sprintf("at most %d items", MaxTodoItems)}
	}
	items := make(TodoItems, len(in))
	for i, it := range in {
		if it == nil {
			return nil, InputError(fmt.Sprintf("items[%d]", i), "an item is required")
		}
		desc, err := CheckText(fmt.Sprintf("items[%d].description", i), it.Description, MaxMissionLen, true)
		if err != nil {
			return nil, err
		}
		criteria, err := CheckList(fmt.Sprintf("items[%d].acceptanceCriteria", i), it.AcceptanceCriteria, MaxCriteria, MaxCriterionLen)
		if err != nil {
			return nil, err
		}
		if criteria == nil {
			criteria = []string{}
		}
		deps := []int{}
		for _, d := range it.Dependencies {
			if d < 0 || d >= len(in) || d == i {
				return nil, InputError(fmt.Sprintf("items[%d].dependencies", i),
					"dependency %d must name another item's position (0..%d)", d, len(in)-1)
			}
			if !slices.Contains(deps, d) {
				deps = append(deps, d)
			}
		}
		slices.Sort(deps)
		items[i] = &TodoItem{Position: i, Description: desc, AcceptanceCriteria: criteria, Dependencies: deps, Status: TodoPending}
	}
	if cycle := todoCycle(items); cycle != nil {
		return nil, &Error{Code: CodeCycleDetected, Field: "items",
			Message: "the items' dependencies form a cycle", Details: map[string]any{"cycle": cycle}}
	}
	return items, nil
}

// todoCycle returns the positions on a dependency cycle, in dependency order,
// or nil when there is none.
func todoCycle(items TodoItems) []int {
	const (
		white = iota
		grey
		black
	)
	color := make([]int, len(items))
	var stack []int
	var found []int
	var visit func(i int) bool
	visit = func(i int) bool {
		color[i] = grey
		stack = append(stack, i)
		for _, d := range items[i].Dependencies {
			switch color[d] {
			case grey:
				at := slices.Index(stack, d)
				found = slices.Clone(stack[at:])
				return true
			case white:
				if visit(d) {
					return true
				}
			}
		}
		stack = stack[:len(stack)-1]
		color[i] = black
		return false
	}
	for i := range items {
		if color[i] == white && visit(i) {
			return found
		}
	}
	return nil
}

// MoveTodoItem moves item pos of items to status to: PENDING → IN_PROGRESS
// (only when every dependency is COMPLETED or SKIPPED, else
// INVALID_TRANSITION with extensions.waitingOn), IN_PROGRESS → COMPLETED |
// FAILED, PENDING → SKIPPED, FAILED → PENDING.
func MoveTodoItem(items TodoItems, pos int, to TodoItemStatus) error {
	it := items[pos]
	from := it.Status
	allowed := from == TodoPending && (to == TodoInProgress || to == TodoSkipped) ||
		from == TodoInProgress && (to == TodoCompleted || to == TodoFailed) ||
		from == TodoFailed && to == TodoPending
	if !allowed {
		return &Error{Code: CodeInvalidTransition, Field: "status",
			Message: fmt.Sprintf("a todo item cannot move from %s to %s", from, to),
			Details: map[string]any{"from": string(from), "to": string(to)}}
	}
	if to == TodoInProgress {
		waiting := []int{}
		for _, d := range it.Dependencies {
			if !items[d].Status.done() {
				waiting = append(waiting, d)
			}
		}
		if len(waiting) > 0 {
			return &Error{Code: CodeInvalidTransition, Field: "status",
				Message: fmt.Sprintf("item %d waits on items %v", pos, waiting),
				Details: map[string]any{"from": string(from), "to": string(to), "waitingOn": waiting}}
		}
	}
	it.Status = to
	return nil
}

// TodoItemsDone reports whether every item is COMPLETED or SKIPPED.
func TodoItemsDone(items TodoItems) bool {
	for _, it := range items {
		if !it.Status.done() {
			return false
		}
	}
	return len(items) > 0
}

// SearchTerms splits a free-text query into the words a full-text index
// holds (letters and digits), lower-cased, without repeats or stopwords, at
// most 32. Both databases search for any of them, so the query language of
// neither reaches the client, and a stopword is dropped here, in Go, the same
// way for both (PostgreSQL's english configuration would drop it on its side
// only, SQLite's FTS5 keeps it): a query of stopwords alone has no terms.
func SearchTerms(q string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(q), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		if _, stop := Stopwords[w]; stop {
			continue
		}
		if !slices.Contains(out, w) {
			out = append(out, w)
		}
		if len(out) == 32 {
			break
		}
	}
	return out
}

// Stopwords are the words a lesson search ignores: PostgreSQL's english
// stopword list (tsearch_data/english.stop), applied by SearchTerms on both
// databases.
var Stopwords = map[string]struct{}{
	"i": {}, "me": {}, "my": {}, "myself": {}, "we": {}, "our": {}, "ours": {}, "ourselves": {}, "you": {},
	"your": {}, "yours": {}, "yourself": {}, "yourselves": {}, "he": {}, "him": {}, "his": {}, "himself": {},
	"she": {}, "her": {}, "hers": {}, "herself": {}, "it": {}, "its": {}, "itself": {}, "they": {}, "them": {},
	"their": {}, "theirs": {}, "themselves": {}, "what": {}, "which": {}, "who": {}, "whom": {}, "this": {},
	"that": {}, "these": {}, "those": {}, "am": {}, "is": {}, "are": {}, "was": {}, "were": {}, "be": {},
	"been": {}, "being": {}, "have": {}, "has": {}, "had": {}, "having": {}, "do": {}, "does": {}, "did": {},
	"doing": {}, "a": {}, "an": {}, "the": {}, "and": {}, "but": {}, "if": {}, "or": {}, "because": {},
	"as": {}, "until": {}, "while": {}, "of": {}, "at": {}, "by": {}, "for": {}, "with": {}, "about": {},
	"against": {}, "between": {}, "into": {}, "through": {}, "during": {}, "before": {}, "after": {},
	"above": {}, "below": {}, "to": {}, "from": {}, "up": {}, "down": {}, "in": {}, "out": {}, "on": {},
	"off": {}, "over": {}, "under": {}, "again": {}, "further": {}, "then": {}, "once": {}, "here": {},
	"there": {}, "when": {}, "where": {}, "why": {}, "how": {}, "all": {}, "any": {}, "both": {}, "each": {},
	"few": {}, "more": {}, "most": {}, "other": {}, "some": {}, "such": {}, "no": {}, "nor": {}, "not": {},
	"only": {}, "own": {}, "same": {}, "so": {}, "than": {}, "too": {}, "very": {}, "s": {}, "t": {}, "can": {},
	"will": {}, "just": {}, "don": {}, "should": {}, "now": {},
}
