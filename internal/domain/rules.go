package domain

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// transitions lists the lifecycle moves anyone may request.
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
	// A PENDING task fails when a question about it times out with FAIL_TASK.
	StatusPending: {StatusFailed},
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

// CheckManualTransition is CheckTransition for a person's move of a task that
// may be planned in a run: while the task's place in an unfinished run is still
// open (pending or running), only the run moves it — its agent's calls, the
// sweep, cancel — so that no run waits forever on a task moved by hand.
func CheckManualTransition(from, to TaskStatus, runNumber int, heldByRun bool) error {
	if err := CheckTransition(from, to, false); err != nil {
		return err
	}
	if heldByRun {
		return &Error{Code: CodeInvalidTransition, Field: "to",
			Message: fmt.Sprintf("the task is in execution run %d, which moves it through its agents; cancel the run to move it by hand", runNumber),
			Details: map[string]any{"from": string(from), "to": string(to)}}
	}
	return nil
}

func containsStatus(list []TaskStatus, s TaskStatus) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// ListCountDelta is how a task of a list moving from one status to another
// changes the list's counters of completed and failed tasks.
func ListCountDelta(from, to TaskStatus) (completed, failed int) {
	count := func(s TaskStatus, sign int) {
		switch s {
		case StatusCompleted:
			completed += sign
		case StatusFailed:
			failed += sign
		}
	}
	count(from, -1)
	count(to, 1)
	return completed, failed
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

// DisplayID formats TU-<PROJECT>-<CAT>-<NNN> from the project's display code.
func DisplayID(projectCode string, category TaskCategory, n int) string {
	return fmt.Sprintf("TU-%s-%s-%03d", projectCode, category.Code(), n)
}

// SetDisplayID gives t its display id and the key that orders it naturally.
func (t *Task) SetDisplayID(id string) { t.DisplayID, t.DisplaySort = id, DisplaySortKey(id) }

// DisplaySortKey is what display ids order by: the id with its number
// zero-padded to 10 digits, so that TU-X-TSK-999 sorts before TU-X-TSK-1000.
func DisplaySortKey(displayID string) string {
	i := strings.LastIndexByte(displayID, '-')
	num := displayID[i+1:]
	if len(num) >= 10 {
		return displayID
	}
	return displayID[:i+1] + strings.Repeat("0", 10-len(num)) + num
}

// ProjectCode is the display code a project's slug asks for: the slug
// upper-cased, without non-alphanumerics, at most 8 characters.
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

// DisplayCodeStem is what every display code PickDisplayCode may choose for
// a slug starts with: a store reads the codes taken with that prefix.
func DisplayCodeStem(projectSlug string) string {
	code := ProjectCode(projectSlug)
	return code[:min(len(code), 5)]
}

// PickDisplayCode chooses a project's display code: the slug's own
// (ProjectCode) when no project has it, else that code cut short to make room
// for the lowest number from 2 that gives a free one (LOGIN → LOGIN2,
// LOGINAPI → LOGINAP2, … LOGIN999). taken holds the codes already used that
// start with DisplayCodeStem. False when all of them are taken.
func PickDisplayCode(projectSlug string, taken []string) (string, bool) {
	used := make(map[string]bool, len(taken))
	for _, c := range taken {
		used[c] = true
	}
	code := ProjectCode(projectSlug)
	if !used[code] {
		return code, true
	}
	for i := 2; i < 1000; i++ {
		n := strconv.Itoa(i)
		c := code[:min(len(code), 8-len(n))] + n
		if !used[c] {
			return c, true
		}
	}
	return "", false
}

var priorityBase = map[Priority]int{PriorityP1: 100, PriorityP2: 70, PriorityP3: 40, PriorityP4: 10}

// IsQuickWin reports whether effort makes a task a quick win.
func IsQuickWin(effort *Effort) bool { return effort != nil && *effort == EffortTrivial }

// PriorityScore computes a task's score at time now: base by priority,
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
	path, _ := SearchPath(from, to, func(frontier []string) (map[string][]string, error) {
		out := make(map[string][]string, len(frontier))
		for _, n := range frontier {
			out[n] = edges[n]
		}
		return out, nil
	})
	return path
}

// SearchPath is FindPath over a graph discovered one breadth-first level at a
// time: expand returns the successors of every node of a frontier. Only the part
// of the graph reachable from `from` is ever expanded, one call per level.
func SearchPath(from, to string, expand func(frontier []string) (map[string][]string, error)) ([]string, error) {
	prev := map[string]string{from: ""}
	frontier := []string{from}
	for len(frontier) > 0 {
		if _, ok := prev[to]; ok {
			break
		}
		succ, err := expand(frontier)
		if err != nil {
			return nil, err
		}
		var next []string
		for _, n := range frontier {
			for _, m := range succ[n] {
				if _, seen := prev[m]; !seen {
					prev[m] = n
					next = append(next, m)
				}
			}
		}
		frontier = next
	}
	if _, ok := prev[to]; !ok {
		return nil, nil
	}
	var path []string
	for at := to; ; at = prev[at] {
		path = append(path, at)
		if at == from {
			break
		}
	}
	for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
		path[i], path[j] = path[j], path[i]
	}
	return path, nil
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
