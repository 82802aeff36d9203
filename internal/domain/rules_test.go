package domain_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/domain"
)

var allStatuses = []domain.TaskStatus{
	domain.StatusDraft, domain.StatusEvaluating, domain.StatusPending, domain.StatusBlocked,
	domain.StatusInProgress, domain.StatusValidating, domain.StatusCompleted, domain.StatusFailed,
}

// TestCheckTransition walks the whole from x to matrix for users and the engine
// against the lifecycle of the API.
func TestCheckTransition(t *testing.T) {
	type move struct{ from, to domain.TaskStatus }
	user := map[move]bool{
		{domain.StatusDraft, domain.StatusEvaluating}:      true,
		{domain.StatusDraft, domain.StatusPending}:         true,
		{domain.StatusEvaluating, domain.StatusPending}:    true,
		{domain.StatusPending, domain.StatusInProgress}:    true,
		{domain.StatusPending, domain.StatusBlocked}:       true,
		{domain.StatusBlocked, domain.StatusPending}:       true,
		{domain.StatusInProgress, domain.StatusValidating}: true,
		{domain.StatusInProgress, domain.StatusBlocked}:    true,
		{domain.StatusValidating, domain.StatusCompleted}:  true,
		{domain.StatusValidating, domain.StatusFailed}:     true,
		{domain.StatusFailed, domain.StatusPending}:        true,
		{domain.StatusFailed, domain.StatusBlocked}:        true,
	}
	engineOnly := map[move]bool{
		{domain.StatusInProgress, domain.StatusPending}: true,
		{domain.StatusPending, domain.StatusFailed}:     true,
		{domain.StatusInProgress, domain.StatusFailed}:  true,
	}
	allowedCount := map[bool]int{}
	for _, engine := range []bool{false, true} {
		for _, from := range allStatuses {
			for _, to := range allStatuses {
				name := fmt.Sprintf("%s->%s/engine=%v", from, to, engine)
				t.Run(name, func(t *testing.T) {
					m := move{from, to}
					want := user[m] || (engine && engineOnly[m])
					err := domain.CheckTransition(from, to, engine)
					if want {
						require.NoError(t, err)
						allowedCount[engine]++
						return
					}
					require.Error(t, err)
					e, ok := domain.AsError(err)
					require.True(t, ok)
					require.Equal(t, domain.CodeInvalidTransition, e.Code)
					require.Equal(t, "to", e.Field)
					require.Equal(t, map[string]any{"from": string(from), "to": string(to)}, e.Details)
					switch {
					case from == domain.StatusCompleted:
						require.Contains(t, e.Message, "final")
					case !engine && engineOnly[m]:
						require.Contains(t, e.Message, "execution engine")
					}
				})
			}
		}
	}
	require.Equal(t, 12, allowedCount[false])
	require.Equal(t, 15, allowedCount[true])
}

func TestCheckTransitionDoesNotMutateTable(t *testing.T) {
	// The engine path appends to a copy; a later user call must still refuse the engine moves.
	require.NoError(t, domain.CheckTransition(domain.StatusInProgress, domain.StatusFailed, true))
	require.Error(t, domain.CheckTransition(domain.StatusInProgress, domain.StatusFailed, false))
	require.Error(t, domain.CheckTransition(domain.StatusInProgress, domain.StatusPending, false))
}

func TestItemStatusFor(t *testing.T) {
	want := map[domain.TaskStatus]domain.ItemStatus{
		domain.StatusDraft: domain.ItemPending, domain.StatusEvaluating: domain.ItemPending,
		domain.StatusPending: domain.ItemPending, domain.StatusBlocked: domain.ItemPending,
		domain.StatusInProgress: domain.ItemInProgress, domain.StatusValidating: domain.ItemInProgress,
		domain.StatusCompleted: domain.ItemCompleted, domain.StatusFailed: domain.ItemFailed,
	}
	for _, s := range allStatuses {
		require.Equal(t, want[s], domain.ItemStatusFor(s), s)
	}
}

func TestListCountDelta(t *testing.T) {
	for _, c := range []struct {
		from, to          domain.TaskStatus
		completed, failed int
	}{
		{domain.StatusPending, domain.StatusInProgress, 0, 0},
		{domain.StatusInProgress, domain.StatusValidating, 0, 0},
		{domain.StatusValidating, domain.StatusCompleted, 1, 0},
		{domain.StatusValidating, domain.StatusFailed, 0, 1},
		{domain.StatusFailed, domain.StatusPending, 0, -1},
		{domain.StatusCompleted, domain.StatusPending, -1, 0},
		{domain.StatusFailed, domain.StatusBlocked, 0, -1},
	} {
		completed, failed := domain.ListCountDelta(c.from, c.to)
		require.Equal(t, [2]int{c.completed, c.failed}, [2]int{completed, failed}, "%s -> %s", c.from, c.to)
	}
}

func TestDisplayID(t *testing.T) {
	tests := []struct {
		slug string
		cat  domain.TaskCategory
		n    int
		want string
	}{
		{"web", domain.CategoryFeature, 1, "TU-WEB-FEA-001"},
		{"my-project", domain.CategoryBug, 42, "TU-MYPROJEC-BUG-042"},
		{"a-b_c.d e", domain.CategoryTask, 7, "TU-ABCDE-TSK-007"},
		{"abcdefghijkl", domain.CategoryRefactor, 999, "TU-ABCDEFGH-REF-999"},
		{"abcdefgh", domain.CategoryTest, 1000, "TU-ABCDEFGH-TST-1000"},
		{"x1-2-3-4-5-6-7-8-9", domain.CategoryDocs, 12, "TU-X1234567-DOC-012"},
		{"café-über", domain.CategoryResearch, 3, "TU-CAFBER-RES-003"},
		{"--a--", domain.CategoryInfra, 9999, "TU-A-INF-9999"},
		{"Mixed-Case", domain.CategoryFeature, 100, "TU-MIXEDCAS-FEA-100"},
		{"12345", domain.CategoryBug, 12345, "TU-12345-BUG-12345"},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			require.Equal(t, tc.want, domain.DisplayID(domain.ProjectCode(tc.slug), tc.cat, tc.n))
		})
	}
}

func TestCategoryCodes(t *testing.T) {
	want := map[domain.TaskCategory]string{
		domain.CategoryFeature: "FEA", domain.CategoryBug: "BUG", domain.CategoryTask: "TSK",
		domain.CategoryRefactor: "REF", domain.CategoryTest: "TST", domain.CategoryDocs: "DOC",
		domain.CategoryResearch: "RES", domain.CategoryInfra: "INF",
	}
	for c, code := range want {
		require.Equal(t, code, c.Code())
		require.True(t, c.Valid())
	}
	require.False(t, domain.TaskCategory("CHORE").Valid())
	require.Equal(t, "", domain.TaskCategory("CHORE").Code())
}

func TestPriorityScore(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *time.Time { v := now.Add(d); return &v }
	trivial, small := domain.EffortTrivial, domain.EffortSmall
	tests := []struct {
		name     string
		p        domain.Priority
		blocks   int
		effort   *domain.Effort
		deadline *time.Time
		want     int
	}{
		{"P1 base", domain.PriorityP1, 0, nil, nil, 100},
		{"P2 base", domain.PriorityP2, 0, nil, nil, 70},
		{"P3 base", domain.PriorityP3, 0, nil, nil, 40},
		{"P4 base", domain.PriorityP4, 0, nil, nil, 10},
		{"one waiter", domain.PriorityP3, 1, nil, nil, 50},
		{"four waiters", domain.PriorityP3, 4, nil, nil, 80},
		{"five waiters reach the cap", domain.PriorityP3, 5, nil, nil, 90},
		{"six waiters stay capped", domain.PriorityP3, 6, nil, nil, 90},
		{"many waiters stay capped", domain.PriorityP4, 100, nil, nil, 60},
		{"quick win", domain.PriorityP3, 0, &trivial, nil, 55},
		{"small is no quick win", domain.PriorityP3, 0, &small, nil, 40},
		{"overdue", domain.PriorityP3, 0, nil, at(-time.Second), 80},
		{"long overdue", domain.PriorityP3, 0, nil, at(-30 * 24 * time.Hour), 80},
		{"due now", domain.PriorityP3, 0, nil, at(0), 65},
		{"due in 1h", domain.PriorityP3, 0, nil, at(time.Hour), 65},
		{"due in exactly 48h", domain.PriorityP3, 0, nil, at(48 * time.Hour), 65},
		{"due just after 48h", domain.PriorityP3, 0, nil, at(48*time.Hour + time.Second), 50},
		{"due in exactly 7 days", domain.PriorityP3, 0, nil, at(7 * 24 * time.Hour), 50},
		{"due just after 7 days", domain.PriorityP3, 0, nil, at(7*24*time.Hour + time.Second), 40},
		{"due in a month", domain.PriorityP3, 0, nil, at(30 * 24 * time.Hour), 40},
		{"everything", domain.PriorityP1, 9, &trivial, at(-time.Hour), 100 + 50 + 15 + 40},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, domain.PriorityScore(tc.p, tc.blocks, tc.effort, tc.deadline, now))
		})
	}
}

func TestRescore(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	trivial := domain.EffortTrivial
	deadline := now.Add(24 * time.Hour)
	task := &domain.Task{Priority: domain.PriorityP2, BlocksCount: 2, Effort: &trivial, Deadline: &deadline}
	task.Rescore(now)
	require.True(t, task.IsQuickWin)
	require.Equal(t, 70+20+15+25, task.PriorityScore)

	task.Effort = nil
	task.Deadline = nil
	task.Rescore(now)
	require.False(t, task.IsQuickWin)
	require.Equal(t, 90, task.PriorityScore)
}

func TestFindPath(t *testing.T) {
	edges := map[string][]string{
		"a": {"b", "c"},
		"b": {"d"},
		"c": {"d", "e"},
		"d": {"f"},
		"e": {"f"},
		"x": {"y"},
		"y": {"x"},
	}
	tests := []struct {
		name     string
		from, to string
		want     []string
	}{
		{"direct", "a", "b", []string{"a", "b"}},
		{"two hops, first successor wins", "a", "d", []string{"a", "b", "d"}},
		{"shortest of several", "a", "f", []string{"a", "b", "d", "f"}},
		{"via second branch", "a", "e", []string{"a", "c", "e"}},
		{"same node", "a", "a", []string{"a"}},
		{"no path backwards", "f", "a", nil},
		{"unknown start", "q", "a", nil},
		{"disconnected", "a", "x", nil},
		{"cycle terminates", "x", "z", nil},
		{"around a cycle", "x", "y", []string{"x", "y"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, domain.FindPath(edges, tc.from, tc.to))
		})
	}
	require.Nil(t, domain.FindPath(nil, "a", "b"))
}

func TestGraphKindAndOrderingEdge(t *testing.T) {
	dep := []domain.RelationshipType{domain.RelDependsOn, domain.RelBlocks}
	require.Equal(t, dep, domain.GraphKind(domain.RelDependsOn))
	require.Equal(t, dep, domain.GraphKind(domain.RelBlocks))
	require.Equal(t, []domain.RelationshipType{domain.RelSubtaskOf}, domain.GraphKind(domain.RelSubtaskOf))
	require.Equal(t, []domain.RelationshipType{domain.RelSupersedes}, domain.GraphKind(domain.RelSupersedes))
	for _, typ := range []domain.RelationshipType{domain.RelRelatedTo, domain.RelDuplicateOf, domain.RelImplements,
		domain.RelConflictsWith, domain.RelEnables, domain.RelInspiredBy, domain.RelTests} {
		require.Nil(t, domain.GraphKind(typ), typ)
		require.False(t, typ.Acyclic(), typ)
	}
	for _, typ := range []domain.RelationshipType{domain.RelDependsOn, domain.RelBlocks, domain.RelSubtaskOf, domain.RelSupersedes} {
		require.True(t, typ.Acyclic(), typ)
	}

	from, to := domain.OrderingEdge(domain.RelDependsOn, "s", "t")
	require.Equal(t, []string{"s", "t"}, []string{from, to})
	from, to = domain.OrderingEdge(domain.RelBlocks, "s", "t")
	require.Equal(t, []string{"t", "s"}, []string{from, to})
	from, to = domain.OrderingEdge(domain.RelSubtaskOf, "s", "t")
	require.Equal(t, []string{"s", "t"}, []string{from, to})
}

func TestIsQuickWin(t *testing.T) {
	require.False(t, domain.IsQuickWin(nil))
	for _, e := range []domain.Effort{domain.EffortSmall, domain.EffortMedium, domain.EffortLarge, domain.EffortEpic} {
		require.False(t, domain.IsQuickWin(&e), e)
	}
	e := domain.EffortTrivial
	require.True(t, domain.IsQuickWin(&e))
	require.Equal(t, map[domain.Effort]float64{domain.EffortTrivial: 0.5, domain.EffortSmall: 2,
		domain.EffortMedium: 6, domain.EffortLarge: 16, domain.EffortEpic: 40}, domain.EffortHours)
}

func TestSearchPathExpandsOneLevelAtATime(t *testing.T) {
	edges := map[string][]string{"a": {"b", "c"}, "b": {"d"}, "c": {"d"}, "d": {"e"}, "x": {"a"}}
	var calls [][]string
	path, err := domain.SearchPath("a", "e", func(frontier []string) (map[string][]string, error) {
		calls = append(calls, append([]string(nil), frontier...))
		out := map[string][]string{}
		for _, n := range frontier {
			out[n] = edges[n]
		}
		return out, nil
	})
	require.NoError(t, err)
	require.Equal(t, []string{"a", "b", "d", "e"}, path)
	require.Equal(t, [][]string{{"a"}, {"b", "c"}, {"d"}}, calls, "one call per level, nothing unreachable expanded")

	path, err = domain.SearchPath("e", "a", func(frontier []string) (map[string][]string, error) { return nil, nil })
	require.NoError(t, err)
	require.Nil(t, path)
}

func TestPickDisplayCode(t *testing.T) {
	for _, tc := range []struct {
		slug  string
		taken []string
		want  string
	}{
		{"login", nil, "LOGIN"},
		{"login", []string{"LOGIN"}, "LOGIN2"},
		{"login", []string{"LOGIN", "LOGIN2", "LOGIN3"}, "LOGIN4"},
		{"login-api-v2", []string{"LOGINAPI"}, "LOGINAP2"},
		{"login-api-v2", []string{"LOGINAPI", "LOGINAP2"}, "LOGINAP3"},
		{"ab", []string{"AB", "AB2", "AB3", "AB4", "AB5", "AB6", "AB7", "AB8", "AB9"}, "AB10"},
	} {
		got, ok := domain.PickDisplayCode(tc.slug, tc.taken)
		require.True(t, ok, tc.slug)
		require.Equal(t, tc.want, got, "%s with %v taken", tc.slug, tc.taken)
		require.True(t, strings.HasPrefix(got, domain.DisplayCodeStem(tc.slug)), "a store finds every candidate by the stem")
	}
	// Every candidate taken: none is left.
	taken := []string{"ABCDEFGH"}
	for i := 2; i < 1000; i++ {
		n := strconv.Itoa(i)
		taken = append(taken, "ABCDEFGH"[:8-len(n)]+n)
	}
	_, ok := domain.PickDisplayCode("abcdefgh", taken)
	require.False(t, ok)
}
