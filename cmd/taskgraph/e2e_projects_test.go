package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestProjects covers createProject, updateProject, createIdea, project,
// projects and the nested connections of Project, Idea and User.
func TestProjects(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		admin := s.AdminToken
		adminID := s.query(t, admin, `{ viewer { id } }`, nil).S("viewer.id")
		const projectFields = `id slug name description status owner { id } createdAt updatedAt`

		d := s.query(t, admin, `mutation { createProject(input: {name: "  Apollo  ", slug: "apollo", description: "to the moon"}) { project { `+projectFields+` } } }`, nil)
		apollo := d.at("createProject.project")
		require.Equal(t, "apollo", apollo.S("slug"))
		require.Equal(t, "Apollo", apollo.S("name"))
		require.Equal(t, "to the moon", apollo.S("description"))
		require.Equal(t, "ACTIVE", apollo.S("status"))
		require.Equal(t, adminID, apollo.S("owner.id"))
		id := apollo.S("id")

		t.Run("createProject errors", func(t *testing.T) {
			r := s.requireCode(t, admin, `mutation { createProject(input: {name: "Again", slug: "apollo"}) { project { id } } }`, nil, "CONFLICT")
			require.Equal(t, "slug", r.ext("field"))
			for _, tc := range []struct{ name, slug, field string }{
				{"x", "Bad Slug", "slug"},
				{"x", "-dash", "slug"},
				{"x", "", "slug"},
				{"", "ok-slug", "name"},
			} {
				r := s.requireCode(t, admin, `mutation($n: String!, $s: String!) { createProject(input: {name: $n, slug: $s}) { project { id } } }`,
					M{"n": tc.name, "s": tc.slug}, "BAD_USER_INPUT")
				require.Equal(t, tc.field, r.ext("field"), "%+v", tc)
			}
		})

		t.Run("project by id and slug", func(t *testing.T) {
			d := s.query(t, admin, `query($id: ID!) { byID: project(id: $id) { slug } bySlug: project(slug: "apollo") { id }
				none: project(slug: "nope") { id } missing: project(id: "`+missingID("Project")+`") { id } }`, M{"id": id})
			require.Equal(t, "apollo", d.S("byID.slug"))
			require.Equal(t, id, d.S("bySlug.id"))
			require.True(t, d.Null("none"))
			require.True(t, d.Null("missing"))
			s.requireCode(t, admin, `query($id: ID!) { project(id: $id, slug: "apollo") { id } }`, M{"id": id}, "BAD_USER_INPUT")
			s.requireCode(t, admin, `{ project { id } }`, nil, "BAD_USER_INPUT")
			r := s.requireCode(t, admin, `{ project(id: "%%%") { id } }`, nil, "BAD_USER_INPUT")
			require.Equal(t, "id", r.ext("field"))
			// A task's id is no project.
			task := s.createTask(t, admin, id, "t", nil)
			require.True(t, s.query(t, admin, `query($id: ID!) { project(id: $id) { id } }`, M{"id": task}).Null("project"))
		})

		t.Run("updateProject", func(t *testing.T) {
			p := s.createProject(t, admin, "upd")
			before := s.query(t, admin, `query($id: ID!) { project(id: $id) { updatedAt } }`, M{"id": p}).S("project.updatedAt")
			d := s.query(t, admin, `mutation($id: ID!) { updateProject(input: {id: $id, name: "Renamed", description: "new", status: PAUSED}) { project { `+projectFields+` } } }`, M{"id": p})
			u := d.at("updateProject.project")
			require.Equal(t, "Renamed", u.S("name"))
			require.Equal(t, "new", u.S("description"))
			require.Equal(t, "PAUSED", u.S("status"))
			require.Equal(t, "upd", u.S("slug"))
			require.Greater(t, u.S("updatedAt"), before)
			// Fields not given stay.
			d = s.query(t, admin, `mutation($id: ID!) { updateProject(input: {id: $id, status: ARCHIVED}) { project { name description status } } }`, M{"id": p})
			require.Equal(t, "Renamed", d.S("updateProject.project.name"))
			require.Equal(t, "new", d.S("updateProject.project.description"))
			require.Equal(t, "ARCHIVED", d.S("updateProject.project.status"))
			r := s.requireCode(t, admin, `mutation($id: ID!) { updateProject(input: {id: $id, name: ""}) { project { id } } }`, M{"id": p}, "BAD_USER_INPUT")
			require.Equal(t, "name", r.ext("field"))
			s.requireCode(t, admin, `mutation($id: ID!) { updateProject(input: {id: $id, name: "x"}) { project { id } } }`, M{"id": missingID("Project")}, "NOT_FOUND")
			// The filter sees the new status.
			f := s.query(t, admin, `{ projects(filter: {status: [ARCHIVED]}) { nodes { slug } } }`, nil)
			require.Equal(t, []string{"upd"}, f.Col("projects.nodes", "slug"))
		})

		t.Run("ideas", func(t *testing.T) {
			d := s.query(t, admin, `mutation($p: ID!) { createIdea(input: {projectId: $p, name: "Lander", slug: "lander", description: "land it"}) {
				idea { id slug name description lifecycleStage project { id } createdAt updatedAt tasks { totalCount } } } }`, M{"p": id})
			idea := d.at("createIdea.idea")
			require.Equal(t, "lander", idea.S("slug"))
			require.Equal(t, "Lander", idea.S("name"))
			require.Equal(t, "land it", idea.S("description"))
			require.Equal(t, "SPARK", idea.S("lifecycleStage"), "default stage")
			require.Equal(t, id, idea.S("project.id"))
			require.Equal(t, 0, idea.N("tasks.totalCount"))
			d = s.query(t, admin, `mutation($p: ID!) { createIdea(input: {projectId: $p, name: "Orbiter", slug: "orbiter", lifecycleStage: RESEARCH}) { idea { id lifecycleStage } } }`, M{"p": id})
			require.Equal(t, "RESEARCH", d.S("createIdea.idea.lifecycleStage"))
			r := s.requireCode(t, admin, `mutation($p: ID!) { createIdea(input: {projectId: $p, name: "Dup", slug: "lander"}) { idea { id } } }`, M{"p": id}, "CONFLICT")
			require.Equal(t, "slug", r.ext("field"))
			other := s.createProject(t, admin, "ideas-other")
			s.query(t, admin, `mutation($p: ID!) { createIdea(input: {projectId: $p, name: "Same slug elsewhere", slug: "lander"}) { idea { id } } }`, M{"p": other})
			r = s.requireCode(t, admin, `mutation($p: ID!) { createIdea(input: {projectId: $p, name: "x", slug: "Bad Slug"}) { idea { id } } }`, M{"p": id}, "BAD_USER_INPUT")
			require.Equal(t, "slug", r.ext("field"))
			s.requireCode(t, admin, `mutation($p: ID!) { createIdea(input: {projectId: $p, name: "x", slug: "x"}) { idea { id } } }`, M{"p": missingID("Project")}, "NOT_FOUND")

			t1 := s.createTask(t, admin, id, "first for idea", M{"ideaId": idea.S("id")})
			t2 := s.createTask(t, admin, id, "second for idea", M{"ideaId": idea.S("id")})
			s.createTask(t, admin, id, "not for idea", nil)
			r = s.requireCode(t, admin, `mutation($p: ID!, $i: ID!) { createTask(input: {projectId: $p, title: "x", ideaId: $i}) { task { id } } }`,
				M{"p": other, "i": idea.S("id")}, "NOT_FOUND")
			require.Equal(t, "ideaId", r.ext("field"))
			d = s.query(t, admin, `query($p: ID!) { project(id: $p) { ideas { totalCount nodes { slug tasks { totalCount nodes { id idea { slug } } } } } } }`, M{"p": id})
			require.Equal(t, 2, d.N("project.ideas.totalCount"))
			require.Equal(t, []string{"lander", "orbiter"}, d.Col("project.ideas.nodes", "slug"))
			require.Equal(t, 2, d.N("project.ideas.nodes.0.tasks.totalCount"))
			require.Equal(t, []string{t1, t2}, d.Col("project.ideas.nodes.0.tasks.nodes", "id"))
			require.Equal(t, "lander", d.S("project.ideas.nodes.0.tasks.nodes.0.idea.slug"))
			require.Equal(t, 0, d.N("project.ideas.nodes.1.tasks.totalCount"))
		})

		t.Run("projects", func(t *testing.T) {
			s.query(t, admin, `mutation { createProject(input: {name: "Gemini Program", slug: "gemini", description: "Two seats"}) { project { id } } }`, nil)
			s.query(t, admin, `mutation { createProject(input: {name: "Mercury", slug: "mercury", description: "One seat, like GEMINI's predecessor"}) { project { id } } }`, nil)
			all := s.query(t, admin, `{ projects { totalCount nodes { slug } } }`, nil)
			require.GreaterOrEqual(t, all.N("projects.totalCount"), 4)
			require.Equal(t, all.N("projects.totalCount"), len(all.L("projects.nodes")))
			for _, tc := range []struct {
				search string
				want   []string
			}{
				{"gemini", []string{"gemini", "mercury"}}, // slug, name and description, any case
				{"GEMINI program", []string{"gemini"}},
				{"seat", []string{"gemini", "mercury"}},
				{"ONE SEAT", []string{"mercury"}},
				{"%", nil},
				{"nothing-like-this", nil},
			} {
				d := s.query(t, admin, `query($s: String!) { projects(filter: {search: $s}) { totalCount nodes { slug } } }`, M{"s": tc.search})
				require.ElementsMatch(t, tc.want, d.Col("projects.nodes", "slug"), "search %q", tc.search)
				require.Equal(t, len(tc.want), d.N("projects.totalCount"))
			}
			d := s.query(t, admin, `{ projects(filter: {status: [ACTIVE], search: "e"}) { nodes { slug status } } }`, nil)
			for _, p := range d.L("projects.nodes") {
				require.Equal(t, "ACTIVE", p.S("status"))
			}
			// Paging through all projects, oldest first.
			var seen []string
			after := any(nil)
			for range 10 {
				p := s.query(t, admin, `query($a: String) { projects(first: 2, after: $a) { pageInfo { hasNextPage endCursor } nodes { slug } } }`, M{"a": after})
				seen = append(seen, p.Col("projects.nodes", "slug")...)
				if !p.B("projects.pageInfo.hasNextPage") {
					break
				}
				after = p.S("projects.pageInfo.endCursor")
			}
			require.Equal(t, all.Col("projects.nodes", "slug"), seen)
		})

		t.Run("nested", func(t *testing.T) {
			p := s.createProject(t, admin, "nested")
			list := s.createList(t, admin, p, "L")
			inList := s.createTask(t, admin, p, "in list", M{"taskListId": list})
			queued := s.createTask(t, admin, p, "queued", M{"inEvaluationQueue": true, "priority": "P1"})
			draft := s.createTask(t, admin, p, "draft", nil)
			s.query(t, admin, `mutation($p: ID!) { createTaskTemplate(input: {name: "T", category: TASK, scope: PROJECT, projectId: $p}) { taskTemplate { id } } }`, M{"p": p})
			d := s.query(t, admin, `query($p: ID!) { project(id: $p) {
				owner { id slug projects { totalCount nodes { slug } } }
				tasks { totalCount nodes { id project { slug } } }
				pending: tasks(filter: {status: [PENDING]}) { totalCount nodes { id } }
				byScore: tasks(orderBy: {field: PRIORITY_SCORE, direction: DESC}, first: 1) { nodes { id } }
				taskLists { totalCount nodes { id tasks { nodes { id } } } }
				evaluationQueue { totalCount nodes { id } }
				taskTemplates { nodes { name scope } }
			} }`, M{"p": p})
			pr := d.at("project")
			require.Equal(t, adminID, pr.S("owner.id"))
			require.Contains(t, pr.Col("owner.projects.nodes", "slug"), "nested")
			require.Equal(t, 3, pr.N("tasks.totalCount"))
			require.Equal(t, []string{inList, queued, draft}, pr.Col("tasks.nodes", "id"), "oldest first by default")
			require.Equal(t, "nested", pr.S("tasks.nodes.0.project.slug"))
			require.Equal(t, []string{inList}, pr.Col("pending.nodes", "id"))
			require.Equal(t, []string{queued}, pr.Col("byScore.nodes", "id"))
			require.Equal(t, []string{list}, pr.Col("taskLists.nodes", "id"))
			require.Equal(t, []string{inList}, pr.Col("taskLists.nodes.0.tasks.nodes", "id"))
			require.Equal(t, []string{queued}, pr.Col("evaluationQueue.nodes", "id"))
			require.Contains(t, pr.Col("taskTemplates.nodes", "name"), "T")

			// User.projects lists a user's own projects only.
			memberID, member := s.member(t, "nested-member")
			s.createProject(t, member, "members-own")
			u := s.query(t, admin, `query($id: ID!) { node(id: $id) { ... on User { slug projects { totalCount nodes { slug owner { id } } } } } }`, M{"id": memberID})
			require.Equal(t, []string{"members-own"}, u.Col("node.projects.nodes", "slug"))
			require.Equal(t, memberID, u.S("node.projects.nodes.0.owner.id"))
			v := s.query(t, member, `{ viewer { id projects { totalCount nodes { slug } } } }`, nil)
			require.Equal(t, memberID, v.S("viewer.id"))
			require.Equal(t, 1, v.N("viewer.projects.totalCount"))
			// A member sees other users, but not their projects.
			a := s.query(t, member, `query($id: ID!) { node(id: $id) { ... on User { slug projects { totalCount } } } }`, M{"id": adminID})
			require.Equal(t, "admin", a.S("node.slug"))
			require.Equal(t, 0, a.N("node.projects.totalCount"))
		})
	})
}
