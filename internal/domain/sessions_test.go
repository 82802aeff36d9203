package domain_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/domain"
)

// The examples of RFC 7396, appendix A.
func TestMergePatch(t *testing.T) {
	for _, c := range []struct{ doc, patch, want string }{
		{`{"a":"b"}`, `{"a":"c"}`, `{"a":"c"}`},
		{`{"a":"b"}`, `{"b":"c"}`, `{"a":"b","b":"c"}`},
		{`{"a":"b"}`, `{"a":null}`, `{}`},
		{`{"a":"b","b":"c"}`, `{"a":null}`, `{"b":"c"}`},
		{`{"a":["b"]}`, `{"a":"c"}`, `{"a":"c"}`},
		{`{"a":"c"}`, `{"a":["b"]}`, `{"a":["b"]}`},
		{`{"a":{"b":"c"}}`, `{"a":{"b":"d","c":null}}`, `{"a":{"b":"d"}}`},
		{`{"a":[{"b":"c"}]}`, `{"a":[1]}`, `{"a":[1]}`},
		{`["a","b"]`, `["c","d"]`, `["c","d"]`},
		{`{"a":"b"}`, `["c"]`, `["c"]`},
		{`{"a":"foo"}`, `null`, `null`},
		{`{"a":"foo"}`, `"bar"`, `"bar"`},
		{`{"e":null}`, `{"a":1}`, `{"e":null,"a":1}`},
		{`[1,2]`, `{"a":"b","c":null}`, `{"a":"b"}`},
		{`{}`, `{"a":{"bb":{"ccc":null}}}`, `{"a":{"bb":{}}}`},
		{`{"n":12345678901234567890}`, `{"m":1.50}`, `{"n":12345678901234567890,"m":1.50}`},
	} {
		got, err := domain.MergePatch(domain.JSON(c.doc), domain.JSON(c.patch))
		require.NoError(t, err, "%s + %s", c.doc, c.patch)
		require.JSONEq(t, c.want, string(got), "%s + %s", c.doc, c.patch)
	}
	_, err := domain.MergePatch(domain.JSON(`{}`), domain.JSON(`{"a":`))
	require.Equal(t, domain.CodeBadUserInput, domain.ErrorCode(err))
}

func TestNewTodoItems(t *testing.T) {
	items := func(deps ...[]int) []*domain.TodoItemInput {
		out := make([]*domain.TodoItemInput, len(deps))
		for i, d := range deps {
			out[i] = &domain.TodoItemInput{Description: "x", Dependencies: d}
		}
		return out
	}
	for _, c := range []struct {
		name  string
		in    []*domain.TodoItemInput
		code  domain.Code
		field string
		cycle []int
	}{
		{"chain", items(nil, []int{0}, []int{1, 0}), "", "", nil},
		{"none", items(), domain.CodeBadUserInput, "items", nil},
		{"self", items([]int{0}), domain.CodeBadUserInput, "items[0].dependencies", nil},
		{"out of range", items(nil, []int{2}), domain.CodeBadUserInput, "items[1].dependencies", nil},
		{"negative", items(nil, []int{-1}), domain.CodeBadUserInput, "items[1].dependencies", nil},
		{"two-cycle", items([]int{1}, []int{0}), domain.CodeCycleDetected, "items", []int{0, 1}},
		{"cycle past a tail", items(nil, []int{0, 3}, []int{1}, []int{2}), domain.CodeCycleDetected, "items", []int{1, 3, 2}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := domain.NewTodoItems(c.in)
			if c.code == "" {
				require.NoError(t, err)
				require.Len(t, got, len(c.in))
				for i, it := range got {
					require.Equal(t, i, it.Position)
					require.Equal(t, domain.TodoPending, it.Status)
				}
				return
			}
			e, ok := domain.AsError(err)
			require.True(t, ok, "%v", err)
			require.Equal(t, c.code, e.Code)
			require.Equal(t, c.field, e.Field)
			if c.cycle != nil {
				require.Equal(t, c.cycle, e.Details["cycle"])
			}
		})
	}
}

func TestMoveTodoItem(t *testing.T) {
	mk := func() domain.TodoItems {
		items, err := domain.NewTodoItems([]*domain.TodoItemInput{{Description: "a"}, {Description: "b", Dependencies: []int{0}}})
		require.NoError(t, err)
		return items
	}
	items := mk()
	err := domain.MoveTodoItem(items, 1, domain.TodoInProgress)
	e, _ := domain.AsError(err)
	require.Equal(t, domain.CodeInvalidTransition, e.Code)
	require.Equal(t, []int{0}, e.Details["waitingOn"])
	require.NoError(t, domain.MoveTodoItem(items, 0, domain.TodoSkipped))
	require.NoError(t, domain.MoveTodoItem(items, 1, domain.TodoInProgress))
	require.False(t, domain.TodoItemsDone(items))
	require.NoError(t, domain.MoveTodoItem(items, 1, domain.TodoCompleted))
	require.True(t, domain.TodoItemsDone(items))
	for _, bad := range [][2]domain.TodoItemStatus{{domain.TodoCompleted, domain.TodoPending}, {domain.TodoSkipped, domain.TodoInProgress}} {
		items := mk()
		items[0].Status = bad[0]
		require.Equal(t, domain.CodeInvalidTransition, domain.ErrorCode(domain.MoveTodoItem(items, 0, bad[1])))
	}
}

func TestSearchTerms(t *testing.T) {
	// Operators of either query language are plain words here.
	// Stopwords (and, or, the) are dropped, the same for both databases.
	require.Equal(t, []string{"database", "migration", "go", "db", "x"},
		domain.SearchTerms(`Database "migration"; go AND db.go -x OR (database) the`))
	require.Empty(t, domain.SearchTerms(` !!! ** `))
	require.Empty(t, domain.SearchTerms(`The`))
}

func TestCheckSessionStatusFilter(t *testing.T) {
	all := domain.AgentSessionStatuses
	for _, c := range []struct {
		in []domain.AgentSessionStatus
		ok bool
	}{
		{nil, true},
		{[]domain.AgentSessionStatus{domain.SessionFailed}, true},
		{[]domain.AgentSessionStatus{domain.SessionPending, domain.SessionPending}, true},
		{all, true},
		{append(append([]domain.AgentSessionStatus{}, all...), domain.SessionPending), false},
	} {
		err := domain.CheckSessionStatusFilter(c.in)
		if c.ok {
			require.NoError(t, err, "%v", c.in)
			continue
		}
		e, ok := domain.AsError(err)
		require.True(t, ok, "%v: %v", c.in, err)
		require.Equal(t, domain.CodeBadUserInput, e.Code)
		require.Equal(t, "status", e.Field)
	}
}
