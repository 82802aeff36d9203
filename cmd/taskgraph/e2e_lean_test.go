package main

import (
	"encoding/json"
	"net/http"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/taskgraph/taskgraph/graph"
)

// TestLeanReadsAnswerAsFullReads: every field an operation may read lean
// (graph.LeanTaskFields, graph.LeanFileImpactFields) answers what it answers
// when the operation reads in full. Each is asked of a task that sets every
// column, through a list's tasks (a lean read): once alone, and once beside a
// field that needs the full read.
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
		s.link(t, admin, task, parent, "DEPENDS_ON")
		s.transition(t, admin, task, "PENDING")
		list := s.createList(t, admin, project, "lean", task, parent)

		schema := graph.NewExecutableSchema(graph.Config{}).Schema()
		ask := func(typeName, field, widen string) json.RawMessage {
			sel := field
			if def := schema.Types[schema.Types[typeName].Fields.ForName(field).Type.Name()]; def.Kind != ast.Scalar && def.Kind != ast.Enum {
				sel += " { id }"
			}
			if typeName == "TaskFileImpact" {
				sel = "fileImpacts { " + sel + " " + widen + " }"
			} else {
				sel += " " + widen
			}
			var out struct {
				TaskList struct {
					Tasks struct{ Nodes []map[string]json.RawMessage }
				}
			}
			q := `query($l: ID!) { taskList(id: $l) { tasks(first: 10) { nodes { id ` + sel + ` } } } }`
			require.NoError(t, s.call(http.DefaultClient, admin, q, M{"l": list}, &out), q)
			for _, n := range out.TaskList.Tasks.Nodes {
				if string(n["id"]) == `"`+task+`"` {
					key := field
					if typeName == "TaskFileImpact" {
						key = "fileImpacts"
					}
					return n[key]
				}
			}
			t.Fatalf("%s: the task is not in the list", q)
			return nil
		}
		for _, c := range []struct {
			typeName string
			fields   map[string]bool
			widen    string // a field that makes the operation read the type in full
		}{
			{"Task", graph.LeanTaskFields, "description"},
			{"TaskFileImpact", graph.LeanFileImpactFields, "createdAt"},
		} {
			require.False(t, c.fields[c.widen], "%s widens the read", c.widen)
			var names []string
			for f := range c.fields {
				if f != "__typename" {
					names = append(names, f)
				}
			}
			sort.Strings(names)
			for _, f := range names {
				lean, full := ask(c.typeName, f, ""), ask(c.typeName, f, c.widen)
				if c.typeName == "TaskFileImpact" {
					// The full answer carries the widening field too: compare the asked one.
					lean, full = pick(t, lean, f), pick(t, full, f)
				}
				require.JSONEq(t, string(full), string(lean), "%s.%s read lean", c.typeName, f)
			}
		}
	})
}

// pick is field f of each object of a JSON list.
func pick(t *testing.T, list json.RawMessage, f string) json.RawMessage {
	var objs []map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(list, &objs))
	out := make([]json.RawMessage, len(objs))
	for i, o := range objs {
		out[i] = o[f]
	}
	b, err := json.Marshal(out)
	require.NoError(t, err)
	return b
}
