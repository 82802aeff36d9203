package main

import (
	"fmt"
	"net/http"
	"sort"
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
// list's tasks (lean, reading only that field's columns), and through node
// (the entry points read in full).
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
		// answer, wherever it is.
		var answer func(v any, id, f string) (any, bool)
		answer = func(v any, id, f string) (any, bool) {
			switch v := v.(type) {
			case map[string]any:
				if v["id"] == id {
					return v[f], true
				}
				for _, x := range v {
					if a, ok := answer(x, id, f); ok {
						return a, true
					}
				}
			case []any:
				for _, x := range v {
					if a, ok := answer(x, id, f); ok {
						return a, true
					}
				}
			}
			return nil, false
		}
		ask := func(q, id, f string) any {
			var out map[string]any
			require.NoError(t, s.call(http.DefaultClient, admin, q, M{"l": list, "id": id}, &out), q)
			a, ok := answer(out, id, f)
			require.True(t, ok, "%s: no object %s in %v", q, id, out)
			return a
		}
		for _, c := range []struct {
			typeName, id string
			fields       map[string][]string
			lean         string // where a list's tasks show the type
		}{
			{"Task", task, graph.LeanTaskFields, "%s"},
			{"TaskFileImpact", impact, graph.LeanFileImpactFields, "fileImpacts { id %s }"},
			{"TaskRelationship", link, graph.LeanRelationshipFields, "relationships { id %s }"},
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
				if def := schema.Types[schema.Types[c.typeName].Fields.ForName(f).Type.Name()]; def.Kind != ast.Scalar && def.Kind != ast.Enum {
					sel += " { id }"
				}
				lean := ask(`query($l: ID!) { taskList(id: $l) { tasks(first: 10) { nodes { id `+fmt.Sprintf(c.lean, sel)+` } } } }`, c.id, f)
				full := ask(`query($id: ID!) { node(id: $id) { id ... on `+c.typeName+` { `+sel+` } } }`, c.id, f)
				require.Equal(t, full, lean, "%s.%s read lean", c.typeName, f)
			}
		}
	})
}
