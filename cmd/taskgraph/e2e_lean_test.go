package main

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/taskgraph/taskgraph/graph"
)

// TestLeanReadsAnswerAsFullReads: every field an operation may read lean
// (graph.LeanTaskFields, LeanFileImpactFields, LeanRelationshipFields)
// answers what a full read answers. Each is asked alone of a task, its impact
// and its link that set every column the API lets a client set: through a
// list's tasks, a project's and the top-level page (lean, reading only that
// field's columns), and through node (the entry points read in full).
func TestLeanReadsAnswerAsFullReads(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		admin := s.AdminToken
		project := s.createProject(t, admin, "lean")
		idea := s.query(t, admin, `mutation($p: ID!) { createIdea(input: {projectId: $p, name: "Idea", slug: "idea"}) { idea { id } } }`,
			M{"p": project}).S("createIdea.idea.id")
		parent := s.createTask(t, admin, project, "parent", nil)
		old := s.createTask(t, admin, project, "old", nil)
		task := s.createTask(t, admin, project, "Full", M{
			"description": "All the fields", "category": "FEATURE", "priority": "P1", "effort": "LARGE", "riskLevel": "HIGH",
			"owner": "BUILD_AGENT", "phase": "API", "deadline": time.Now().Add(30 * 24 * time.Hour).UTC().Format(time.RFC3339),
			"acceptanceCriteria": []string{"works"}, "codebaseTests": []string{"go test"}, "apiTests": []string{"api"},
			"uiTests": []string{"ui"}, "affectedFiles": []string{"a.go"}, "parentTaskId": parent, "ideaId": idea, "supersedesTaskId": old,
			"fileImpacts": []M{{"filePath": "a.go", "operation": "UPDATE", "confidence": 0.5, "source": "AI_ESTIMATE"}},
		})
		link := s.query(t, admin, `mutation($s: ID!, $t: ID!) { addTaskRelationship(input: {sourceTaskId: $s, targetTaskId: $t,
			type: DEPENDS_ON, strength: 0.75, notes: "first the parent"}) { relationship { id } } }`,
			M{"s": task, "t": parent}).S("addTaskRelationship.relationship.id")
		s.transition(t, admin, task, "PENDING")
		list := s.createList(t, admin, project, "lean", task, parent)
		impact := s.query(t, admin, `query($id: ID!) { node(id: $id) { ... on Task { fileImpacts { id } } } }`, M{"id": task}).
			S("node.fileImpacts.0.id")

		schema := graph.NewExecutableSchema(graph.Config{}).Schema()
		// answer is the value of field f of the object with id in a JSON
		// answer, the one nearest the top (the same object may be nested
		// deeper, as another task's dependent).
		answer := func(v any, id, f string) (any, bool) {
			for level := []any{v}; len(level) > 0; {
				var next []any
				for _, v := range level {
					switch v := v.(type) {
					case map[string]any:
						if v["id"] == id {
							return v[f], true
						}
						for _, x := range v {
							next = append(next, x)
						}
					case []any:
						next = append(next, v...)
					}
				}
				level = next
			}
			return nil, false
		}
		ask := func(q, id, f string) any {
			var out map[string]any
			require.NoError(t, s.call(http.DefaultClient, admin, q, M{"l": list, "id": id, "p": project}, &out), q)
			a, ok := answer(out, id, f)
			require.True(t, ok, "%s: no object %s in %v", q, id, out)
			return a
		}
		// Where tasks are read lean: a list's tasks (by id), a project's
		// and the top-level pages.
		const (
			listTasks    = `query($l: ID!) { taskList(id: $l) { tasks(first: 10) { nodes { id %s } } } }`
			projectTasks = `query($p: ID!) { node(id: $p) { ... on Project { tasks(first: 10) { nodes { id %s } } } } }`
			pageTasks    = `query($p: ID!) { tasks(projectId: $p, first: 10, orderBy: {field: UPDATED_AT, direction: DESC}) { nodes { id %s } } }`
		)
		for _, c := range []struct {
			typeName, id, lean string // lean: a read of the type through the tasks of one of the above
			fields             map[string][]string
		}{
			{"Task", task, fmt.Sprintf(listTasks, "%s"), graph.LeanTaskFields},
			{"Task", task, fmt.Sprintf(projectTasks, "%s"), graph.LeanTaskFields},
			{"Task", task, fmt.Sprintf(pageTasks, "%s"), graph.LeanTaskFields},
			{"TaskFileImpact", impact, fmt.Sprintf(listTasks, "fileImpacts { id %s }"), graph.LeanFileImpactFields},
			{"TaskRelationship", link, fmt.Sprintf(listTasks, "relationships { id %s }"), graph.LeanRelationshipFields},
		} {
			var names []string
			for f := range c.fields {
				if f != "__typename" && f != "id" {
					names = append(names, f)
				}
			}
			sort.Strings(names)
			for _, f := range names {
				sel := f
				if def := schema.Types[schema.Types[c.typeName].Fields.ForName(f).Type.Name()]; strings.HasSuffix(def.Name, "Connection") {
					sel += " { totalCount nodes { id } }"
				} else if def.Kind != ast.Scalar && def.Kind != ast.Enum {
					sel += " { id }"
				}
				lean := ask(fmt.Sprintf(c.lean, sel), c.id, f)
				full := ask(`query($id: ID!) { node(id: $id) { id ... on `+c.typeName+` { `+sel+` } } }`, c.id, f)
				require.Equal(t, full, lean, "%s.%s read lean", c.typeName, f)
			}
		}
	})
}

// TestLeanTaskPages: a page of tasks read lean pages as one read in full, in
// every order: the sort key is read whatever the operation shows.
func TestLeanTaskPages(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		admin := s.AdminToken
		project := s.createProject(t, admin, "leanpages")
		for i, p := range []string{"P2", "P1", "P3", "P1", "P2"} {
			in := M{"priority": p}
			if i%2 == 0 {
				in["deadline"] = time.Now().Add(time.Duration(i+1) * 24 * time.Hour).UTC().Format(time.RFC3339)
			}
			s.createTask(t, admin, project, fmt.Sprintf("T%d", i), in)
		}
		// ids pages through the project's tasks two at a time, selecting
		// sel, and lists their ids in order.
		ids := func(order, dir, sel string) []string {
			var out []string
			after := any(nil)
			for range 10 {
				d := s.query(t, admin, `query($p: ID!, $after: String) { tasks(projectId: $p, first: 2, after: $after,
					orderBy: {field: `+order+`, direction: `+dir+`}) { nodes { `+sel+` } pageInfo { hasNextPage endCursor } } }`,
					M{"p": project, "after": after})
				for i := range d.L("tasks.nodes") {
					out = append(out, d.S(fmt.Sprintf("tasks.nodes.%d.id", i)))
				}
				if !d.B("tasks.pageInfo.hasNextPage") {
					return out
				}
				after = d.S("tasks.pageInfo.endCursor")
			}
			t.Fatalf("%s %s: more than 10 pages of 2 for 5 tasks: %v", order, dir, out)
			return nil
		}
		for _, order := range []string{"PRIORITY_SCORE", "CREATED_AT", "UPDATED_AT", "DEADLINE", "DISPLAY_ID"} {
			for _, dir := range []string{"ASC", "DESC"} {
				full := ids(order, dir, "id validation { valid }")
				require.Len(t, full, 5)
				require.Equal(t, full, ids(order, dir, "id"), "%s %s read lean", order, dir)
			}
		}
	})
}
