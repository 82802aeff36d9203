package validation_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/store"
)

func (b *bundle) task(title string, edit ...func(*domain.CreateTaskInput)) (*domain.Task, error) {
	in := domain.CreateTaskInput{ProjectID: b.project.GlobalID(), Title: title}
	for _, e := range edit {
		e(&in)
	}
	return b.svc.Tasks.CreateTask(as(b.owner), in)
}

func (b *bundle) mustTask(title string, edit ...func(*domain.CreateTaskInput)) *domain.Task {
	b.t.Helper()
	t, err := b.task(title, edit...)
	require.NoError(b.t, err)
	return t
}

func (b *bundle) status(t *domain.Task) domain.TaskStatus {
	b.t.Helper()
	got, err := b.db.Tasks.TasksByIDs(context.Background(), []string{t.ID})
	require.NoError(b.t, err)
	return got[0].Status
}

func violations(t *testing.T, err error) []map[string]any {
	t.Helper()
	e := requireCode(t, err, domain.CodeBadUserInput)
	list, ok := e.Details["violations"].([]map[string]any)
	require.True(t, ok, "%v", e.Details)
	return list
}

func TestGateOnEveryEntryIntoPending(t *testing.T) {
	run(t, func(t *testing.T, b *bundle) {
		pid := ptr(b.project.GlobalID())
		r := b.mustRule(b.owner, pid, domain.RuleRequiredField, `{"field":"description"}`, domain.SeverityError)
		b.mustRule(b.owner, pid, domain.RuleRequiredField, `{"field":"effort"}`, domain.SeverityWarning)
		list, err := b.svc.Lists.CreateTaskList(as(b.owner), domain.CreateTaskListInput{ProjectID: b.project.GlobalID(), Name: "L"})
		require.NoError(t, err)

		// A DRAFT task is fine; moving it to PENDING is not.
		bare := b.mustTask("bare")
		_, _, err = b.svc.Tasks.TransitionTask(as(b.owner), domain.TransitionTaskInput{ID: bare.GlobalID(), To: domain.StatusPending})
		vs := violations(t, err)
		require.Equal(t, []map[string]any{{"rule": r.GlobalID(), "ruleName": r.Name, "message": "description is required",
			"field": "description", "severity": "ERROR", "task": bare.DisplayID}}, vs)
		require.Equal(t, domain.StatusDraft, b.status(bare))

		_, _, err = b.svc.Lists.AddTasksToList(as(b.owner), domain.AddTasksToListInput{TaskListID: list.GlobalID(), TaskIDs: []string{bare.GlobalID()}})
		violations(t, err)
		require.Equal(t, domain.StatusDraft, b.status(bare))
		got, err := b.db.Tasks.TasksByIDs(context.Background(), []string{bare.ID})
		require.NoError(t, err)
		require.Nil(t, got[0].TaskListID, "nothing changed")

		_, err = b.svc.Tasks.UpdateTask(as(b.owner), domain.UpdateTaskInput{ID: bare.GlobalID(), TaskListID: ptr(list.GlobalID())})
		violations(t, err)
		_, err = b.svc.Lists.CreateTaskList(as(b.owner), domain.CreateTaskListInput{ProjectID: b.project.GlobalID(), Name: "M",
			TaskIDs: []string{bare.GlobalID()}})
		violations(t, err)

		count := func() int {
			n, err := b.db.Tasks.CountTasks(context.Background(), store.TaskQuery{Scope: domain.ProjectScope{All: true}})
			require.NoError(t, err)
			return n[""]
		}
		before := count()
		_, err = b.task("in a list", func(in *domain.CreateTaskInput) { in.TaskListID = ptr(list.GlobalID()) })
		violations(t, err)
		require.Equal(t, before, count(), "nothing created")

		// Fixed, it goes through; the WARNING rule (effort) never blocks.
		ok := b.mustTask("ok", func(in *domain.CreateTaskInput) {
			in.TaskListID = ptr(list.GlobalID())
			in.Description = ptr("why")
		})
		require.Equal(t, domain.StatusPending, ok.Status)
		_, err = b.svc.Tasks.UpdateTask(as(b.owner), domain.UpdateTaskInput{ID: bare.GlobalID(), Description: ptr("now explained")})
		require.NoError(t, err)
		_, _, err = b.svc.Lists.AddTasksToList(as(b.owner), domain.AddTasksToListInput{TaskListID: list.GlobalID(), TaskIDs: []string{bare.GlobalID()}})
		require.NoError(t, err)
		require.Equal(t, domain.StatusPending, b.status(bare))

		// A disabled rule, or one filtering other categories, does not block.
		_, err = b.rules.UpdateValidationRule(as(b.owner), domain.UpdateValidationRuleInput{ID: r.GlobalID(), Enabled: ptr(false)})
		require.NoError(t, err)
		b.mustTask("no description", func(in *domain.CreateTaskInput) { in.TaskListID = ptr(list.GlobalID()) })
		_, err = b.rules.UpdateValidationRule(as(b.owner), domain.UpdateValidationRuleInput{ID: r.GlobalID(), Enabled: ptr(true),
			CategoryFilter: []domain.TaskCategory{domain.CategoryBug}})
		require.NoError(t, err)
		b.mustTask("a task, not a bug", func(in *domain.CreateTaskInput) { in.TaskListID = ptr(list.GlobalID()) })
		_, err = b.task("a bug", func(in *domain.CreateTaskInput) {
			in.TaskListID = ptr(list.GlobalID())
			in.Category = ptr(domain.CategoryBug)
		})
		violations(t, err)
	})
}

func TestGateOnStartExecutionRun(t *testing.T) {
	run(t, func(t *testing.T, b *bundle) {
		list, err := b.svc.Lists.CreateTaskList(as(b.owner), domain.CreateTaskListInput{ProjectID: b.project.GlobalID(), Name: "L"})
		require.NoError(t, err)
		inList := func(in *domain.CreateTaskInput) { in.TaskListID = ptr(list.GlobalID()) }
		a, c := b.mustTask("a", inList), b.mustTask("c", inList)
		b.mustTask("b", inList, func(in *domain.CreateTaskInput) { in.CodebaseTests = []string{"unit"} })
		// The rule comes after the tasks entered the list.
		b.mustRule(b.admin, nil, domain.RuleTestRequired, `{"levels":["CODEBASE"],"min":1}`, domain.SeverityError)
		b.mustRule(b.admin, nil, domain.RuleRequiredField, `{"field":"effort"}`, domain.SeverityWarning)
		_, err = b.svc.Runs.StartExecutionRun(as(b.owner), domain.StartExecutionRunInput{TaskListID: list.GlobalID()})
		e := requireCode(t, err, domain.CodeBadUserInput)
		require.Equal(t, []string{a.DisplayID, c.DisplayID}, e.Details["tasks"])
		require.Contains(t, e.Message, a.DisplayID+", "+c.DisplayID)
		require.Len(t, e.Details["violations"], 2)
		runs, err := b.db.Runs.RunsOfLists(context.Background(), []string{list.ID})
		require.NoError(t, err)
		require.Empty(t, runs, "nothing created")

		for _, tk := range []*domain.Task{a, c} {
			_, err := b.svc.Tasks.UpdateTask(as(b.owner), domain.UpdateTaskInput{ID: tk.GlobalID(), CodebaseTests: []string{"unit"}})
			require.NoError(t, err)
		}
		run, err := b.svc.Runs.StartExecutionRun(as(b.owner), domain.StartExecutionRunInput{TaskListID: list.GlobalID()})
		require.NoError(t, err, "WARNING rules never block")
		require.Equal(t, 1, run.RunNumber)
	})
}
