package main

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

const taskFields = `id displayId title description category status priority priorityScore blocksCount isQuickWin
	riskLevel effort owner phase deadline acceptanceCriteria codebaseTests apiTests uiTests affectedFiles
	actualEffortMinutes inEvaluationQueue version embeddingModel embedding createdAt updatedAt startedAt completedAt
	createdBy { id } project { id } idea { id } parentTask { id } supersedes { id } taskList { id } listItem { id position }
	fileImpacts { id filePath operation confidence source wasAccurate validatedAt }`

// TestTasks covers createTask, updateTask and transitionTask with the task
// rules of the API: defaults, initial status, display ids, priority scores,
// the lifecycle and its history, and expectedVersion.
func TestTasks(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		admin := s.AdminToken
		project := s.createProject(t, admin, "tasks")

		// Strings are written from their objects when the response is
		// written (gqlexec.StringAt); a mutation's root fields still answer
		// each as of its own execution, not as of the last one's.
		t.Run("a mutation's fields answer as they executed", func(t *testing.T) {
			id := s.query(t, admin, `mutation($p: ID!) { createTask(input: {projectId: $p, title: "first"}) { task { id } } }`,
				M{"p": s.createProject(t, admin, "serial-fields")}).S("createTask.task.id")
			d := s.query(t, admin, `mutation($id: ID!) {
				a: updateTask(input: {id: $id, title: "second", description: "two"}) { task { title description version updatedAt } }
				b: updateTask(input: {id: $id, title: "third", description: "three"}) { task { title description version updatedAt } }
			}`, M{"id": id})
			require.Equal(t, 2, d.N("a.task.version"))
			require.Equal(t, 3, d.N("b.task.version"))
			require.Less(t, d.S("a.task.updatedAt"), d.S("b.task.updatedAt"))
			require.Equal(t, "second", d.S("a.task.title"))
			require.Equal(t, "two", d.S("a.task.description"))
			require.Equal(t, "third", d.S("b.task.title"))
			require.Equal(t, "three", d.S("b.task.description"))
		})

		t.Run("createTask defaults", func(t *testing.T) {
			d := s.query(t, admin, `mutation($p: ID!) { createTask(input: {projectId: $p, title: "  Write docs  "}) { task { `+taskFields+` } } }`, M{"p": project})
			task := d.at("createTask.task")
			require.Equal(t, "Write docs", task.S("title"), "titles are trimmed")
			require.Equal(t, "", task.S("description"))
			require.Equal(t, "TASK", task.S("category"))
			require.Equal(t, "P3", task.S("priority"))
			require.Equal(t, "MEDIUM", task.S("riskLevel"))
			require.Equal(t, "DRAFT", task.S("status"))
			require.Equal(t, 40, task.N("priorityScore"))
			require.Equal(t, 0, task.N("blocksCount"))
			require.False(t, task.B("isQuickWin"))
			require.False(t, task.B("inEvaluationQueue"))
			require.Equal(t, 1, task.N("version"))
			require.Equal(t, "TU-TASKS-TSK-001", task.S("displayId"))
			for _, f := range []string{"effort", "owner", "phase", "deadline", "actualEffortMinutes", "embeddingModel", "embedding",
				"startedAt", "completedAt", "idea", "parentTask", "supersedes", "taskList", "listItem"} {
				require.True(t, task.Null(f), "%s is null by default", f)
			}
			for _, f := range []string{"acceptanceCriteria", "codebaseTests", "apiTests", "uiTests", "affectedFiles", "fileImpacts"} {
				require.Empty(t, task.L(f), "%s is empty by default", f)
			}
			require.Equal(t, project, task.S("project.id"))
			require.Equal(t, s.query(t, admin, `{ viewer { id } }`, nil).S("viewer.id"), task.S("createdBy.id"))
			require.Equal(t, task.S("createdAt"), task.S("updatedAt"))
			require.True(t, strings.HasSuffix(task.S("createdAt"), "Z"), "times are UTC: %s", task.S("createdAt"))
			// A deadline given with an offset comes back in UTC.
			d = s.query(t, admin, `mutation($p: ID!) { createTask(input: {projectId: $p, title: "tz", deadline: "2030-01-01T12:00:00+02:00"}) { task { deadline } } }`, M{"p": project})
			require.Equal(t, "2030-01-01T10:00:00Z", d.S("createTask.task.deadline"))
		})

		t.Run("createTask with every field", func(t *testing.T) {
			idea := s.query(t, admin, `mutation($p: ID!) { createIdea(input: {projectId: $p, name: "Idea", slug: "idea"}) { idea { id } } }`,
				M{"p": project}).S("createIdea.idea.id")
			parent := s.createTask(t, admin, project, "parent", nil)
			old := s.createTask(t, admin, project, "old", nil)
			deadline := time.Now().Add(30 * 24 * time.Hour).UTC().Truncate(time.Second)
			d := s.query(t, admin, `mutation($in: CreateTaskInput!) { createTask(input: $in) { task { `+taskFields+` } } }`, M{"in": M{
				"projectId": project, "title": "Full", "description": "All the fields", "category": "FEATURE", "priority": "P1",
				"effort": "LARGE", "riskLevel": "HIGH", "owner": "BUILD_AGENT", "phase": "API", "deadline": deadline.Format(time.RFC3339),
				"acceptanceCriteria": []string{"works"}, "codebaseTests": []string{"go test ./..."}, "apiTests": []string{"api one", "api two"},
				"uiTests": []string{"ui"}, "affectedFiles": []string{"a.go", "b.go"},
				"fileImpacts":  []M{{"filePath": "a.go", "operation": "UPDATE", "confidence": 0.5, "source": "AI_ESTIMATE"}, {"filePath": "b.go", "operation": "CREATE"}},
				"parentTaskId": parent, "ideaId": idea, "supersedesTaskId": old,
			}})
			task := d.at("createTask.task")
			require.Equal(t, "All the fields", task.S("description"))
			require.Equal(t, "FEATURE", task.S("category"))
			require.Equal(t, "TU-TASKS-FEA-001", task.S("displayId"))
			require.Equal(t, "P1", task.S("priority"))
			require.Equal(t, "LARGE", task.S("effort"))
			require.Equal(t, "HIGH", task.S("riskLevel"))
			require.Equal(t, "BUILD_AGENT", task.S("owner"))
			require.Equal(t, "API", task.S("phase"))
			got, err := time.Parse(time.RFC3339, task.S("deadline"))
			require.NoError(t, err)
			require.True(t, got.Equal(deadline), "deadline %s, want %s", got, deadline)
			require.Equal(t, []string{"works"}, task.Strs("acceptanceCriteria"))
			require.Equal(t, []string{"go test ./..."}, task.Strs("codebaseTests"))
			require.Equal(t, []string{"api one", "api two"}, task.Strs("apiTests"))
			require.Equal(t, []string{"ui"}, task.Strs("uiTests"))
			require.Equal(t, []string{"a.go", "b.go"}, task.Strs("affectedFiles"))
			require.Equal(t, idea, task.S("idea.id"))
			require.Equal(t, parent, task.S("parentTask.id"))
			require.Equal(t, old, task.S("supersedes.id"))
			require.Equal(t, 100, task.N("priorityScore"))
			impacts := map[string]jv{}
			for _, fi := range task.L("fileImpacts") {
				impacts[fi.S("filePath")] = fi
			}
			require.Len(t, impacts, 2)
			require.Equal(t, "UPDATE", impacts["a.go"].S("operation"))
			require.Equal(t, 0.5, impacts["a.go"].F("confidence"))
			require.Equal(t, "AI_ESTIMATE", impacts["a.go"].S("source"))
			require.Equal(t, "CREATE", impacts["b.go"].S("operation"))
			require.Equal(t, 1.0, impacts["b.go"].F("confidence"), "confidence defaults to 1")
			require.Equal(t, "USER_DECLARED", impacts["b.go"].S("source"))
			require.True(t, impacts["a.go"].Null("wasAccurate"))
			require.True(t, impacts["a.go"].Null("validatedAt"))
			// parentTaskId and supersedesTaskId are links of the graph too.
			rels := s.query(t, admin, `query($id: ID!) { node(id: $id) { ... on Task { relationships(direction: OUTGOING) { type target { id } } } } }`,
				M{"id": task.S("id")})
			require.ElementsMatch(t, []string{"SUBTASK_OF", "SUPERSEDES"}, rels.Col("node.relationships", "type"))
		})

		t.Run("initial status", func(t *testing.T) {
			list := s.createList(t, admin, project, "initial")
			for _, tc := range []struct {
				name   string
				extra  M
				status string
				queued bool
				inList bool
			}{
				{"plain", nil, "DRAFT", false, false},
				{"queue false", M{"inEvaluationQueue": false}, "DRAFT", false, false},
				{"evaluation queue", M{"inEvaluationQueue": true}, "EVALUATING", true, false},
				{"task list", M{"taskListId": list}, "PENDING", false, true},
			} {
				t.Run(tc.name, func(t *testing.T) {
					id := s.createTask(t, admin, project, tc.name, tc.extra)
					d := s.query(t, admin, `query($id: ID!) { task(id: $id) { status inEvaluationQueue taskList { id } listItem { itemStatus } stateHistory { fromStatus toStatus reason } } }`, M{"id": id})
					require.Equal(t, tc.status, d.S("task.status"))
					require.Equal(t, tc.queued, d.B("task.inEvaluationQueue"))
					require.Equal(t, tc.inList, !d.Null("task.taskList"))
					require.Equal(t, tc.inList, !d.Null("task.listItem"))
					h := d.L("task.stateHistory")
					require.Len(t, h, 1)
					require.True(t, h[0].Null("fromStatus"))
					require.Equal(t, tc.status, h[0].S("toStatus"))
				})
			}
			r := s.requireCode(t, admin, `mutation($p: ID!, $l: ID!) { createTask(input: {projectId: $p, title: "both", taskListId: $l, inEvaluationQueue: true}) { task { id } } }`,
				M{"p": project, "l": list}, "BAD_USER_INPUT")
			require.Equal(t, "inEvaluationQueue", r.ext("field"))
			// References must lie in the task's project.
			other := s.createProject(t, admin, "tasks-elsewhere")
			otherList := s.createList(t, admin, other, "elsewhere")
			otherTask := s.createTask(t, admin, other, "elsewhere", nil)
			for field, id := range map[string]string{"taskListId": otherList, "parentTaskId": otherTask, "supersedesTaskId": otherTask} {
				r = s.requireCode(t, admin, `mutation($in: CreateTaskInput!) { createTask(input: $in) { task { id } } }`,
					M{"in": M{"projectId": project, "title": "x", field: id}}, "NOT_FOUND")
				require.Equal(t, field, r.ext("field"))
			}
			s.requireCode(t, admin, `mutation($p: ID!) { createTask(input: {projectId: $p, title: "x"}) { task { id } } }`, M{"p": missingID("Project")}, "NOT_FOUND")
		})

		t.Run("display ids", func(t *testing.T) {
			for _, tc := range []struct{ slug, prefix string }{
				{"ab", "AB"},
				{"web-app-frontend-2", "WEBAPPFR"},
				{"x1-y2-z3", "X1Y2Z3"},
				{"abcdefghij", "ABCDEFGH"},
			} {
				p := s.createProject(t, admin, tc.slug)
				id := s.createTask(t, admin, p, "t", nil)
				require.Equal(t, "TU-"+tc.prefix+"-TSK-001", s.query(t, admin, `query($id: ID!) { task(id: $id) { displayId } }`, M{"id": id}).S("task.displayId"))
			}
			// Display ids are unique across projects: a slug whose <PROJECT>
			// part another project has gets that part cut short with a number.
			for _, tc := range []struct{ slug, prefix string }{
				{"abcdefgh", "ABCDEFG2"},
				{"abcdefgh-x", "ABCDEFG3"},
				{"a-b-c-d-e-f-g-h-i", "ABCDEFG4"},
				{"ab-2", "AB2"},
				{"ab2", "AB22"},
			} {
				p := s.createProject(t, admin, tc.slug)
				id := s.createTask(t, admin, p, "t", nil)
				require.Equal(t, "TU-"+tc.prefix+"-TSK-001", s.query(t, admin, `query($id: ID!) { task(id: $id) { displayId } }`, M{"id": id}).S("task.displayId"))
			}
			r := s.requireCode(t, admin, `mutation($s: String!) { createProject(input: {name: "n", slug: $s}) { project { id } } }`, M{"s": "ab"}, "CONFLICT")
			require.Equal(t, "slug", r.ext("field"))
			require.Contains(t, r.Errors[0].Message, "is taken")
			p := s.createProject(t, admin, "cats")
			codes := map[string]string{"FEATURE": "FEA", "BUG": "BUG", "TASK": "TSK", "REFACTOR": "REF", "TEST": "TST", "DOCS": "DOC", "RESEARCH": "RES", "INFRA": "INF"}
			for cat, code := range codes {
				for n := 1; n <= 2; n++ {
					d := s.query(t, admin, `mutation($p: ID!, $c: TaskCategory!) { createTask(input: {projectId: $p, title: "t", category: $c}) { task { displayId category } } }`,
						M{"p": p, "c": cat})
					require.Equal(t, fmt.Sprintf("TU-CATS-%s-%03d", code, n), d.S("createTask.task.displayId"))
					require.Equal(t, cat, d.S("createTask.task.category"))
				}
			}
			// Counters are per project.
			other := s.createProject(t, admin, "cats-two")
			id := s.createTask(t, admin, other, "t", M{"category": "BUG"})
			require.Equal(t, "TU-CATSTWO-BUG-001", s.query(t, admin, `query($id: ID!) { task(id: $id) { displayId } }`, M{"id": id}).S("task.displayId"))

			// Never reused: a task that changes category keeps its id, and the
			// counters move on.
			bug := s.query(t, admin, `query { task(displayId: "TU-CATS-BUG-002") { id displayId } }`, nil).S("task.id")
			d := s.query(t, admin, `mutation($id: ID!) { updateTask(input: {id: $id, category: FEATURE}) { task { displayId category } } }`, M{"id": bug})
			require.Equal(t, "TU-CATS-BUG-002", d.S("updateTask.task.displayId"))
			require.Equal(t, "FEATURE", d.S("updateTask.task.category"))
			next := s.createTask(t, admin, p, "t", M{"category": "BUG"})
			require.Equal(t, "TU-CATS-BUG-003", s.query(t, admin, `query($id: ID!) { task(id: $id) { displayId } }`, M{"id": next}).S("task.displayId"))
			next = s.createTask(t, admin, p, "t", M{"category": "FEATURE"})
			require.Equal(t, "TU-CATS-FEA-003", s.query(t, admin, `query($id: ID!) { task(id: $id) { displayId } }`, M{"id": next}).S("task.displayId"))

			// task(displayId:) finds it; an unknown display id is null.
			require.Equal(t, bug, s.query(t, admin, `{ task(displayId: "TU-CATS-BUG-002") { id } }`, nil).S("task.id"))
			require.True(t, s.query(t, admin, `{ task(displayId: "TU-CATS-BUG-999") { id } }`, nil).Null("task"))
		})

		t.Run("display ids under concurrency", func(t *testing.T) {
			p := s.createProject(t, admin, "race")
			const n = 30
			ids := make([]string, n)
			errs := make([]error, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r, err := s.post(admin, `mutation($p: ID!, $t: String!) { createTask(input: {projectId: $p, title: $t, category: BUG}) { task { displayId } } }`,
						M{"p": p, "t": fmt.Sprintf("concurrent %d", i)})
					switch {
					case err != nil:
						errs[i] = err
					case len(r.Errors) > 0:
						errs[i] = fmt.Errorf("%s: %s", r.code(), r.Errors[0].Message)
					default:
						var out struct {
							CreateTask struct{ Task struct{ DisplayID string } }
						}
						errs[i] = decodeJSON(bytesReader(r.Data), &out)
						ids[i] = out.CreateTask.Task.DisplayID
					}
				}()
			}
			wg.Wait()
			for i, err := range errs {
				require.NoError(t, err, "request %d", i)
			}
			sort.Strings(ids)
			want := make([]string, n)
			for i := range want {
				want[i] = fmt.Sprintf("TU-RACE-BUG-%03d", i+1)
			}
			require.Equal(t, want, ids, "30 distinct display ids, exactly 001..030")
			d := s.query(t, admin, `query($p: ID!) { tasks(projectId: $p) { totalCount } }`, M{"p": p})
			require.Equal(t, n, d.N("tasks.totalCount"))
		})

		t.Run("priority score", func(t *testing.T) {
			now := time.Now().UTC()
			for _, tc := range []struct {
				name     string
				input    M
				score    int
				quickWin bool
			}{
				{"P1", M{"priority": "P1"}, 100, false},
				{"P2", M{"priority": "P2"}, 70, false},
				{"P3", M{"priority": "P3"}, 40, false},
				{"P4", M{"priority": "P4"}, 10, false},
				{"quick win", M{"effort": "TRIVIAL"}, 55, true},
				{"small is no quick win", M{"effort": "SMALL"}, 40, false},
				{"overdue", M{"deadline": now.Add(-time.Hour)}, 80, false},
				{"due within 2 days", M{"deadline": now.Add(24 * time.Hour)}, 65, false},
				{"due within 7 days", M{"deadline": now.Add(5 * 24 * time.Hour)}, 50, false},
				{"due later", M{"deadline": now.Add(30 * 24 * time.Hour)}, 40, false},
				{"everything", M{"priority": "P2", "effort": "TRIVIAL", "deadline": now.Add(-time.Hour)}, 125, true},
			} {
				t.Run(tc.name, func(t *testing.T) {
					input := M{"projectId": project, "title": tc.name}
					for k, v := range tc.input {
						if tm, ok := v.(time.Time); ok {
							v = tm.Format(time.RFC3339)
						}
						input[k] = v
					}
					d := s.query(t, admin, `mutation($in: CreateTaskInput!) { createTask(input: $in) { task { id priorityScore isQuickWin } } }`, M{"in": input})
					require.Equal(t, tc.score, d.N("createTask.task.priorityScore"))
					require.Equal(t, tc.quickWin, d.B("createTask.task.isQuickWin"))
				})
			}
			// updateTask rescores.
			id := s.createTask(t, admin, project, "rescored", nil)
			d := s.query(t, admin, `mutation($id: ID!) { updateTask(input: {id: $id, priority: P1, effort: TRIVIAL}) { task { priorityScore isQuickWin } } }`, M{"id": id})
			require.Equal(t, 115, d.N("updateTask.task.priorityScore"))
			require.True(t, d.B("updateTask.task.isQuickWin"))
			d = s.query(t, admin, `mutation($id: ID!) { updateTask(input: {id: $id, effort: EPIC}) { task { priorityScore isQuickWin } } }`, M{"id": id})
			require.Equal(t, 100, d.N("updateTask.task.priorityScore"))
			require.False(t, d.B("updateTask.task.isQuickWin"))
		})

		t.Run("blocks count", func(t *testing.T) {
			x := s.createTask(t, admin, project, "X", nil)
			score := func() (int, int) {
				d := s.query(t, admin, `query($id: ID!) { task(id: $id) { blocksCount priorityScore } }`, M{"id": x})
				return d.N("task.blocksCount"), d.N("task.priorityScore")
			}
			var waiters []string
			for i := range 7 {
				waiters = append(waiters, s.createTask(t, admin, project, fmt.Sprintf("W%d", i), nil))
			}
			r0 := s.link(t, admin, waiters[0], x, "DEPENDS_ON") // W0 waits on X
			n, sc := score()
			require.Equal(t, 1, n)
			require.Equal(t, 50, sc)
			r1 := s.link(t, admin, x, waiters[1], "BLOCKS") // W1 waits on X
			n, sc = score()
			require.Equal(t, 2, n)
			require.Equal(t, 60, sc)
			// W1 waiting twice counts once: distinct tasks.
			s.link(t, admin, waiters[1], x, "DEPENDS_ON")
			n, _ = score()
			require.Equal(t, 2, n)
			// Links that do not make anyone wait do not count.
			s.link(t, admin, x, waiters[2], "DEPENDS_ON") // X waits on W2
			s.link(t, admin, waiters[3], x, "RELATED_TO")
			s.link(t, admin, waiters[3], x, "BLOCKS") // X waits on W3
			n, _ = score()
			require.Equal(t, 2, n)
			require.Equal(t, 1, s.query(t, admin, `query($id: ID!) { task(id: $id) { blocksCount } }`, M{"id": waiters[3]}).N("task.blocksCount"))
			for _, w := range waiters[4:] {
				s.link(t, admin, w, x, "DEPENDS_ON")
			}
			n, sc = score()
			require.Equal(t, 5, n)
			require.Equal(t, 90, sc)
			extra := s.createTask(t, admin, project, "W7", nil)
			s.link(t, admin, extra, x, "DEPENDS_ON")
			n, sc = score()
			require.Equal(t, 6, n)
			require.Equal(t, 90, sc, "the blocks bonus is at most +50")
			// Removing links recounts.
			for _, rel := range []string{r0, r1} {
				s.query(t, admin, `mutation($id: ID!) { removeTaskRelationship(input: {id: $id}) { removedRelationshipId } }`, M{"id": rel})
			}
			n, sc = score()
			require.Equal(t, 5, n, "W1 still waits through its DEPENDS_ON")
			require.Equal(t, 90, sc)
		})

		t.Run("updateTask", func(t *testing.T) {
			id := s.createTask(t, admin, project, "to update", nil)
			idea := s.query(t, admin, `mutation($p: ID!) { createIdea(input: {projectId: $p, name: "U", slug: "update-idea"}) { idea { id } } }`,
				M{"p": project}).S("createIdea.idea.id")
			parent := s.createTask(t, admin, project, "new parent", nil)
			old := s.createTask(t, admin, project, "superseded", nil)
			deadline := time.Now().Add(5 * 24 * time.Hour).UTC().Truncate(time.Second)
			d := s.query(t, admin, `mutation($in: UpdateTaskInput!) { updateTask(input: $in) { task { `+taskFields+` } } }`, M{"in": M{
				"id": id, "expectedVersion": 1, "title": "updated", "description": "new text", "category": "BUG", "priority": "P2",
				"effort": "SMALL", "riskLevel": "LOW", "owner": "HUMAN", "phase": "UI", "deadline": deadline.Format(time.RFC3339),
				"acceptanceCriteria": []string{"a"}, "codebaseTests": []string{"c"}, "apiTests": []string{"p"}, "uiTests": []string{"u"},
				"affectedFiles": []string{"f.go"}, "fileImpacts": []M{{"filePath": "f.go", "operation": "DELETE", "confidence": 0.25}},
				"ideaId": idea, "parentTaskId": parent, "supersedesTaskId": old, "actualEffortMinutes": 90,
				"embeddingModel": "text-embedding-3-small", "embedding": []float64{0.5, -1, 0.25},
			}})
			task := d.at("updateTask.task")
			require.Equal(t, 2, task.N("version"))
			require.Equal(t, "updated", task.S("title"))
			require.Equal(t, "new text", task.S("description"))
			require.Equal(t, "BUG", task.S("category"))
			require.Equal(t, "P2", task.S("priority"))
			require.Equal(t, "SMALL", task.S("effort"))
			require.Equal(t, "LOW", task.S("riskLevel"))
			require.Equal(t, "HUMAN", task.S("owner"))
			require.Equal(t, "UI", task.S("phase"))
			require.Equal(t, []string{"a"}, task.Strs("acceptanceCriteria"))
			require.Equal(t, []string{"c"}, task.Strs("codebaseTests"))
			require.Equal(t, []string{"p"}, task.Strs("apiTests"))
			require.Equal(t, []string{"u"}, task.Strs("uiTests"))
			require.Equal(t, []string{"f.go"}, task.Strs("affectedFiles"))
			require.Len(t, task.L("fileImpacts"), 1)
			require.Equal(t, "DELETE", task.S("fileImpacts.0.operation"))
			require.Equal(t, 0.25, task.F("fileImpacts.0.confidence"))
			require.Equal(t, idea, task.S("idea.id"))
			require.Equal(t, parent, task.S("parentTask.id"))
			require.Equal(t, old, task.S("supersedes.id"))
			require.Equal(t, 90, task.N("actualEffortMinutes"))
			require.Equal(t, "text-embedding-3-small", task.S("embeddingModel"))
			require.Len(t, task.L("embedding"), 3)
			require.Equal(t, -1.0, task.F("embedding.1"))
			require.Equal(t, 80, task.N("priorityScore"), "P2 + due within 7 days")
			require.NotEqual(t, task.S("createdAt"), task.S("updatedAt"))

			// Every successful update raises the version by one, with or without expectedVersion.
			for v := 3; v <= 5; v++ {
				d = s.query(t, admin, `mutation($id: ID!, $t: String!) { updateTask(input: {id: $id, title: $t}) { task { version title } } }`,
					M{"id": id, "t": fmt.Sprintf("v%d", v)})
				require.Equal(t, v, d.N("updateTask.task.version"))
			}
			d = s.query(t, admin, `mutation($id: ID!) { updateTask(input: {id: $id, expectedVersion: 5, title: "v6"}) { task { version } } }`, M{"id": id})
			require.Equal(t, 6, d.N("updateTask.task.version"))

			// A stale expectedVersion changes nothing and reports the current version.
			r := s.requireCode(t, admin, `mutation($id: ID!) { updateTask(input: {id: $id, expectedVersion: 2, title: "stale"}) { task { version } } }`,
				M{"id": id}, "VERSION_CONFLICT")
			require.EqualValues(t, 6, r.ext("currentVersion"))
			d = s.query(t, admin, `query($id: ID!) { task(id: $id) { version title } }`, M{"id": id})
			require.Equal(t, 6, d.N("task.version"))
			require.Equal(t, "v6", d.S("task.title"))

			// Compare-and-swap under concurrency: of several writers holding the
			// same version exactly one wins.
			const writers = 6
			codes := make([]string, writers)
			errs := make([]error, writers)
			var wg sync.WaitGroup
			for i := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r, err := s.post(admin, `mutation($id: ID!, $t: String!) { updateTask(input: {id: $id, expectedVersion: 6, title: $t}) { task { version } } }`,
						M{"id": id, "t": fmt.Sprintf("writer %d", i)})
					errs[i], codes[i] = err, r.code()
				}()
			}
			wg.Wait()
			wins := 0
			for i := range writers {
				require.NoError(t, errs[i])
				if codes[i] == "" {
					wins++
				} else {
					require.Equal(t, "VERSION_CONFLICT", codes[i])
				}
			}
			require.Equal(t, 1, wins)
			require.Equal(t, 7, s.query(t, admin, `query($id: ID!) { task(id: $id) { version } }`, M{"id": id}).N("task.version"))

			// Input errors name their field; unknown tasks are NOT_FOUND.
			r = s.requireCode(t, admin, `mutation($id: ID!) { updateTask(input: {id: $id, title: ""}) { task { id } } }`, M{"id": id}, "BAD_USER_INPUT")
			require.Equal(t, "title", r.ext("field"))
			r = s.requireCode(t, admin, `mutation($id: ID!) { updateTask(input: {id: $id, actualEffortMinutes: -1}) { task { id } } }`, M{"id": id}, "BAD_USER_INPUT")
			require.Equal(t, "actualEffortMinutes", r.ext("field"))
			r = s.requireCode(t, admin, `mutation($id: ID!) { updateTask(input: {id: $id, parentTaskId: $id}) { task { id } } }`, M{"id": id}, "BAD_USER_INPUT")
			require.Equal(t, "parentTaskId", r.ext("field"))
			s.requireCode(t, admin, `mutation($id: ID!) { updateTask(input: {id: $id, title: "x"}) { task { id } } }`, M{"id": missingID("Task")}, "NOT_FOUND")
		})

		t.Run("lifecycle", func(t *testing.T) {
			viewer := s.query(t, admin, `{ viewer { id } }`, nil).S("viewer.id")
			paths := [][]string{
				{"DRAFT", "EVALUATING", "PENDING", "IN_PROGRESS", "VALIDATING", "COMPLETED"},
				{"DRAFT", "PENDING", "BLOCKED", "PENDING", "IN_PROGRESS", "BLOCKED", "PENDING"},
				{"DRAFT", "PENDING", "IN_PROGRESS", "VALIDATING", "FAILED", "PENDING", "IN_PROGRESS", "VALIDATING", "FAILED", "BLOCKED"},
			}
			covered := map[string]bool{}
			for i, path := range paths {
				id := s.createTask(t, admin, project, fmt.Sprintf("path %d", i), nil)
				for j := 1; j < len(path); j++ {
					d := s.transition(t, admin, id, path[j])
					require.Equal(t, path[j], d.S("transitionTask.task.status"))
					require.Equal(t, path[j-1], d.S("transitionTask.stateChange.fromStatus"))
					require.Equal(t, path[j], d.S("transitionTask.stateChange.toStatus"))
					require.Equal(t, "test", d.S("transitionTask.stateChange.reason"))
					require.Equal(t, viewer, d.S("transitionTask.stateChange.changedBy"))
					covered[path[j-1]+"->"+path[j]] = true
				}
				d := s.query(t, admin, `query($id: ID!) { task(id: $id) { status startedAt completedAt
					stateHistory { id task { id } fromStatus toStatus reason changedBy changedAt } } }`, M{"id": id})
				h := d.L("task.stateHistory")
				require.Len(t, h, len(path), "one history row per change, plus creation")
				require.True(t, h[0].Null("fromStatus"))
				require.Equal(t, "DRAFT", h[0].S("toStatus"))
				require.Equal(t, "created", h[0].S("reason"))
				for j := 1; j < len(path); j++ {
					require.Equal(t, path[j-1], h[j].S("fromStatus"))
					require.Equal(t, path[j], h[j].S("toStatus"))
					require.Equal(t, "test", h[j].S("reason"))
					require.Equal(t, viewer, h[j].S("changedBy"))
					require.Equal(t, id, h[j].S("task.id"))
					require.GreaterOrEqual(t, h[j].S("changedAt"), h[j-1].S("changedAt"), "oldest first")
				}
				require.False(t, d.Null("task.startedAt"))
				require.Equal(t, path[len(path)-1] == "COMPLETED", !d.Null("task.completedAt"))
			}
			require.Len(t, covered, 12, "every user transition of the task lifecycle: %v", covered)

			// Every other move is refused, with from and to.
			allowed := map[string][]string{
				"DRAFT": {"EVALUATING", "PENDING"}, "EVALUATING": {"PENDING"}, "PENDING": {"IN_PROGRESS", "BLOCKED"},
				"BLOCKED": {"PENDING"}, "IN_PROGRESS": {"VALIDATING", "BLOCKED"}, "VALIDATING": {"COMPLETED", "FAILED"},
				"COMPLETED": {}, "FAILED": {"PENDING", "BLOCKED"},
			}
			reach := map[string][]string{
				"DRAFT": {}, "EVALUATING": {"EVALUATING"}, "PENDING": {"PENDING"}, "BLOCKED": {"PENDING", "BLOCKED"},
				"IN_PROGRESS": {"PENDING", "IN_PROGRESS"}, "VALIDATING": {"PENDING", "IN_PROGRESS", "VALIDATING"},
				"COMPLETED": {"PENDING", "IN_PROGRESS", "VALIDATING", "COMPLETED"}, "FAILED": {"PENDING", "IN_PROGRESS", "VALIDATING", "FAILED"},
			}
			statuses := []string{"DRAFT", "EVALUATING", "PENDING", "BLOCKED", "IN_PROGRESS", "VALIDATING", "COMPLETED", "FAILED"}
			for _, from := range statuses {
				id := s.createTask(t, admin, project, "from "+from, nil)
				for _, step := range reach[from] {
					s.transition(t, admin, id, step)
				}
				for _, to := range statuses {
					if contains(allowed[from], to) {
						continue
					}
					r := s.requireCode(t, admin, `mutation($id: ID!, $to: TaskStatus!) { transitionTask(input: {id: $id, to: $to}) { task { id } } }`,
						M{"id": id, "to": to}, "INVALID_TRANSITION")
					require.Equal(t, from, r.ext("from"), "%s -> %s", from, to)
					require.Equal(t, to, r.ext("to"), "%s -> %s", from, to)
				}
				d := s.query(t, admin, `query($id: ID!) { task(id: $id) { status stateHistory { id } } }`, M{"id": id})
				require.Equal(t, from, d.S("task.status"), "refused moves change nothing")
				require.Len(t, d.L("task.stateHistory"), len(reach[from])+1, "refused moves write no history")
			}

			// The engine-only moves are refused to users, with a message saying so.
			id := s.createTask(t, admin, project, "engine only", nil)
			s.transition(t, admin, id, "PENDING")
			s.transition(t, admin, id, "IN_PROGRESS")
			for _, to := range []string{"PENDING", "FAILED"} {
				r := s.requireCode(t, admin, `mutation($id: ID!, $to: TaskStatus!) { transitionTask(input: {id: $id, to: $to}) { task { id } } }`,
					M{"id": id, "to": to}, "INVALID_TRANSITION")
				require.Contains(t, r.Errors[0].Message, "engine")
				require.Equal(t, "IN_PROGRESS", r.ext("from"))
			}
			// COMPLETED is final.
			done := s.createTask(t, admin, project, "final", nil)
			for _, to := range []string{"PENDING", "IN_PROGRESS", "VALIDATING", "COMPLETED"} {
				s.transition(t, admin, done, to)
			}
			for _, to := range statuses {
				s.requireCode(t, admin, `mutation($id: ID!, $to: TaskStatus!) { transitionTask(input: {id: $id, to: $to}) { task { id } } }`,
					M{"id": done, "to": to}, "INVALID_TRANSITION")
			}
			s.requireCode(t, admin, `mutation($id: ID!) { transitionTask(input: {id: $id, to: PENDING}) { task { id } } }`, M{"id": missingID("Task")}, "NOT_FOUND")
		})

		t.Run("evaluation queue", func(t *testing.T) {
			p := s.createProject(t, admin, "queue")
			low := s.createTask(t, admin, p, "low", M{"inEvaluationQueue": true, "priority": "P4"})
			high := s.createTask(t, admin, p, "high", M{"inEvaluationQueue": true, "priority": "P1"})
			draft := s.createTask(t, admin, p, "draft", nil)
			// updateTask puts a DRAFT task into the queue: EVALUATING.
			d := s.query(t, admin, `mutation($id: ID!) { updateTask(input: {id: $id, inEvaluationQueue: true}) { task { status inEvaluationQueue stateHistory { toStatus } } } }`, M{"id": draft})
			require.Equal(t, "EVALUATING", d.S("updateTask.task.status"))
			require.True(t, d.B("updateTask.task.inEvaluationQueue"))
			q := s.query(t, admin, `query($p: ID!) { project(id: $p) { evaluationQueue { totalCount nodes { id } } } }`, M{"p": p})
			require.Equal(t, 3, q.N("project.evaluationQueue.totalCount"))
			require.Equal(t, []string{high, draft, low}, q.Col("project.evaluationQueue.nodes", "id"), "highest priority score first")
			// EVALUATING -> PENDING leaves the queue.
			s.transition(t, admin, high, "PENDING")
			d = s.query(t, admin, `query($id: ID!) { task(id: $id) { inEvaluationQueue } }`, M{"id": high})
			require.False(t, d.B("task.inEvaluationQueue"))
			q = s.query(t, admin, `query($p: ID!) { project(id: $p) { evaluationQueue { totalCount nodes { id } } } }`, M{"p": p})
			require.Equal(t, []string{draft, low}, q.Col("project.evaluationQueue.nodes", "id"))
			// DRAFT -> EVALUATING by transition enters it.
			other := s.createTask(t, admin, p, "other", nil)
			s.transition(t, admin, other, "EVALUATING")
			require.True(t, s.query(t, admin, `query($id: ID!) { task(id: $id) { inEvaluationQueue } }`, M{"id": other}).B("task.inEvaluationQueue"))
		})
	})
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
