package main

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTaskLists covers createTaskList, addTasksToList, taskList and the
// list's nested fields, with queue-or-list exclusivity and true counters.
func TestTaskLists(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		admin := s.AdminToken
		project := s.createProject(t, admin, "lists")
		viewer := s.query(t, admin, `{ viewer { id } }`, nil).S("viewer.id")
		const listFields = `id name description status maxParallelAgents autoExecute totalTasks completedTasks failedTasks
			telegramChatId createdAt updatedAt startedAt completedAt project { id } owner { id }
			items { totalCount nodes { id position itemStatus startedAt completedAt executionNotes addedAt task { id } taskList { id } } }
			tasks { totalCount nodes { id status inEvaluationQueue taskList { id } } }`

		t.Run("createTaskList", func(t *testing.T) {
			d := s.query(t, admin, `mutation($p: ID!) { createTaskList(input: {projectId: $p, name: "Empty"}) { taskList { `+listFields+` } } }`, M{"p": project})
			l := d.at("createTaskList.taskList")
			require.Equal(t, "Empty", l.S("name"))
			require.Equal(t, "", l.S("description"))
			require.Equal(t, "DRAFT", l.S("status"))
			require.Equal(t, 3, l.N("maxParallelAgents"), "default 3")
			require.False(t, l.B("autoExecute"))
			require.Equal(t, 0, l.N("totalTasks"))
			require.Equal(t, project, l.S("project.id"))
			require.Equal(t, viewer, l.S("owner.id"))
			require.Equal(t, 0, l.N("items.totalCount"))
			require.Empty(t, l.L("tasks.nodes"))
			for _, f := range []string{"telegramChatId", "startedAt", "completedAt"} {
				require.True(t, l.Null(f), f)
			}

			draft := s.createTask(t, admin, project, "draft", nil)
			queued := s.createTask(t, admin, project, "queued", M{"inEvaluationQueue": true})
			pending := s.createTask(t, admin, project, "pending", nil)
			s.transition(t, admin, pending, "PENDING")
			d = s.query(t, admin, `mutation($in: CreateTaskListInput!) { createTaskList(input: $in) { taskList { `+listFields+` } } }`, M{"in": M{
				"projectId": project, "name": "Full", "description": "three tasks", "maxParallelAgents": 5, "autoExecute": true,
				"taskIds": []string{queued, pending, draft},
			}})
			l = d.at("createTaskList.taskList")
			require.Equal(t, "three tasks", l.S("description"))
			require.Equal(t, 5, l.N("maxParallelAgents"))
			require.True(t, l.B("autoExecute"))
			require.Equal(t, 3, l.N("totalTasks"))
			require.Equal(t, 3, l.N("items.totalCount"))
			require.Equal(t, []string{queued, pending, draft}, l.Col("items.nodes", "task.id"), "items in the order given")
			require.Equal(t, []string{queued, pending, draft}, l.Col("tasks.nodes", "id"), "tasks in list order")
			for i, it := range l.L("items.nodes") {
				require.Equal(t, i+1, it.N("position"))
				require.Equal(t, "PENDING", it.S("itemStatus"))
				require.Equal(t, l.S("id"), it.S("taskList.id"))
				require.NotEmpty(t, it.S("addedAt"))
			}
			for _, task := range l.L("tasks.nodes") {
				require.Equal(t, "PENDING", task.S("status"), "DRAFT and EVALUATING tasks become PENDING")
				require.False(t, task.B("inEvaluationQueue"), "adding to a list takes a task out of the queue")
				require.Equal(t, l.S("id"), task.S("taskList.id"))
			}
			h := s.query(t, admin, `query($id: ID!) { task(id: $id) { stateHistory { fromStatus toStatus } } }`, M{"id": queued})
			require.Equal(t, "EVALUATING", h.S("task.stateHistory.1.fromStatus"))
			require.Equal(t, "PENDING", h.S("task.stateHistory.1.toStatus"))
			q := s.query(t, admin, `query($p: ID!) { project(id: $p) { evaluationQueue { totalCount } } }`, M{"p": project})
			require.Equal(t, 0, q.N("project.evaluationQueue.totalCount"))

			// taskList(id:) and Project.taskLists.
			got := s.query(t, admin, `query($id: ID!) { taskList(id: $id) { id name } }`, M{"id": l.S("id")})
			require.Equal(t, "Full", got.S("taskList.name"))
			require.True(t, s.query(t, admin, `query($id: ID!) { taskList(id: $id) { id } }`, M{"id": missingID("TaskList")}).Null("taskList"))
			pl := s.query(t, admin, `query($p: ID!) { project(id: $p) { taskLists { totalCount nodes { name } } } }`, M{"p": project})
			require.Equal(t, 2, pl.N("project.taskLists.totalCount"))
			require.Equal(t, []string{"Empty", "Full"}, pl.Col("project.taskLists.nodes", "name"))

			// Input errors.
			for _, tc := range []struct {
				input M
				field string
			}{
				{M{"projectId": project, "name": ""}, "name"},
				{M{"projectId": project, "name": "x", "maxParallelAgents": 0}, "maxParallelAgents"},
				{M{"projectId": project, "name": "x", "taskIds": []string{draft, draft}}, "taskIds"},
				{M{"projectId": "garbage", "name": "x"}, "projectId"},
			} {
				r := s.requireCode(t, admin, `mutation($in: CreateTaskListInput!) { createTaskList(input: $in) { taskList { id } } }`, M{"in": tc.input}, "BAD_USER_INPUT")
				require.Equal(t, tc.field, r.ext("field"))
			}
			other := s.createProject(t, admin, "lists-other")
			foreign := s.createTask(t, admin, other, "foreign", nil)
			r := s.requireCode(t, admin, `mutation($in: CreateTaskListInput!) { createTaskList(input: $in) { taskList { id } } }`,
				M{"in": M{"projectId": project, "name": "x", "taskIds": []string{foreign}}}, "BAD_USER_INPUT")
			require.Equal(t, "taskIds", r.ext("field"))
		})

		t.Run("addTasksToList", func(t *testing.T) {
			list := s.createList(t, admin, project, "grow")
			a := s.createTask(t, admin, project, "a", M{"inEvaluationQueue": true})
			b := s.createTask(t, admin, project, "b", nil)
			c := s.createTask(t, admin, project, "c", M{"taskListId": list})
			add := `mutation($l: ID!, $ids: [ID!]!) { addTasksToList(input: {taskListId: $l, taskIds: $ids}) {
				taskList { id totalTasks items { nodes { position task { id } } } } items { id position itemStatus task { id status inEvaluationQueue listItem { id } } } } }`
			d := s.query(t, admin, add, M{"l": list, "ids": []string{b, a}})
			items := d.L("addTasksToList.items")
			require.Len(t, items, 2)
			require.Equal(t, b, items[0].S("task.id"))
			require.Equal(t, 2, items[0].N("position"))
			require.Equal(t, a, items[1].S("task.id"))
			require.Equal(t, 3, items[1].N("position"))
			for _, it := range items {
				require.Equal(t, "PENDING", it.S("task.status"))
				require.False(t, it.B("task.inEvaluationQueue"))
				require.Equal(t, it.S("id"), it.S("task.listItem.id"))
			}
			require.Equal(t, 3, d.N("addTasksToList.taskList.totalTasks"))
			require.Equal(t, []string{c, b, a}, d.Col("addTasksToList.taskList.items.nodes", "task.id"))

			// Adding a task that is already in the list leaves it where it is.
			d = s.query(t, admin, add, M{"l": list, "ids": []string{c}})
			require.Equal(t, 3, d.N("addTasksToList.taskList.totalTasks"))
			require.Equal(t, []string{c, b, a}, d.Col("addTasksToList.taskList.items.nodes", "task.id"))

			// Moving a task to another list takes it out of the first.
			second := s.createList(t, admin, project, "second")
			d = s.query(t, admin, add, M{"l": second, "ids": []string{b}})
			require.Equal(t, 1, d.N("addTasksToList.taskList.totalTasks"))
			first := s.query(t, admin, `query($id: ID!, $b: ID!) { taskList(id: $id) { totalTasks tasks { nodes { id } } } task(id: $b) { taskList { id } } }`, M{"id": list, "b": b})
			require.Equal(t, 2, first.N("taskList.totalTasks"))
			require.Equal(t, []string{c, a}, first.Col("taskList.tasks.nodes", "id"))
			require.Equal(t, second, first.S("task.taskList.id"))

			// A task in a list cannot join the evaluation queue.
			s.requireCode(t, admin, `mutation($id: ID!) { updateTask(input: {id: $id, inEvaluationQueue: true}) { task { id } } }`, M{"id": a}, "CONFLICT")
			s.requireCode(t, admin, `mutation($id: ID!, $l: ID!) { updateTask(input: {id: $id, taskListId: $l, inEvaluationQueue: true}) { task { id } } }`,
				M{"id": a, "l": list}, "BAD_USER_INPUT")
			// updateTask(taskListId) moves a queued task into a list, like addTasksToList.
			q := s.createTask(t, admin, project, "q", M{"inEvaluationQueue": true})
			u := s.query(t, admin, `mutation($id: ID!, $l: ID!) { updateTask(input: {id: $id, taskListId: $l}) { task { status inEvaluationQueue taskList { id totalTasks } listItem { position } } } }`,
				M{"id": q, "l": list})
			require.Equal(t, "PENDING", u.S("updateTask.task.status"))
			require.False(t, u.B("updateTask.task.inEvaluationQueue"))
			require.Equal(t, list, u.S("updateTask.task.taskList.id"))
			require.Equal(t, 3, u.N("updateTask.task.taskList.totalTasks"))
			require.Equal(t, 4, u.N("updateTask.task.listItem.position"), "positions are never reused")

			r := s.requireCode(t, admin, `mutation($l: ID!) { addTasksToList(input: {taskListId: $l, taskIds: []}) { taskList { id } } }`, M{"l": list}, "BAD_USER_INPUT")
			require.Equal(t, "taskIds", r.ext("field"))
			s.requireCode(t, admin, add, M{"l": missingID("TaskList"), "ids": []string{a}}, "NOT_FOUND")
			s.requireCode(t, admin, add, M{"l": list, "ids": []string{missingID("Task")}}, "NOT_FOUND")
		})

		t.Run("concurrent changes keep positions and counters true", func(t *testing.T) {
			const n = 16
			list := s.createList(t, admin, project, "busy")
			ids := make([]string, n)
			for i := range ids {
				ids[i] = s.createTask(t, admin, project, fmt.Sprintf("busy %d", i), nil)
			}
			// Every task added by its own request, all at once.
			concurrently(t, n, func(i int) (gqlResponse, error) {
				return s.post(admin, `mutation($l: ID!, $t: ID!) { addTasksToList(input: {taskListId: $l, taskIds: [$t]}) { taskList { id } } }`,
					M{"l": list, "t": ids[i]})
			})
			d := s.query(t, admin, `query($l: ID!) { taskList(id: $l) { totalTasks items(first: 100) { totalCount nodes { position } } } }`, M{"l": list})
			require.Equal(t, n, d.N("taskList.totalTasks"))
			require.Equal(t, n, d.N("taskList.items.totalCount"))
			var positions []int
			for _, it := range d.L("taskList.items.nodes") {
				positions = append(positions, it.N("position"))
			}
			want := make([]int, n)
			for i := range want {
				want[i] = i + 1
			}
			require.Equal(t, want, positions, "positions 1..n, none shared")
			// Every task completed by its own request, all at once.
			for _, id := range ids {
				s.transition(t, admin, id, "IN_PROGRESS")
				s.transition(t, admin, id, "VALIDATING")
			}
			concurrently(t, n, func(i int) (gqlResponse, error) {
				to := "COMPLETED"
				if i%4 == 0 {
					to = "FAILED"
				}
				return s.post(admin, `mutation($id: ID!, $to: TaskStatus!) { transitionTask(input: {id: $id, to: $to}) { task { id } } }`,
					M{"id": ids[i], "to": to})
			})
			d = s.query(t, admin, `query($l: ID!) { taskList(id: $l) { totalTasks completedTasks failedTasks } }`, M{"l": list})
			require.Equal(t, n, d.N("taskList.totalTasks"))
			require.Equal(t, n-n/4, d.N("taskList.completedTasks"))
			require.Equal(t, n/4, d.N("taskList.failedTasks"))
		})

		t.Run("counters follow the tasks", func(t *testing.T) {
			ids := []string{s.createTask(t, admin, project, "x1", nil), s.createTask(t, admin, project, "x2", nil),
				s.createTask(t, admin, project, "x3", nil), s.createTask(t, admin, project, "x4", nil)}
			list := s.createList(t, admin, project, "counted", ids...)
			for _, st := range []string{"IN_PROGRESS", "VALIDATING", "COMPLETED"} {
				s.transition(t, admin, ids[0], st)
			}
			for _, st := range []string{"IN_PROGRESS", "VALIDATING", "FAILED"} {
				s.transition(t, admin, ids[1], st)
			}
			s.transition(t, admin, ids[2], "IN_PROGRESS")
			d := s.query(t, admin, `query($id: ID!) { taskList(id: $id) { totalTasks completedTasks failedTasks
				items { nodes { itemStatus startedAt completedAt task { status } } } } }`, M{"id": list})
			require.Equal(t, 4, d.N("taskList.totalTasks"))
			require.Equal(t, 1, d.N("taskList.completedTasks"))
			require.Equal(t, 1, d.N("taskList.failedTasks"))
			items := d.L("taskList.items.nodes")
			require.Equal(t, "COMPLETED", items[0].S("itemStatus"))
			require.False(t, items[0].Null("startedAt"))
			require.False(t, items[0].Null("completedAt"))
			require.Equal(t, "FAILED", items[1].S("itemStatus"))
			require.Equal(t, "IN_PROGRESS", items[2].S("itemStatus"))
			require.True(t, items[2].Null("completedAt"))
			require.Equal(t, "PENDING", items[3].S("itemStatus"))
			// A failed task retried: the counter drops.
			s.transition(t, admin, ids[1], "PENDING")
			d = s.query(t, admin, `query($id: ID!) { taskList(id: $id) { completedTasks failedTasks } }`, M{"id": list})
			require.Equal(t, 0, d.N("taskList.failedTasks"))
			require.Equal(t, 1, d.N("taskList.completedTasks"))
			// filter by list, and the list's tasks page.
			f := s.query(t, admin, `query($l: ID!) { tasks(filter: {taskListId: $l}) { totalCount nodes { id } } }`, M{"l": list})
			require.Equal(t, 4, f.N("tasks.totalCount"))
			require.ElementsMatch(t, ids, f.Col("tasks.nodes", "id"))
			p := s.query(t, admin, `query($id: ID!) { taskList(id: $id) { tasks(first: 2) { totalCount pageInfo { hasNextPage endCursor } nodes { id } } } }`, M{"id": list})
			require.Equal(t, ids[:2], p.Col("taskList.tasks.nodes", "id"))
			require.True(t, p.B("taskList.tasks.pageInfo.hasNextPage"))
			require.Equal(t, 4, p.N("taskList.tasks.totalCount"))
			p = s.query(t, admin, `query($id: ID!, $after: String!) { taskList(id: $id) { tasks(first: 2, after: $after) { pageInfo { hasNextPage } nodes { id } } } }`,
				M{"id": list, "after": p.S("taskList.tasks.pageInfo.endCursor")})
			require.Equal(t, ids[2:], p.Col("taskList.tasks.nodes", "id"))
			require.False(t, p.B("taskList.tasks.pageInfo.hasNextPage"))
		})
	})
}

// TestTemplates covers createTaskTemplate in its three scopes,
// createTaskFromTemplate and the template queries.
func TestTemplates(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		admin := s.AdminToken
		memberID, member := s.member(t, "tpl-member")
		project := s.createProject(t, member, "tpl")
		other := s.createProject(t, member, "tpl-other")
		const create = `mutation($in: CreateTaskTemplateInput!) { createTaskTemplate(input: $in) { taskTemplate {
			id name description category defaultAcceptanceCriteria defaultCodebaseTests defaultApiTests defaultUiTests
			defaultAffectedFiles scope scopeProject { id } scopeUser { id } usageCount createdBy { id } createdAt updatedAt } } }`

		global := s.query(t, admin, create, M{"in": M{"name": "Bug fix", "description": "Fix a bug", "category": "BUG", "scope": "GLOBAL",
			"defaultAcceptanceCriteria": []string{"bug gone"}, "defaultCodebaseTests": []string{"regression test"},
			"defaultApiTests": []string{"api"}, "defaultUiTests": []string{"ui"}, "defaultAffectedFiles": []string{"main.go"}}}).at("createTaskTemplate.taskTemplate")
		require.Equal(t, "GLOBAL", global.S("scope"))
		require.True(t, global.Null("scopeProject"))
		require.True(t, global.Null("scopeUser"))
		require.Equal(t, 0, global.N("usageCount"))
		require.Equal(t, []string{"bug gone"}, global.Strs("defaultAcceptanceCriteria"))
		require.Equal(t, []string{"main.go"}, global.Strs("defaultAffectedFiles"))

		proj := s.query(t, member, create, M{"in": M{"name": "Docs", "category": "DOCS", "scope": "PROJECT", "projectId": project}}).at("createTaskTemplate.taskTemplate")
		require.Equal(t, "PROJECT", proj.S("scope"))
		require.Equal(t, project, proj.S("scopeProject.id"))
		require.Equal(t, memberID, proj.S("createdBy.id"))
		user := s.query(t, member, create, M{"in": M{"name": "Mine", "category": "RESEARCH", "scope": "USER"}}).at("createTaskTemplate.taskTemplate")
		require.Equal(t, "USER", user.S("scope"))
		require.Equal(t, memberID, user.S("scopeUser.id"), "USER scope defaults to the caller")

		t.Run("scope rules", func(t *testing.T) {
			s.requireCode(t, member, create, M{"in": M{"name": "x", "category": "BUG", "scope": "GLOBAL"}}, "FORBIDDEN")
			r := s.requireCode(t, member, create, M{"in": M{"name": "x", "category": "BUG", "scope": "PROJECT"}}, "BAD_USER_INPUT")
			require.Equal(t, "projectId", r.ext("field"))
			r = s.requireCode(t, admin, create, M{"in": M{"name": "x", "category": "BUG", "scope": "GLOBAL", "projectId": project}}, "BAD_USER_INPUT")
			require.Equal(t, "scope", r.ext("field"))
			adminID := s.query(t, admin, `{ viewer { id } }`, nil).S("viewer.id")
			s.requireCode(t, member, create, M{"in": M{"name": "x", "category": "BUG", "scope": "USER", "userId": adminID}}, "FORBIDDEN")
			d := s.query(t, admin, create, M{"in": M{"name": "For the member", "category": "TEST", "scope": "USER", "userId": memberID}})
			require.Equal(t, memberID, d.S("createTaskTemplate.taskTemplate.scopeUser.id"))
			r = s.requireCode(t, member, create, M{"in": M{"name": "", "category": "BUG", "scope": "USER"}}, "BAD_USER_INPUT")
			require.Equal(t, "name", r.ext("field"))
		})

		t.Run("createTaskFromTemplate", func(t *testing.T) {
			const fromTpl = `mutation($in: CreateTaskFromTemplateInput!) { createTaskFromTemplate(input: $in) {
				task { id displayId title description category priority effort riskLevel status acceptanceCriteria codebaseTests apiTests uiTests affectedFiles inEvaluationQueue taskList { id } }
				taskTemplate { id usageCount } } }`
			d := s.query(t, member, fromTpl, M{"in": M{"templateId": global.S("id"), "projectId": project, "title": "Crash on start"}})
			task := d.at("createTaskFromTemplate.task")
			require.Equal(t, "Crash on start", task.S("title"))
			require.Equal(t, "Fix a bug", task.S("description"), "the template's description by default")
			require.Equal(t, "BUG", task.S("category"))
			require.Equal(t, "TU-TPL-BUG-001", task.S("displayId"))
			require.Equal(t, "P3", task.S("priority"))
			require.Equal(t, "MEDIUM", task.S("riskLevel"))
			require.Equal(t, "DRAFT", task.S("status"))
			require.Equal(t, []string{"bug gone"}, task.Strs("acceptanceCriteria"))
			require.Equal(t, []string{"regression test"}, task.Strs("codebaseTests"))
			require.Equal(t, []string{"api"}, task.Strs("apiTests"))
			require.Equal(t, []string{"ui"}, task.Strs("uiTests"))
			require.Equal(t, []string{"main.go"}, task.Strs("affectedFiles"))
			require.Equal(t, 1, d.N("createTaskFromTemplate.taskTemplate.usageCount"))

			list := s.createList(t, member, project, "from templates")
			d = s.query(t, member, fromTpl, M{"in": M{"templateId": global.S("id"), "projectId": project, "title": "Second", "description": "own text",
				"priority": "P1", "effort": "TRIVIAL", "riskLevel": "HIGH", "taskListId": list}})
			task = d.at("createTaskFromTemplate.task")
			require.Equal(t, "own text", task.S("description"))
			require.Equal(t, "P1", task.S("priority"))
			require.Equal(t, "TRIVIAL", task.S("effort"))
			require.Equal(t, "HIGH", task.S("riskLevel"))
			require.Equal(t, "PENDING", task.S("status"))
			require.Equal(t, list, task.S("taskList.id"))
			require.Equal(t, 2, d.N("createTaskFromTemplate.taskTemplate.usageCount"))

			d = s.query(t, member, fromTpl, M{"in": M{"templateId": user.S("id"), "projectId": project, "title": "Queued", "inEvaluationQueue": true}})
			require.Equal(t, "EVALUATING", d.S("createTaskFromTemplate.task.status"))
			require.Equal(t, "RESEARCH", d.S("createTaskFromTemplate.task.category"))
			require.Equal(t, 1, d.N("createTaskFromTemplate.taskTemplate.usageCount"))

			// A PROJECT template is for its project only.
			r := s.requireCode(t, member, fromTpl, M{"in": M{"templateId": proj.S("id"), "projectId": other, "title": "x"}}, "BAD_USER_INPUT")
			require.Equal(t, "templateId", r.ext("field"))
			d = s.query(t, member, fromTpl, M{"in": M{"templateId": proj.S("id"), "projectId": project, "title": "docs"}})
			require.Equal(t, "DOCS", d.S("createTaskFromTemplate.task.category"))
			r = s.requireCode(t, member, fromTpl, M{"in": M{"templateId": missingID("TaskTemplate"), "projectId": project, "title": "x"}}, "NOT_FOUND")
			require.Equal(t, "templateId", r.ext("field"))
			r = s.requireCode(t, member, fromTpl, M{"in": M{"templateId": global.S("id"), "projectId": project, "title": ""}}, "BAD_USER_INPUT")
			require.Equal(t, "title", r.ext("field"))
		})

		t.Run("queries", func(t *testing.T) {
			d := s.query(t, member, `query($p: ID!) { taskTemplates(projectId: $p) { totalCount nodes { id name } }
				project(id: $p) { taskTemplates { totalCount nodes { id } } } }`, M{"p": project})
			// GLOBAL, this project's, the member's own two.
			want := []string{"Bug fix", "Docs", "Mine", "For the member"}
			require.ElementsMatch(t, want, d.Col("taskTemplates.nodes", "name"))
			require.Equal(t, 4, d.N("taskTemplates.totalCount"))
			require.Equal(t, 4, d.N("project.taskTemplates.totalCount"))
			d = s.query(t, member, `query($p: ID!) { taskTemplates(projectId: $p) { nodes { name } } }`, M{"p": other})
			require.ElementsMatch(t, []string{"Bug fix", "Mine", "For the member"}, d.Col("taskTemplates.nodes", "name"))
			d = s.query(t, member, `{ taskTemplates { nodes { name } } }`, nil)
			require.ElementsMatch(t, want, d.Col("taskTemplates.nodes", "name"))
			// Another member sees the GLOBAL template only.
			_, stranger := s.member(t, "tpl-stranger")
			d = s.query(t, stranger, `{ taskTemplates { totalCount nodes { name } } }`, nil)
			require.Equal(t, []string{"Bug fix"}, d.Col("taskTemplates.nodes", "name"))
			require.True(t, s.query(t, stranger, `query($id: ID!) { node(id: $id) { id } }`, M{"id": proj.S("id")}).Null("node"))
			require.True(t, s.query(t, stranger, `query($id: ID!) { node(id: $id) { id } }`, M{"id": user.S("id")}).Null("node"))
			s.requireCode(t, stranger, `mutation($t: ID!, $p: ID!) { createTaskFromTemplate(input: {templateId: $t, projectId: $p, title: "x"}) { task { id } } }`,
				M{"t": user.S("id"), "p": project}, "NOT_FOUND")
			s.requireCode(t, stranger, `query($p: ID!) { taskTemplates(projectId: $p) { totalCount } }`, M{"p": project}, "NOT_FOUND")
			// Paging.
			p := s.query(t, member, `{ taskTemplates(first: 3) { pageInfo { hasNextPage endCursor } nodes { id } } }`, nil)
			require.Len(t, p.L("taskTemplates.nodes"), 3)
			require.True(t, p.B("taskTemplates.pageInfo.hasNextPage"))
			p2 := s.query(t, member, `query($a: String!) { taskTemplates(first: 3, after: $a) { pageInfo { hasNextPage } nodes { id } } }`,
				M{"a": p.S("taskTemplates.pageInfo.endCursor")})
			require.Len(t, p2.L("taskTemplates.nodes"), 1)
			require.False(t, p2.B("taskTemplates.pageInfo.hasNextPage"))
			require.NotContains(t, p.Col("taskTemplates.nodes", "id"), p2.S("taskTemplates.nodes.0.id"))
		})
	})
}
