package domain

import (
	"fmt"
	"strings"
	"time"
	"unicode"
)

// transitions lists the lifecycle moves anyone may request (API.md "Task rules").
var transitions = map[TaskStatus][]TaskStatus{
	StatusDraft:      {StatusEvaluating, StatusPending},
	StatusEvaluating: {StatusPending},
	StatusPending:    {StatusInProgress, StatusBlocked},
	StatusBlocked:    {StatusPending},
	StatusInProgress: {StatusValidating, StatusBlocked},
	StatusValidating: {StatusCompleted, StatusFailed},
	StatusFailed:     {StatusPending, StatusBlocked},
}

// engineTransitions are moves only the execution engine makes.
var engineTransitions = map[TaskStatus][]TaskStatus{
	StatusInProgress: {StatusPending, StatusFailed},
}

// CheckTransition returns INVALID_TRANSITION unless from -> to is allowed; engine
// says whether the execution engine (not a user) asks.
func CheckTransition(from, to TaskStatus, engine bool) error {
	allowed := transitions[from]
	if engine {
		allowed = append(append([]TaskStatus(nil), allowed...), engineTransitions[from]...)
	}
	for _, s := range allowed {
		if s == to {
			return nil
		}
	}
	msg := fmt.Sprintf("a task cannot move from %s to %s", from, to)
	switch {
	case from == StatusCompleted:
		msg = "a COMPLETED task is final"
	case !engine && containsStatus(engineTransitions[from], to):
		msg = fmt.Sprintf("only the execution engine moves a task from %s to %s", from, to)
	}
	return &Error{Code: CodeInvalidTransition, Message: msg, Field: "to",
		Details: map[string]any{"from": string(from), "to": string(to)}}
}

func containsStatus(list []TaskStatus, s TaskStatus) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// ItemStatusFor is the list-item status that mirrors a task status.
func ItemStatusFor(s TaskStatus) ItemStatus {
	switch s {
	case StatusInProgress, StatusValidating:
		return ItemInProgress
	case StatusCompleted:
		return ItemCompleted
	case StatusFailed:
		return ItemFailed
	default:
		return ItemPending
	}
}

// DisplayID formats TU-<PROJECT>-<CAT>-<NNN>.
func DisplayID(projectSlug string, category TaskCategory, n int) string {
	return fmt.Sprintf("TU-%s-%s-%03d", ProjectCode(projectSlug), category.Code(), n)
}

// ProjectCode is the <PROJECT> part of display ids: the slug upper-cased, with
// non-alphanumerics removed, at most 8 characters.
func ProjectCode(projectSlug string) string {
	var b strings.Builder
	for _, r := range strings.ToUpper(projectSlug) {
		if b.Len() == 8 {
			break
		}
		if r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

var priorityBase = map[Priority]int{PriorityP1: 100, PriorityP2: 70, PriorityP3: 40, PriorityP4: 10}

// IsQuickWin reports whether effort makes a task a quick win.
func IsQuickWin(effort *Effort) bool { return effort != nil && *effort == EffortTrivial }

// PriorityScore computes a task's score at time now (API.md): base by priority,
// +10 per waiting task (at most +50), +15 for a quick win, and deadline urgency.
func PriorityScore(p Priority, blocksCount int, effort *Effort, deadline *time.Time, now time.Time) int {
	score := priorityBase[p] + min(10*blocksCount, 50)
	if IsQuickWin(effort) {
		score += 15
	}
	if deadline != nil {
		switch left := deadline.Sub(now); {
		case left < 0:
			score += 40
		case left <= 48*time.Hour:
			score += 25
		case left <= 7*24*time.Hour:
			score += 10
		}
	}
	return score
}

// Rescore recomputes the derived fields of t at time now.
func (t *Task) Rescore(now time.Time) {
	t.IsQuickWin = IsQuickWin(t.Effort)
	t.PriorityScore = PriorityScore(t.Priority, t.BlocksCount, t.Effort, t.Deadline, now)
}

// EffortHours are the estimated hours of each effort size.
var EffortHours = map[Effort]float64{EffortTrivial: 0.5, EffortSmall: 2, EffortMedium: 6, EffortLarge: 16, EffortEpic: 40}

// FindPath returns a path of nodes from `from` to `to` following edges
// (adjacency: node -> successors), or nil when there is none. Breadth first, so
// the path is a shortest one; successors are visited in the order given.
func FindPath(edges map[string][]string, from, to string) []string {
	prev := map[string]string{from: ""}
	queue := []string{from}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		if n == to {
			var path []string
			for at := to; at != ""; at = prev[at] {
				path = append(path, at)
				if at == from {
					break
				}
			}
			for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
				path[i], path[j] = path[j], path[i]
			}
			return path
		}
		for _, m := range edges[n] {
			if _, seen := prev[m]; !seen {
				prev[m] = n
				queue = append(queue, m)
			}
		}
	}
	return nil
}

// GraphKind groups relationship types into the acyclic graphs they form:
// DEPENDS_ON and BLOCKS are one dependency graph (BLOCKS reversed); SUBTASK_OF and
// SUPERSEDES each form their own.
func GraphKind(t RelationshipType) []RelationshipType {
	switch t {
	case RelDependsOn, RelBlocks:
		return []RelationshipType{RelDependsOn, RelBlocks}
	case RelSubtaskOf, RelSupersedes:
		return []RelationshipType{t}
	}
	return nil
}

// OrderingEdge orients a link as "from waits on to": DEPENDS_ON source->target,
// BLOCKS target->source, others source->target.
func OrderingEdge(t RelationshipType, source, target string) (from, to string) {
	if t == RelBlocks {
		return target, source
	}
	return source, target
}
