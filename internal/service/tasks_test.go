package service_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/domain"
)

func TestCreateTaskDefaults(t *testing.T) {
	run(t, func(t *testing.T, b *bundle) {
		task := b.createTask("  Write the docs  ")
		require.Equal(t, "Write the docs", task.Title, "titles are trimmed")
		require.Equal(t, domain.CategoryTask, task.Category)
		require.Equal(t, domain.PriorityP3, task.Priority)
		require.Equal(t, domain.RiskMedium, task.RiskLevel)
		require.Equal(t, domain.StatusDraft, task.Status)
		require.Nil(t, task.Queue)
		require.Nil(t, task.TaskListID)
		require.Equal(t, 1, task.Version)
		require.Equal(t, 40, task.PriorityScore)
		require.Zero(t, task.BlocksCount)
		require.False(t, task.IsQuickWin)
		require.Equal(t, b.owner.UserID, task.UserID)
		require.Equal(t, b.project.ID, task.ProjectID)
		require.Equal(t, at(0), task.CreatedAt)
		require.Equal(t, at(0), task.UpdatedAt)
		require.Equal(t, "TU-WEBAPP-TSK-001", task.DisplayID)

		stored := b.reload(task)
		require.Equal(t, task.DisplayID, stored.DisplayID)
		require.Equal(t, domain.StatusDraft, stored.Status)
		require.True(t, stored.CreatedAt.Equal(at(0)))

		hist, err := b.svc.Tasks.StateHistory(as(b.owner), task.ID)
		require.NoError(t, err)
		require.Len(t, hist, 1)
		require.Nil(t, hist[0].FromStatus)
		require.Equal(t, domain.StatusDraft, hist[0].ToStatus)
		require.Equal(t, b.owner.UserID, mustUserID(t, *hist[0].ChangedBy))
	})
}

func mustUserID(t *testing.T, gid string) string {
	t.Helper()
	id, err := domain.DecodeID(domain.KindUser, gid, "changedBy")
	require.NoError(t, err)
	return id
}

func TestCreateTaskStatuses(t *testing.T) {
	run(t, func(t *testing.T, b *bundle) {
		list, err := b.svc.Lists.CreateTaskList(as(b.owner), domain.CreateTaskListInput{ProjectID: b.project.GlobalID(), Name: "Sprint"})
		require.NoError(t, err)
		require.Equal(t, 3, list.MaxParallelAgents, "default maxParallelAgents")
		require.Equal(t, domain.ListDraft, list.Status)

		inList := b.createTask("listed", func(in *domain.CreateTaskInput) { in.TaskListID = ptr(list.GlobalID()) })
		require.Equal(t, domain.StatusPending, inList.Status)
		require.Equal(t, list.ID, *inList.TaskListID)
		require.False(t, inList.InEvaluationQueue())
		item, err := b.svc.Lists.ItemOfTask(as(b.owner), inList.ID)
		require.NoError(t, err)
		require.Equal(t, 1, item.Position)
		require.Equal(t, domain.ItemPending, item.ItemStatus)

		queued := b.createTask("queued", func(in *domain.CreateTaskInput) { in.InEvaluationQueue = ptr(true) })
		require.Equal(t, domain.StatusEvaluating, queued.Status)
		require.True(t, queued.InEvaluationQueue())
		require.Nil(t, queued.TaskListID)

		notQueued := b.createTask("explicitly not queued", func(in *domain.CreateTaskInput) { in.InEvaluationQueue = ptr(false) })
		require.Equal(t, domain.StatusDraft, notQueued.Status)
		require.False(t, notQueued.InEvaluationQueue())

		_, err = b.svc.Tasks.CreateTask(as(b.owner), domain.CreateTaskInput{ProjectID: b.project.GlobalID(), Title: "both",
			TaskListID: ptr(list.GlobalID()), InEvaluationQueue: ptr(true)})
		requireCode(t, err, domain.CodeBadUserInput, "inEvaluationQueue")

		got, err := b.svc.Lists.TaskList(as(b.owner), list.GlobalID())
		require.NoError(t, err)
		require.Equal(t, 1, got.TotalTasks)

		queue, err := b.svc.Tasks.EvaluationQueue(as(b.owner), b.project.ID, domain.PageArgs{})
		require.NoError(t, err)
		require.Len(t, queue.Items, 1)
		require.Equal(t, queued.ID, queue.Items[0].ID)
	})
}

func TestCreateTaskFields(t *testing.T) {
	run(t, func(t *testing.T, b *bundle) {
		deadline := start.Add(24 * time.Hour).In(time.FixedZone("CEST", 2*3600))
		task := b.createTask("full", func(in *domain.CreateTaskInput) {
			in.Description = ptr("details")
			in.Category, in.Priority = ptr(domain.CategoryBug), ptr(domain.PriorityP1)
			in.Effort, in.RiskLevel = ptr(domain.EffortTrivial), ptr(domain.RiskHigh)
			in.Owner, in.Phase = ptr(domain.OwnerHuman), ptr(domain.PhaseAPI)
			in.Deadline = &deadline
			in.AcceptanceCriteria = []string{" works "}
			in.CodebaseTests, in.APITests, in.UITests = []string{"unit"}, []string{"api"}, []string{"ui"}
			in.AffectedFiles = []string{"a.go"}
			in.FileImpacts = []*domain.FileImpactInput{{FilePath: "a.go", Operation: domain.OpUpdate},
				{FilePath: "b.go", Operation: domain.OpCreate, Confidence: ptr(0.4), Source: ptr(domain.SourceAIEstimate)}}
		})
		require.Equal(t, "TU-WEBAPP-BUG-001", task.DisplayID)
		require.Equal(t, domain.Strings{"works"}, task.AcceptanceCriteria)
		require.True(t, task.IsQuickWin)
		require.Equal(t, 100+15+25, task.PriorityScore, "P1 + quick win + due within 2 days")
		require.Equal(t, time.UTC, task.Deadline.Location())
		require.True(t, task.Deadline.Equal(deadline.Truncate(time.Microsecond)), "deadlines are stored at microseconds")

		stored := b.reload(task)
		require.True(t, stored.Deadline.Equal(deadline.Truncate(time.Microsecond)))
		require.Equal(t, domain.Strings{"unit"}, stored.CodebaseTests)
		require.Equal(t, 140, stored.PriorityScore)

		impacts, err := b.svc.Tasks.FileImpacts(as(b.owner), task.ID)
		require.NoError(t, err)
		require.Len(t, impacts, 2)
		require.Equal(t, "a.go", impacts[0].FilePath)
		require.Equal(t, 1.0, impacts[0].Confidence)
		require.Equal(t, domain.SourceUserDeclared, impacts[0].Source)
		require.Equal(t, 0.4, impacts[1].Confidence)

		bad := []struct {
			name  string
			edit  func(*domain.CreateTaskInput)
			field string
		}{
			{"empty title", func(in *domain.CreateTaskInput) { in.Title = "   " }, "title"},
			{"unknown category", func(in *domain.CreateTaskInput) { in.Category = ptr(domain.TaskCategory("CHORE")) }, "category"},
			{"empty criterion", func(in *domain.CreateTaskInput) { in.AcceptanceCriteria = []string{""} }, "acceptanceCriteria"},
			{"confidence above 1", func(in *domain.CreateTaskInput) {
				in.FileImpacts = []*domain.FileImpactInput{{FilePath: "x", Operation: domain.OpRead, Confidence: ptr(1.5)}}
			}, "fileImpacts.confidence"},
			{"impact twice", func(in *domain.CreateTaskInput) {
				in.FileImpacts = []*domain.FileImpactInput{{FilePath: "x", Operation: domain.OpRead}, {FilePath: "x", Operation: domain.OpRead}}
			}, "fileImpacts"},
			{"malformed list id", func(in *domain.CreateTaskInput) { in.TaskListID = ptr("nope") }, "taskListId"},
		}
		for _, tc := range bad {
			t.Run(tc.name, func(t *testing.T) {
				in := domain.CreateTaskInput{ProjectID: b.project.GlobalID(), Title: "x"}
				tc.edit(&in)
				_, err := b.svc.Tasks.CreateTask(as(b.owner), in)
				requireCode(t, err, domain.CodeBadUserInput, tc.field)
			})
		}
		// nothing of the refused creates was written, and their numbers were not used up
		next := b.createTask("after refusals")
		require.Equal(t, "TU-WEBAPP-TSK-001", next.DisplayID)
	})
}

func TestDisplayIDs(t *testing.T) {
	run(t, func(t *testing.T, b *bundle) {
		cat := func(c domain.TaskCategory) func(*domain.CreateTaskInput) {
			return func(in *domain.CreateTaskInput) { in.Category = &c }
		}
		require.Equal(t, "TU-WEBAPP-FEA-001", b.createTask("a", cat(domain.CategoryFeature)).DisplayID)
		require.Equal(t, "TU-WEBAPP-FEA-002", b.createTask("b", cat(domain.CategoryFeature)).DisplayID)
		require.Equal(t, "TU-WEBAPP-DOC-001", b.createTask("c", cat(domain.CategoryDocs)).DisplayID)
		require.Equal(t, "TU-WEBAPP-INF-001", b.createTask("d", cat(domain.CategoryInfra)).DisplayID)
		require.Equal(t, "TU-WEBAPP-FEA-003", b.createTask("e", cat(domain.CategoryFeature)).DisplayID)

		long := b.createProject(b.owner, "very-long-project-name")
		task, err := b.svc.Tasks.CreateTask(as(b.owner), domain.CreateTaskInput{ProjectID: long.GlobalID(), Title: "x", Category: ptr(domain.CategoryResearch)})
		require.NoError(t, err)
		require.Equal(t, "TU-VERYLONG-RES-001", task.DisplayID)

		// a category change keeps the display id: numbers are never reused or moved
		changed, err := b.svc.Tasks.UpdateTask(as(b.owner), domain.UpdateTaskInput{ID: task.GlobalID(), Category: ptr(domain.CategoryBug)})
		require.NoError(t, err)
		require.Equal(t, domain.CategoryBug, changed.Category)
		require.Equal(t, "TU-VERYLONG-RES-001", changed.DisplayID)

		byDisplay, err := b.svc.Tasks.Task(as(b.owner), nil, ptr("TU-WEBAPP-FEA-002"))
		require.NoError(t, err)
		require.Equal(t, "b", byDisplay.Title)
		missing, err := b.svc.Tasks.Task(as(b.owner), nil, ptr("TU-WEBAPP-FEA-999"))
		require.NoError(t, err)
		require.Nil(t, missing)
	})
}

func TestUpdateTaskVersions(t *testing.T) {
	run(t, func(t *testing.T, b *bundle) {
		task := b.createTask("v")
		b.clock.Advance(time.Hour)
		up, err := b.svc.Tasks.UpdateTask(as(b.owner), domain.UpdateTaskInput{ID: task.GlobalID(), ExpectedVersion: ptr(1),
			Title: ptr("v2"), Priority: ptr(domain.PriorityP1)})
		require.NoError(t, err)
		require.Equal(t, 2, up.Version)
		require.Equal(t, "v2", up.Title)
		require.Equal(t, 100, up.PriorityScore, "the score follows the priority")
		require.Equal(t, at(time.Hour), up.UpdatedAt)
		require.True(t, at(0).Equal(up.CreatedAt))

		// without expectedVersion the update applies and still raises the version
		up, err = b.svc.Tasks.UpdateTask(as(b.owner), domain.UpdateTaskInput{ID: task.GlobalID(), Description: ptr("d")})
		require.NoError(t, err)
		require.Equal(t, 3, up.Version)
		// an update that changes nothing is still an update
		up, err = b.svc.Tasks.UpdateTask(as(b.owner), domain.UpdateTaskInput{ID: task.GlobalID(), ExpectedVersion: ptr(3)})
		require.NoError(t, err)
		require.Equal(t, 4, up.Version)

		_, err = b.svc.Tasks.UpdateTask(as(b.owner), domain.UpdateTaskInput{ID: task.GlobalID(), ExpectedVersion: ptr(2), Title: ptr("lost")})
		e := requireCode(t, err, domain.CodeVersionConflict, "expectedVersion")
		require.Equal(t, 4, e.Details["currentVersion"])
		stored := b.reload(task)
		require.Equal(t, "v2", stored.Title, "a stale update changes nothing")
		require.Equal(t, 4, stored.Version)

		_, err = b.svc.Tasks.UpdateTask(as(b.owner), domain.UpdateTaskInput{ID: task.GlobalID(), Title: ptr(" ")})
		requireCode(t, err, domain.CodeBadUserInput, "title")
		_, err = b.svc.Tasks.UpdateTask(as(b.owner), domain.UpdateTaskInput{ID: task.GlobalID(), ActualEffortMinutes: ptr(-1)})
		requireCode(t, err, domain.CodeBadUserInput, "actualEffortMinutes")
		require.Equal(t, 4, b.reload(task).Version)

		up, err = b.svc.Tasks.UpdateTask(as(b.owner), domain.UpdateTaskInput{ID: task.GlobalID(), Embedding: []float64{0.25, -0.5}, EmbeddingModel: ptr("m")})
		require.NoError(t, err)
		require.Equal(t, []float64{0.25, -0.5}, b.reload(up).EmbeddingVector())
	})
}

func TestConcurrentUpdatesWithExpectedVersion(t *testing.T) {
	run(t, func(t *testing.T, b *bundle) {
		task := b.createTask("cas")
		const workers = 8
		errs := make(chan error, workers)
		for i := range workers {
			go func() {
				_, err := b.svc.Tasks.UpdateTask(as(b.owner), domain.UpdateTaskInput{ID: task.GlobalID(), ExpectedVersion: ptr(1),
					Title: ptr("writer " + string(rune('a'+i)))})
				errs <- err
			}()
		}
		ok := 0
		for range workers {
			if err := <-errs; err == nil {
				ok++
			} else {
				e := requireCode(t, err, domain.CodeVersionConflict)
				require.Equal(t, 2, e.Details["currentVersion"])
			}
		}
		require.Equal(t, 1, ok, "exactly one compare-and-swap wins")
		require.Equal(t, 2, b.reload(task).Version)
	})
}

func TestTransitionTaskHistory(t *testing.T) {
	run(t, func(t *testing.T, b *bundle) {
		task := b.createTask("lifecycle")
		steps := []domain.TaskStatus{domain.StatusEvaluating, domain.StatusPending, domain.StatusInProgress,
			domain.StatusBlocked, domain.StatusPending, domain.StatusInProgress, domain.StatusValidating, domain.StatusCompleted}
		from := domain.StatusDraft
		version := 1
		for i, to := range steps {
			b.clock.Advance(time.Minute)
			got, change, err := b.svc.Tasks.TransitionTask(as(b.owner), domain.TransitionTaskInput{ID: task.GlobalID(), To: to, Reason: ptr("step")})
			require.NoError(t, err, "%s -> %s", from, to)
			version++
			require.Equal(t, to, got.Status)
			require.Equal(t, version, got.Version, "a transition is an update")
			require.Equal(t, from, *change.FromStatus)
			require.Equal(t, to, change.ToStatus)
			require.Equal(t, "step", *change.Reason)
			require.Equal(t, at(time.Duration(i+1)*time.Minute), change.ChangedAt)
			require.Equal(t, b.owner.UserID, mustUserID(t, *change.ChangedBy))
			switch to {
			case domain.StatusEvaluating:
				require.True(t, got.InEvaluationQueue(), "EVALUATING puts the task in the queue")
			case domain.StatusPending:
				require.False(t, got.InEvaluationQueue())
			}
			from = to
		}
		final := b.reload(task)
		require.Equal(t, domain.StatusCompleted, final.Status)
		require.Equal(t, at(3*time.Minute), final.StartedAt.UTC(), "started at the first IN_PROGRESS")
		require.Equal(t, at(8*time.Minute), final.CompletedAt.UTC())

		hist, err := b.svc.Tasks.StateHistory(as(b.owner), task.ID)
		require.NoError(t, err)
		require.Len(t, hist, len(steps)+1)
		require.Nil(t, hist[0].FromStatus)
		for i, to := range steps {
			require.Equal(t, to, hist[i+1].ToStatus)
			require.Equal(t, hist[i].ToStatus, *hist[i+1].FromStatus)
		}

		_, _, err = b.svc.Tasks.TransitionTask(as(b.owner), domain.TransitionTaskInput{ID: task.GlobalID(), To: domain.StatusPending})
		e := requireCode(t, err, domain.CodeInvalidTransition, "to")
		require.Equal(t, "COMPLETED", e.Details["from"])
		require.Equal(t, "PENDING", e.Details["to"])

		other := b.transition(b.transition(b.createTask("engine only"), domain.StatusPending), domain.StatusInProgress)
		for _, to := range []domain.TaskStatus{domain.StatusFailed, domain.StatusPending, domain.StatusDraft, domain.StatusCompleted} {
			_, _, err = b.svc.Tasks.TransitionTask(as(b.owner), domain.TransitionTaskInput{ID: other.GlobalID(), To: to})
			requireCode(t, err, domain.CodeInvalidTransition)
		}
		hist, err = b.svc.Tasks.StateHistory(as(b.owner), other.ID)
		require.NoError(t, err)
		require.Len(t, hist, 3, "refused transitions leave no history")
		require.Equal(t, domain.StatusInProgress, b.reload(other).Status)
	})
}

func TestTransitionInListMirrorsItem(t *testing.T) {
	run(t, func(t *testing.T, b *bundle) {
		list, err := b.svc.Lists.CreateTaskList(as(b.owner), domain.CreateTaskListInput{ProjectID: b.project.GlobalID(), Name: "L"})
		require.NoError(t, err)
		task := b.createTask("in list", func(in *domain.CreateTaskInput) { in.TaskListID = ptr(list.GlobalID()) })
		_, _, err = b.svc.Tasks.TransitionTask(as(b.owner), domain.TransitionTaskInput{ID: task.GlobalID(), To: domain.StatusEvaluating})
		requireCode(t, err, domain.CodeInvalidTransition)

		for _, to := range []domain.TaskStatus{domain.StatusInProgress, domain.StatusValidating, domain.StatusCompleted} {
			b.transition(task, to)
		}
		item, err := b.svc.Lists.ItemOfTask(as(b.owner), task.ID)
		require.NoError(t, err)
		require.Equal(t, domain.ItemCompleted, item.ItemStatus)
		require.NotNil(t, item.StartedAt)
		require.NotNil(t, item.CompletedAt)
		got, err := b.svc.Lists.TaskList(as(b.owner), list.GlobalID())
		require.NoError(t, err)
		require.Equal(t, 1, got.TotalTasks)
		require.Equal(t, 1, got.CompletedTasks)
	})
}

func TestAddTasksToList(t *testing.T) {
	run(t, func(t *testing.T, b *bundle) {
		draft := b.createTask("draft")
		queued := b.createTask("queued", func(in *domain.CreateTaskInput) { in.InEvaluationQueue = ptr(true) })
		blocked := b.transition(b.transition(b.createTask("blocked"), domain.StatusPending), domain.StatusBlocked)
		done := b.createTask("done")
		for _, to := range []domain.TaskStatus{domain.StatusPending, domain.StatusInProgress, domain.StatusValidating, domain.StatusCompleted} {
			done = b.transition(done, to)
		}
		first, err := b.svc.Lists.CreateTaskList(as(b.owner), domain.CreateTaskListInput{ProjectID: b.project.GlobalID(), Name: "first"})
		require.NoError(t, err)
		elsewhere := b.createTask("in first list", func(in *domain.CreateTaskInput) { in.TaskListID = ptr(first.GlobalID()) })

		list, err := b.svc.Lists.CreateTaskList(as(b.owner), domain.CreateTaskListInput{ProjectID: b.project.GlobalID(), Name: "second",
			MaxParallelAgents: ptr(2), TaskIDs: []string{draft.GlobalID()}})
		require.NoError(t, err)
		require.Equal(t, 1, list.TotalTasks)
		require.Equal(t, 2, list.MaxParallelAgents)

		got, items, err := b.svc.Lists.AddTasksToList(as(b.owner), domain.AddTasksToListInput{TaskListID: list.GlobalID(),
			TaskIDs: []string{queued.GlobalID(), blocked.GlobalID(), done.GlobalID(), elsewhere.GlobalID(), draft.GlobalID()}})
		require.NoError(t, err)
		require.Equal(t, 5, got.TotalTasks)
		require.Equal(t, 1, got.CompletedTasks)
		require.Zero(t, got.FailedTasks)
		require.Len(t, items, 5)
		positions := map[string]int{}
		for _, it := range items {
			require.Equal(t, list.ID, it.TaskListID)
			positions[it.TaskID] = it.Position
		}
		require.Equal(t, map[string]int{draft.ID: 1, queued.ID: 2, blocked.ID: 3, done.ID: 4, elsewhere.ID: 5}, positions,
			"new tasks go to the end in order; tasks already in the list stay put")

		want := map[string]domain.TaskStatus{draft.ID: domain.StatusPending, queued.ID: domain.StatusPending,
			blocked.ID: domain.StatusBlocked, done.ID: domain.StatusCompleted, elsewhere.ID: domain.StatusPending}
		for id, st := range want {
			task := b.reload(&domain.Task{ID: id})
			require.Equal(t, st, task.Status, task.Title)
			require.Equal(t, list.ID, *task.TaskListID, task.Title)
			require.False(t, task.InEvaluationQueue(), "adding to a list takes a task out of the queue")
		}
		hist, err := b.svc.Tasks.StateHistory(as(b.owner), queued.ID)
		require.NoError(t, err)
		require.Equal(t, domain.StatusEvaluating, *hist[len(hist)-1].FromStatus)
		require.Equal(t, domain.StatusPending, hist[len(hist)-1].ToStatus)

		old, err := b.svc.Lists.TaskList(as(b.owner), first.GlobalID())
		require.NoError(t, err)
		require.Zero(t, old.TotalTasks, "the old list is recounted")
		oldItems, err := b.svc.Lists.ItemsOfList(as(b.owner), first.ID, domain.PageArgs{})
		require.NoError(t, err)
		require.Empty(t, oldItems.Items)

		page, err := b.svc.Lists.TasksOfList(as(b.owner), list.ID, domain.PageArgs{First: ptr(2)})
		require.NoError(t, err)
		require.Equal(t, []string{draft.ID, queued.ID}, []string{page.Items[0].ID, page.Items[1].ID})
		require.True(t, page.HasNextPage)
		total, err := page.Total(context.Background())
		require.NoError(t, err)
		require.Equal(t, 5, total)

		// a queued task can't go back to the queue while in a list
		_, err = b.svc.Tasks.UpdateTask(as(b.owner), domain.UpdateTaskInput{ID: queued.GlobalID(), InEvaluationQueue: ptr(true)})
		requireCode(t, err, domain.CodeConflict, "inEvaluationQueue")

		_, _, err = b.svc.Lists.AddTasksToList(as(b.owner), domain.AddTasksToListInput{TaskListID: list.GlobalID()})
		requireCode(t, err, domain.CodeBadUserInput, "taskIds")
		_, _, err = b.svc.Lists.AddTasksToList(as(b.owner), domain.AddTasksToListInput{TaskListID: list.GlobalID(),
			TaskIDs: []string{draft.GlobalID(), draft.GlobalID()}})
		requireCode(t, err, domain.CodeBadUserInput, "taskIds")
		foreign := b.createProject(b.owner, "foreign")
		stray, err := b.svc.Tasks.CreateTask(as(b.owner), domain.CreateTaskInput{ProjectID: foreign.GlobalID(), Title: "stray"})
		require.NoError(t, err)
		_, _, err = b.svc.Lists.AddTasksToList(as(b.owner), domain.AddTasksToListInput{TaskListID: list.GlobalID(), TaskIDs: []string{stray.GlobalID()}})
		requireCode(t, err, domain.CodeBadUserInput, "taskIds")
	})
}

func TestUpdateTaskMovesBetweenQueueAndList(t *testing.T) {
	run(t, func(t *testing.T, b *bundle) {
		task := b.createTask("moving")
		up, err := b.svc.Tasks.UpdateTask(as(b.owner), domain.UpdateTaskInput{ID: task.GlobalID(), InEvaluationQueue: ptr(true)})
		require.NoError(t, err)
		require.Equal(t, domain.StatusEvaluating, up.Status)
		require.True(t, up.InEvaluationQueue())

		_, err = b.svc.Tasks.UpdateTask(as(b.owner), domain.UpdateTaskInput{ID: task.GlobalID(), InEvaluationQueue: ptr(false)})
		requireCode(t, err, domain.CodeInvalidTransition)

		list, err := b.svc.Lists.CreateTaskList(as(b.owner), domain.CreateTaskListInput{ProjectID: b.project.GlobalID(), Name: "L"})
		require.NoError(t, err)
		up, err = b.svc.Tasks.UpdateTask(as(b.owner), domain.UpdateTaskInput{ID: task.GlobalID(), TaskListID: ptr(list.GlobalID())})
		require.NoError(t, err)
		require.Equal(t, domain.StatusPending, up.Status)
		require.False(t, up.InEvaluationQueue())
		require.Equal(t, list.ID, *up.TaskListID)
		stored := b.reload(task)
		require.Nil(t, stored.Queue)
		require.Equal(t, domain.StatusPending, stored.Status)
		got, err := b.svc.Lists.TaskList(as(b.owner), list.GlobalID())
		require.NoError(t, err)
		require.Equal(t, 1, got.TotalTasks)
	})
}

func TestTemplatesUsageCount(t *testing.T) {
	run(t, func(t *testing.T, b *bundle) {
		tpl, err := b.svc.Tasks.CreateTaskTemplate(as(b.owner), domain.CreateTaskTemplateInput{Name: "Bug report", Description: ptr("from template"),
			Category: domain.CategoryBug, DefaultAcceptanceCriteria: []string{"reproduced"}, DefaultCodebaseTests: []string{"regression"},
			Scope: domain.ScopeProject, ProjectID: ptr(b.project.GlobalID())})
		require.NoError(t, err)
		require.Zero(t, tpl.UsageCount)

		for i := 1; i <= 3; i++ {
			b.clock.Advance(time.Minute)
			task, got, err := b.svc.Tasks.CreateTaskFromTemplate(as(b.owner), domain.CreateTaskFromTemplateInput{TemplateID: tpl.GlobalID(),
				ProjectID: b.project.GlobalID(), Title: "crash", Priority: ptr(domain.PriorityP2)})
			require.NoError(t, err)
			require.Equal(t, i, got.UsageCount)
			require.Equal(t, at(time.Duration(i)*time.Minute), got.UpdatedAt.UTC())
			require.Equal(t, domain.CategoryBug, task.Category)
			require.Equal(t, domain.PriorityP2, task.Priority)
			require.Equal(t, "from template", task.Description)
			require.Equal(t, domain.Strings{"reproduced"}, task.AcceptanceCriteria)
			require.Equal(t, domain.Strings{"regression"}, task.CodebaseTests)
			require.Equal(t, domain.DisplayID("WEBAPP", domain.CategoryBug, i), task.DisplayID)
		}

		// a refused create does not count as a use
		_, _, err = b.svc.Tasks.CreateTaskFromTemplate(as(b.owner), domain.CreateTaskFromTemplateInput{TemplateID: tpl.GlobalID(),
			ProjectID: b.project.GlobalID(), Title: ""})
		requireCode(t, err, domain.CodeBadUserInput, "title")
		page, err := b.svc.Tasks.TaskTemplates(as(b.owner), ptr(b.project.GlobalID()), domain.PageArgs{})
		require.NoError(t, err)
		require.Len(t, page.Items, 1)
		require.Equal(t, 3, page.Items[0].UsageCount)

		// another member neither sees nor uses the project's template
		_, _, err = b.svc.Tasks.CreateTaskFromTemplate(as(b.other), domain.CreateTaskFromTemplateInput{TemplateID: tpl.GlobalID(),
			ProjectID: b.project.GlobalID(), Title: "x"})
		requireCode(t, err, domain.CodeNotFound, "templateId")
		_, err = b.svc.Tasks.CreateTaskTemplate(as(b.owner), domain.CreateTaskTemplateInput{Name: "g", Category: domain.CategoryTask, Scope: domain.ScopeGlobal})
		requireCode(t, err, domain.CodeForbidden)
		g, err := b.svc.Tasks.CreateTaskTemplate(as(b.admin), domain.CreateTaskTemplateInput{Name: "g", Category: domain.CategoryTask, Scope: domain.ScopeGlobal})
		require.NoError(t, err)
		_, used, err := b.svc.Tasks.CreateTaskFromTemplate(as(b.owner), domain.CreateTaskFromTemplateInput{TemplateID: g.GlobalID(),
			ProjectID: b.project.GlobalID(), Title: "from global"})
		require.NoError(t, err)
		require.Equal(t, 1, used.UsageCount)
	})
}

func TestRefreshDeadlineScores(t *testing.T) {
	run(t, func(t *testing.T, b *bundle) {
		deadline := start.Add(10 * 24 * time.Hour)
		task := b.createTask("due", func(in *domain.CreateTaskInput) { in.Deadline = &deadline })
		require.Equal(t, 40, task.PriorityScore)
		noDeadline := b.createTask("no deadline")
		done := b.createTask("done", func(in *domain.CreateTaskInput) { in.Deadline = &deadline })
		for _, to := range []domain.TaskStatus{domain.StatusPending, domain.StatusInProgress, domain.StatusValidating, domain.StatusCompleted} {
			done = b.transition(done, to)
		}

		steps := []struct {
			advance time.Duration
			changed int
			score   int
		}{
			{0, 0, 40},
			{2 * 24 * time.Hour, 0, 40},           // 8 days left
			{24*time.Hour + time.Minute, 1, 50},   // just under 7 days left
			{24 * time.Hour, 0, 50},               // 6 days left
			{4 * 24 * time.Hour, 1, 65},           // just under 2 days left
			{2*24*time.Hour - time.Minute, 0, 65}, // due right now: not yet overdue
			{time.Microsecond, 1, 80},             // overdue
			{30 * 24 * time.Hour, 0, 80},          // still overdue
		}
		for i, s := range steps {
			b.clock.Advance(s.advance)
			n, err := b.svc.RefreshDeadlineScores(context.Background())
			require.NoError(t, err)
			require.Equal(t, s.changed, n, "step %d", i)
			got := b.reload(task)
			require.Equal(t, s.score, got.PriorityScore, "step %d", i)
			require.Equal(t, 1, got.Version, "a derived score is no edit")
		}
		require.Equal(t, 40, b.reload(noDeadline).PriorityScore)
		require.Equal(t, 40, b.reload(done).PriorityScore, "finished tasks keep their score")
	})
}
