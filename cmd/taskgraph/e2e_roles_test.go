package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// roleFixture is one member's project with one of everything in it.
type roleFixture struct {
	project, slug, task, task2, displayID, list, item, idea, rel, change, block, impact, projTpl, userTpl, token string
}

func newRoleFixture(t *testing.T, s *testServer, token, slug string) roleFixture {
	t.Helper()
	f := roleFixture{slug: slug}
	f.project = s.createProject(t, token, slug)
	f.idea = s.query(t, token, `mutation($p: ID!) { createIdea(input: {projectId: $p, name: "i", slug: "i"}) { idea { id } } }`, M{"p": f.project}).S("createIdea.idea.id")
	f.list = s.createList(t, token, f.project, "l")
	d := s.query(t, token, `mutation($p: ID!, $l: ID!) { createTask(input: {projectId: $p, title: "t", taskListId: $l,
		fileImpacts: [{filePath: "x.go", operation: UPDATE}]}) { task { id displayId listItem { id } fileImpacts { id } stateHistory { id } } } }`,
		M{"p": f.project, "l": f.list})
	f.task, f.displayID = d.S("createTask.task.id"), d.S("createTask.task.displayId")
	f.item, f.impact, f.change = d.S("createTask.task.listItem.id"), d.S("createTask.task.fileImpacts.0.id"), d.S("createTask.task.stateHistory.0.id")
	f.task2 = s.createTask(t, token, f.project, "t2", nil)
	f.rel = s.link(t, token, f.task, f.task2, "RELATED_TO")
	f.block = s.query(t, token, `mutation($id: ID!) { createTaskBlock(input: {taskId: $id, blockType: MANUAL, reason: "r"}) { block { id } } }`,
		M{"id": f.task2}).S("createTaskBlock.block.id")
	f.projTpl = s.query(t, token, `mutation($p: ID!) { createTaskTemplate(input: {name: "p", category: TASK, scope: PROJECT, projectId: $p}) { taskTemplate { id } } }`,
		M{"p": f.project}).S("createTaskTemplate.taskTemplate.id")
	f.userTpl = s.query(t, token, `mutation { createTaskTemplate(input: {name: "u", category: TASK, scope: USER}) { taskTemplate { id } } }`, nil).
		S("createTaskTemplate.taskTemplate.id")
	f.token = s.query(t, token, `{ viewer { apiTokens { id } } }`, nil).S("viewer.apiTokens.0.id")
	return f
}

// ids lists every entity of the fixture by global id.
func (f roleFixture) ids() map[string]string {
	return map[string]string{"Project": f.project, "Task": f.task, "TaskList": f.list, "TaskListItem": f.item, "Idea": f.idea,
		"TaskRelationship": f.rel, "TaskStateChange": f.change, "TaskBlock": f.block, "TaskFileImpact": f.impact,
		"TaskTemplate(PROJECT)": f.projTpl, "TaskTemplate(USER)": f.userTpl, "ApiToken": f.token}
}

// mutationCase is a mutation aimed at an entity, with the variables that name it.
type mutationCase struct {
	name  string
	query string
	vars  func(f roleFixture, own roleFixture) M
}

// targetedMutations are every mutation of the schema aimed at fixture f; own is
// the caller's fixture, for mutations that need an entity of each.
var targetedMutations = []mutationCase{
	{"updateProject", `mutation($id: ID!) { updateProject(input: {id: $id, name: "x"}) { project { id } } }`,
		func(f, _ roleFixture) M { return M{"id": f.project} }},
	{"createIdea", `mutation($p: ID!) { createIdea(input: {projectId: $p, name: "x", slug: "x"}) { idea { id } } }`,
		func(f, _ roleFixture) M { return M{"p": f.project} }},
	{"createTask", `mutation($p: ID!) { createTask(input: {projectId: $p, title: "x"}) { task { id } } }`,
		func(f, _ roleFixture) M { return M{"p": f.project} }},
	{"updateTask", `mutation($id: ID!) { updateTask(input: {id: $id, title: "x"}) { task { id } } }`,
		func(f, _ roleFixture) M { return M{"id": f.task} }},
	{"updateTask expectedVersion", `mutation($id: ID!) { updateTask(input: {id: $id, expectedVersion: 1, title: "x"}) { task { id } } }`,
		func(f, _ roleFixture) M { return M{"id": f.task} }},
	{"transitionTask", `mutation($id: ID!) { transitionTask(input: {id: $id, to: IN_PROGRESS}) { task { id } } }`,
		func(f, _ roleFixture) M { return M{"id": f.task} }},
	{"addTaskRelationship", `mutation($s: ID!, $t: ID!) { addTaskRelationship(input: {sourceTaskId: $s, targetTaskId: $t, type: DEPENDS_ON}) { relationship { id } } }`,
		func(f, _ roleFixture) M { return M{"s": f.task, "t": f.task2} }},
	{"addTaskRelationship to it", `mutation($s: ID!, $t: ID!) { addTaskRelationship(input: {sourceTaskId: $s, targetTaskId: $t, type: DEPENDS_ON}) { relationship { id } } }`,
		func(f, own roleFixture) M { return M{"s": own.task, "t": f.task} }},
	{"removeTaskRelationship", `mutation($id: ID!) { removeTaskRelationship(input: {id: $id}) { removedRelationshipId } }`,
		func(f, _ roleFixture) M { return M{"id": f.rel} }},
	{"createTaskBlock", `mutation($id: ID!) { createTaskBlock(input: {taskId: $id, blockType: MANUAL, reason: "x"}) { block { id } } }`,
		func(f, _ roleFixture) M { return M{"id": f.task} }},
	{"resolveTaskBlock", `mutation($id: ID!) { resolveTaskBlock(input: {id: $id}) { block { id } } }`,
		func(f, _ roleFixture) M { return M{"id": f.block} }},
	{"createTaskList", `mutation($p: ID!) { createTaskList(input: {projectId: $p, name: "x"}) { taskList { id } } }`,
		func(f, _ roleFixture) M { return M{"p": f.project} }},
	{"updateTaskList", `mutation($id: ID!) { updateTaskList(input: {id: $id, schedule: EAGER}) { taskList { id } } }`,
		func(f, _ roleFixture) M { return M{"id": f.list} }},
	{"addTasksToList", `mutation($l: ID!, $t: ID!) { addTasksToList(input: {taskListId: $l, taskIds: [$t]}) { taskList { id } } }`,
		func(f, _ roleFixture) M { return M{"l": f.list, "t": f.task2} }},
	{"addTasksToList its task", `mutation($l: ID!, $t: ID!) { addTasksToList(input: {taskListId: $l, taskIds: [$t]}) { taskList { id } } }`,
		func(f, own roleFixture) M { return M{"l": own.list, "t": f.task2} }},
	{"createTaskTemplate", `mutation($p: ID!) { createTaskTemplate(input: {name: "x", category: TASK, scope: PROJECT, projectId: $p}) { taskTemplate { id } } }`,
		func(f, _ roleFixture) M { return M{"p": f.project} }},
	{"createTaskFromTemplate", `mutation($t: ID!, $p: ID!) { createTaskFromTemplate(input: {templateId: $t, projectId: $p, title: "x"}) { task { id } } }`,
		func(f, _ roleFixture) M { return M{"t": f.projTpl, "p": f.project} }},
	{"createTaskFromTemplate its template", `mutation($t: ID!, $p: ID!) { createTaskFromTemplate(input: {templateId: $t, projectId: $p, title: "x"}) { task { id } } }`,
		func(f, own roleFixture) M { return M{"t": f.userTpl, "p": own.project} }},
	{"revokeApiToken", `mutation($id: ID!) { revokeApiToken(input: {id: $id}) { apiToken { id } } }`,
		func(f, _ roleFixture) M { return M{"id": f.token} }},
}

// missingFixture names entities that do not exist, to compare answers with.
func missingFixture() roleFixture {
	return roleFixture{project: missingID("Project"), task: missingID("Task"), task2: missingID("Task"), list: missingID("TaskList"),
		item: missingID("TaskListItem"), idea: missingID("Idea"), rel: missingID("TaskRelationship"), change: missingID("TaskStateChange"),
		block: missingID("TaskBlock"), impact: missingID("TaskFileImpact"), projTpl: missingID("TaskTemplate"), userTpl: missingID("TaskTemplate"),
		token: missingID("ApiToken"), slug: "no-such-project", displayID: "TU-NOSUCH-TSK-001"}
}

// TestRoles covers the API's roles: ADMIN everything; MEMBER only its own
// projects, with another member's entities NOT_FOUND through every entry
// point; AGENT tokens read their one project and may change nothing here.
func TestRoles(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		admin := s.AdminToken
		_, alice := s.member(t, "alice")
		_, bob := s.member(t, "bob")
		a := newRoleFixture(t, s, alice, "alice-proj")
		b := newRoleFixture(t, s, bob, "bob-proj")
		_, agent := s.userWithToken(t, "alice-agent", "AGENT", a.project)
		missing := missingFixture()

		t.Run("member does not see another member's project", func(t *testing.T) {
			// Queries answer exactly as they do for ids that do not exist.
			for _, f := range []roleFixture{a, missing} {
				d := s.query(t, bob, `query($p: ID!, $slug: String!, $t: ID!, $did: String!, $l: ID!) {
					byID: project(id: $p) { id } bySlug: project(slug: $slug) { id }
					task: task(id: $t) { id } byDisplay: task(displayId: $did) { id } taskList(id: $l) { id } }`,
					M{"p": f.project, "slug": f.slug, "t": f.task, "did": f.displayID, "l": f.list})
				for _, k := range []string{"byID", "bySlug", "task", "byDisplay", "taskList"} {
					require.True(t, d.Null(k), "%s of %s", k, f.slug)
				}
			}
			for kind, id := range a.ids() {
				require.True(t, s.query(t, bob, `query($id: ID!) { node(id: $id) { id } }`, M{"id": id}).Null("node"), "node %s", kind)
			}
			var ids []string
			for _, id := range a.ids() {
				ids = append(ids, id)
			}
			ids = append(ids, b.task)
			d := s.query(t, bob, `query($ids: [ID!]!) { nodes(ids: $ids) { id } }`, M{"ids": ids})
			nodes := d.L("nodes")
			require.Len(t, nodes, len(ids))
			for i := range len(ids) - 1 {
				require.True(t, nodes[i].Null(""), "nodes[%d]", i)
			}
			require.Equal(t, b.task, nodes[len(ids)-1].S("id"), "the caller's own task resolves")

			// Connections leave it out.
			d = s.query(t, bob, `{ projects { totalCount nodes { id } } tasks { totalCount nodes { id } } viewer { projects { nodes { id } } } }`, nil)
			require.Equal(t, []string{b.project}, d.Col("projects.nodes", "id"))
			require.Equal(t, 1, d.N("projects.totalCount"))
			require.ElementsMatch(t, []string{b.task, b.task2}, d.Col("tasks.nodes", "id"))
			require.Equal(t, 2, d.N("tasks.totalCount"))
			d = s.query(t, bob, `query($l: ID!) { tasks(filter: {taskListId: $l}) { totalCount } }`, M{"l": a.list})
			require.Equal(t, 0, d.N("tasks.totalCount"))
			// Arguments naming it are NOT_FOUND, word for word as for a missing id.
			for _, q := range []string{
				`query($p: ID!) { tasks(projectId: $p) { totalCount } }`,
				`query($p: ID!) { taskTemplates(projectId: $p) { totalCount } }`,
			} {
				hidden := s.requireCode(t, bob, q, M{"p": a.project}, "NOT_FOUND")
				absent := s.requireCode(t, bob, q, M{"p": missing.project}, "NOT_FOUND")
				require.Equal(t, absent.Errors[0].Message, hidden.Errors[0].Message)
			}
		})

		t.Run("member cannot change another member's project", func(t *testing.T) {
			for _, mc := range targetedMutations {
				t.Run(mc.name, func(t *testing.T) {
					hidden := s.requireCode(t, bob, mc.query, mc.vars(a, b), "NOT_FOUND")
					absent := s.requireCode(t, bob, mc.query, mc.vars(missing, b), "NOT_FOUND")
					require.Equal(t, absent.Errors[0].Message, hidden.Errors[0].Message, "the answer does not tell hidden from missing")
					require.Equal(t, absent.ext("field"), hidden.ext("field"))
				})
			}
			s.requireCode(t, bob, `mutation($u: ID!, $p: ID!) { createApiToken(input: {userId: $u, name: "x", role: AGENT, projectId: $p}) { token } }`,
				M{"u": s.query(t, bob, `{ viewer { id } }`, nil).S("viewer.id"), "p": a.project}, "NOT_FOUND")
			// Nothing changed.
			d := s.query(t, alice, `query($id: ID!, $l: ID!) { task(id: $id) { title version status relationships { id } blocks { id } } taskList(id: $l) { totalTasks } }`,
				M{"id": a.task, "l": a.list})
			require.Equal(t, "t", d.S("task.title"))
			require.Equal(t, 1, d.N("task.version"))
			require.Equal(t, "PENDING", d.S("task.status"))
			require.Len(t, d.L("task.relationships"), 1)
			require.Empty(t, d.L("task.blocks"))
			require.Equal(t, 1, d.N("taskList.totalTasks"))
			// And the owner still can.
			s.query(t, alice, `mutation($id: ID!) { updateProject(input: {id: $id, description: "mine"}) { project { id } } }`, M{"id": a.project})
		})

		t.Run("admin sees and changes everything", func(t *testing.T) {
			for kind, id := range a.ids() {
				require.False(t, s.query(t, admin, `query($id: ID!) { node(id: $id) { id } }`, M{"id": id}).Null("node"), "node %s", kind)
			}
			d := s.query(t, admin, `query($p: ID!, $t: ID!) { project(id: $p) { owner { slug } } task(id: $t) { id } tasks(projectId: $p) { totalCount } }`,
				M{"p": b.project, "t": b.task})
			require.Equal(t, "bob", d.S("project.owner.slug"))
			require.Equal(t, 2, d.N("tasks.totalCount"))
			all := s.query(t, admin, `{ projects { nodes { id } } tasks { totalCount } }`, nil)
			require.Subset(t, all.Col("projects.nodes", "id"), []string{a.project, b.project})
			require.GreaterOrEqual(t, all.N("tasks.totalCount"), 4)
			d = s.query(t, admin, `mutation($id: ID!) { updateTask(input: {id: $id, description: "by admin"}) { task { description } } }`, M{"id": b.task2})
			require.Equal(t, "by admin", d.S("updateTask.task.description"))
		})

		t.Run("an entry by id reads the project only for a member", func(t *testing.T) {
			// An ADMIN's or an AGENT's visibility follows from the row's
			// project id; a MEMBER's needs the project's owner. Counted
			// against a query that only authenticates; the least of three
			// tries, as background work may add statements.
			least := func(token, q string, vars M) int64 {
				n := int64(-1)
				for range 3 {
					if c := statementsOf(t, s, func() { s.query(t, token, q, vars) }); n < 0 || c < n {
						n = c
					}
				}
				return n
			}
			reads := func(token, q string, vars M) int64 {
				return least(token, q, vars) - least(token, `{ __typename }`, nil)
			}
			for _, c := range []struct {
				name  string
				token string
				want  int64
			}{{"admin", admin, 1}, {"agent", agent, 1}, {"owner", alice, 2}} {
				for _, q := range []string{
					`query($id: ID!) { taskList(id: $id) { id } }`,
					`query($id: ID!) { node(id: $id) { id } }`,
				} {
					require.Equal(t, c.want, reads(c.token, q, M{"id": a.list}), "%s: %s", c.name, q)
				}
				require.Equal(t, c.want, reads(c.token, `query($id: ID!) { task(id: $id) { id } }`, M{"id": a.task}), "%s: task", c.name)
				// An item's project is its task's: one read more.
				require.Equal(t, c.want+1, reads(c.token, `query($id: ID!) { node(id: $id) { id } }`, M{"id": a.item}), "%s: node of an item", c.name)
			}
		})

		t.Run("agent reads its project only", func(t *testing.T) {
			d := s.query(t, agent, `query($p: ID!, $t: ID!, $l: ID!) {
				viewer { slug }
				project(id: $p) { slug tasks { totalCount } taskLists { totalCount } ideas { totalCount } }
				bySlug: project(slug: "alice-proj") { id }
				task(id: $t) { id title relationships { id } }
				taskList(id: $l) { tasks { nodes { id } } }
				tasks { totalCount nodes { id } }
				projects { nodes { id } }
				scoped: tasks(projectId: $p) { totalCount }
			}`, M{"p": a.project, "t": a.task, "l": a.list})
			require.Equal(t, "alice-agent", d.S("viewer.slug"))
			require.Equal(t, "alice-proj", d.S("project.slug"))
			require.Equal(t, 2, d.N("project.tasks.totalCount"))
			require.Equal(t, a.project, d.S("bySlug.id"))
			require.Equal(t, a.task, d.S("task.id"))
			require.Equal(t, []string{a.task}, d.Col("taskList.tasks.nodes", "id"))
			require.ElementsMatch(t, []string{a.task, a.task2}, d.Col("tasks.nodes", "id"))
			require.Equal(t, []string{a.project}, d.Col("projects.nodes", "id"))
			require.Equal(t, 2, d.N("scoped.totalCount"))
			for kind, id := range a.ids() {
				if kind == "TaskTemplate(USER)" || kind == "ApiToken" {
					continue // alice's own, not the project's
				}
				require.False(t, s.query(t, agent, `query($id: ID!) { node(id: $id) { id } }`, M{"id": id}).Null("node"), "node %s", kind)
			}
			// Other projects do not exist for it.
			d = s.query(t, agent, `query($p: ID!, $t: ID!, $l: ID!) { project(id: $p) { id } bySlug: project(slug: "bob-proj") { id } task(id: $t) { id } taskList(id: $l) { id } }`,
				M{"p": b.project, "t": b.task, "l": b.list})
			for _, k := range []string{"project", "bySlug", "task", "taskList"} {
				require.True(t, d.Null(k), k)
			}
			for kind, id := range b.ids() {
				require.True(t, s.query(t, agent, `query($id: ID!) { node(id: $id) { id } }`, M{"id": id}).Null("node"), "node %s", kind)
			}
			s.requireCode(t, agent, `query($p: ID!) { tasks(projectId: $p) { totalCount } }`, M{"p": b.project}, "NOT_FOUND")
		})

		t.Run("member creates an agent token for its project", func(t *testing.T) {
			aliceID := s.query(t, alice, `{ viewer { id } }`, nil).S("viewer.id")
			d := s.query(t, alice, `mutation($u: ID!, $p: ID!) { createApiToken(input: {userId: $u, name: "ci", role: AGENT, projectId: $p}) {
				token apiToken { role project { id slug } user { id } } } }`, M{"u": aliceID, "p": a.project})
			require.Equal(t, "AGENT", d.S("createApiToken.apiToken.role"))
			require.Equal(t, a.project, d.S("createApiToken.apiToken.project.id"))
			require.Equal(t, aliceID, d.S("createApiToken.apiToken.user.id"))
			tok := d.S("createApiToken.token")
			v := s.query(t, tok, `query($a: ID!, $b: ID!) { a: project(id: $a) { slug } b: project(id: $b) { slug } projects { totalCount } }`, M{"a": a.project, "b": b.project})
			require.Equal(t, "alice-proj", v.S("a.slug"))
			require.True(t, v.Null("b"))
			require.Equal(t, 1, v.N("projects.totalCount"))
			s.requireCode(t, tok, `mutation($p: ID!) { createTask(input: {projectId: $p, title: "x"}) { task { id } } }`, M{"p": a.project}, "FORBIDDEN")
			// The agent's own tokens and user are visible to it; other users are not.
			bobID := s.query(t, bob, `{ viewer { id } }`, nil).S("viewer.id")
			require.True(t, s.query(t, tok, `query($id: ID!) { node(id: $id) { id } }`, M{"id": bobID}).Null("node"))
			require.Equal(t, aliceID, s.query(t, tok, `{ viewer { id } }`, nil).S("viewer.id"))
		})

		t.Run("agent changes nothing", func(t *testing.T) {
			for _, mc := range targetedMutations {
				if mc.name == "createTaskFromTemplate its template" {
					continue // alice's USER template is not the project's: the agent does not see it
				}
				t.Run(mc.name, func(t *testing.T) {
					s.requireCode(t, agent, mc.query, mc.vars(a, a), "FORBIDDEN")
				})
			}
			global := s.query(t, admin, `mutation { createTaskTemplate(input: {name: "g", category: TASK, scope: GLOBAL}) { taskTemplate { id } } }`, nil).
				S("createTaskTemplate.taskTemplate.id")
			s.requireCode(t, agent, `mutation($t: ID!, $p: ID!) { createTaskFromTemplate(input: {templateId: $t, projectId: $p, title: "x"}) { task { id } } }`,
				M{"t": global, "p": a.project}, "FORBIDDEN")
			s.requireCode(t, agent, `mutation { createProject(input: {name: "x", slug: "agent-proj"}) { project { id } } }`, nil, "FORBIDDEN")
			s.requireCode(t, agent, `mutation { createUser(input: {name: "x", email: "x@example.com", slug: "agent-user"}) { user { id } } }`, nil, "FORBIDDEN")
			s.requireCode(t, agent, `mutation { createTaskTemplate(input: {name: "x", category: TASK, scope: USER}) { taskTemplate { id } } }`, nil, "FORBIDDEN")
			agentUser := s.query(t, agent, `{ viewer { id } }`, nil).S("viewer.id")
			s.requireCode(t, agent, `mutation($u: ID!) { createApiToken(input: {userId: $u, name: "x", role: MEMBER}) { token } }`, M{"u": agentUser}, "FORBIDDEN")
			// In another project the target does not exist for it.
			s.requireCode(t, agent, `mutation($p: ID!) { createTask(input: {projectId: $p, title: "x"}) { task { id } } }`, M{"p": b.project}, "NOT_FOUND")
			s.requireCode(t, agent, `mutation($id: ID!) { updateTask(input: {id: $id, title: "x"}) { task { id } } }`, M{"id": b.task}, "NOT_FOUND")
			d := s.query(t, alice, `query($p: ID!, $id: ID!) { project(id: $p) { name tasks { totalCount } taskLists { totalCount } } task(id: $id) { title version status } }`,
				M{"p": a.project, "id": a.task})
			require.Equal(t, "alice-proj", d.S("project.name"))
			require.Equal(t, 2, d.N("project.tasks.totalCount"))
			require.Equal(t, 1, d.N("project.taskLists.totalCount"))
			require.Equal(t, 1, d.N("task.version"))
		})
	})
}
