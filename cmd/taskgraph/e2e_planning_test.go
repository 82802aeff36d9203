package main

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// planQuery asks for every field of a wave plan.
const planQuery = `query($id: ID!) { wavePlan(taskListId: $id) {
	waves { number tasks { id displayId } }
	conflicts { taskA { id } taskB { id } type filePath operations }
	criticalPath { tasks { id } estimatedHours }
	unplannable { task { id displayId } reason }
	totalTasks estimatedHours } }`

var planSlugs atomic.Int64

// planList is a project with one task list, and names for its tasks.
type planList struct {
	s       *testServer
	token   string
	project string
	list    string
	ids     map[string]string // name -> id
	names   map[string]string // id -> name
}

// newPlanList creates a project (a fresh slug and display-id code) with an empty list.
func newPlanList(t *testing.T, s *testServer) *planList {
	t.Helper()
	p := &planList{s: s, token: s.AdminToken, ids: map[string]string{}, names: map[string]string{}}
	p.project = s.createProject(t, p.token, fmt.Sprintf("pl%04d", planSlugs.Add(1)))
	p.list = s.createList(t, p.token, p.project, "plan")
	return p
}

// add creates a task in the list (PENDING) with extra input fields.
func (p *planList) add(t *testing.T, name string, extra M) string {
	t.Helper()
	in := M{"taskListId": p.list}
	for k, v := range extra {
		in[k] = v
	}
	return p.named(name, p.s.createTask(t, p.token, p.project, name, in))
}

// outside creates a task of the project in no list.
func (p *planList) outside(t *testing.T, name string, extra M) string {
	t.Helper()
	return p.named(name, p.s.createTask(t, p.token, p.project, name, extra))
}

func (p *planList) named(name, id string) string {
	p.ids[name], p.names[id] = id, name
	return id
}

func (p *planList) link(t *testing.T, a, b, typ string) {
	t.Helper()
	p.s.link(t, p.token, p.ids[a], p.ids[b], typ)
}

// complete walks a task through its lifecycle to COMPLETED.
func (p *planList) complete(t *testing.T, name string, from string) {
	t.Helper()
	path := []string{"PENDING", "IN_PROGRESS", "VALIDATING", "COMPLETED"}
	for i, st := range path {
		if i == 0 && from != "DRAFT" {
			continue
		}
		p.s.transition(t, p.token, p.ids[name], st)
	}
}

func (p *planList) plan(t *testing.T) jv {
	t.Helper()
	return p.s.query(t, p.token, planQuery, M{"id": p.list}).at("wavePlan")
}

// waves renders a plan's waves by task name, checking their numbers.
func (p *planList) waves(t *testing.T, plan jv) [][]string {
	t.Helper()
	out := [][]string{}
	for i, w := range plan.L("waves") {
		require.Equal(t, i+1, w.N("number"))
		out = append(out, p.namesOf(w.Col("tasks", "id")))
	}
	return out
}

func (p *planList) namesOf(ids []string) []string {
	out := []string{}
	for _, id := range ids {
		out = append(out, p.names[id])
	}
	return out
}

// TestWavePlan covers the wavePlan query: the planning rules of the API end to end.
func TestWavePlan(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		t.Run("design example", func(t *testing.T) {
			p := newPlanList(t, s)
			for _, n := range []string{"T1", "T2", "T3", "T4", "T5"} {
				p.add(t, n, nil)
			}
			p.link(t, "T3", "T1", "DEPENDS_ON")
			p.link(t, "T4", "T2", "DEPENDS_ON")
			p.link(t, "T5", "T3", "DEPENDS_ON")
			p.link(t, "T5", "T4", "DEPENDS_ON")
			plan := p.plan(t)
			require.Equal(t, [][]string{{"T1", "T2"}, {"T3", "T4"}, {"T5"}}, p.waves(t, plan))
			require.Empty(t, plan.L("conflicts"))
			require.Empty(t, plan.L("unplannable"))
			require.Equal(t, 5, plan.N("totalTasks"))
			require.Equal(t, 30.0, plan.F("estimatedHours"), "tasks without effort count as MEDIUM")
			require.Equal(t, []string{"T1", "T3", "T5"}, p.namesOf(plan.Col("criticalPath.tasks", "id")))
			require.Equal(t, 18.0, plan.F("criticalPath.estimatedHours"))
		})

		t.Run("conflict matrix", func(t *testing.T) {
			for _, c := range []struct {
				a, b     string
				conflict bool
			}{
				{"CREATE", "CREATE", true}, {"CREATE", "DELETE", true}, {"UPDATE", "UPDATE", true},
				{"UPDATE", "DELETE", true}, {"DELETE", "DELETE", true}, {"DELETE", "READ", true},
				{"READ", "READ", false}, {"CREATE", "UPDATE", false}, {"CREATE", "READ", false}, {"UPDATE", "READ", false},
			} {
				t.Run(c.a+"/"+c.b, func(t *testing.T) {
					p := newPlanList(t, s)
					// B is created first (smaller display id) but A has the higher
					// score, so A is placed first: the order is in either direction.
					p.add(t, "B", M{"fileImpacts": []M{{"filePath": "src/shared.go", "operation": c.b}, {"filePath": "src/b.go", "operation": "UPDATE"}}})
					p.add(t, "A", M{"priority": "P1", "fileImpacts": []M{{"filePath": "src/shared.go", "operation": c.a}}})
					p.add(t, "C", M{"fileImpacts": []M{{"filePath": "src/b.go", "operation": "READ"}}})
					plan := p.plan(t)
					if !c.conflict {
						require.Equal(t, [][]string{{"A", "B", "C"}}, p.waves(t, plan))
						require.Empty(t, plan.L("conflicts"))
						return
					}
					require.Equal(t, [][]string{{"A", "C"}, {"B"}}, p.waves(t, plan))
					cf := plan.L("conflicts")
					require.Len(t, cf, 1)
					require.Equal(t, "FILE_CONFLICT", cf[0].S("type"))
					require.Equal(t, "src/shared.go", cf[0].S("filePath"))
					require.Equal(t, "B", p.names[cf[0].S("taskA.id")], "taskA has the smaller display id")
					require.Equal(t, "A", p.names[cf[0].S("taskB.id")])
					require.Equal(t, []string{c.b, c.a}, cf[0].Strs("operations"))
				})
			}
		})

		t.Run("CONFLICTS_WITH", func(t *testing.T) {
			p := newPlanList(t, s)
			for _, n := range []string{"A", "B", "C"} {
				p.add(t, n, nil)
			}
			p.link(t, "B", "A", "CONFLICTS_WITH")
			plan := p.plan(t)
			require.Equal(t, [][]string{{"A", "C"}, {"B"}}, p.waves(t, plan))
			cf := plan.L("conflicts")
			require.Len(t, cf, 1)
			require.Equal(t, "RESOURCE_CONFLICT", cf[0].S("type"))
			require.True(t, cf[0].Null("filePath"))
			require.Empty(t, cf[0].L("operations"))
			require.Equal(t, []string{"A", "B"}, p.namesOf([]string{cf[0].S("taskA.id"), cf[0].S("taskB.id")}))
		})

		t.Run("BLOCKS is the reverse dependency", func(t *testing.T) {
			p := newPlanList(t, s)
			p.add(t, "A", M{"priority": "P4"})
			p.add(t, "B", M{"priority": "P1"})
			p.link(t, "A", "B", "BLOCKS")
			require.Equal(t, [][]string{{"A"}, {"B"}}, p.waves(t, p.plan(t)))
		})

		t.Run("priority decides who waits", func(t *testing.T) {
			p := newPlanList(t, s)
			p.add(t, "A", M{"fileImpacts": []M{{"filePath": "x", "operation": "UPDATE"}}})
			p.add(t, "B", M{"priority": "P1", "fileImpacts": []M{{"filePath": "x", "operation": "UPDATE"}}})
			p.add(t, "C", M{"priority": "P2"})
			require.Equal(t, [][]string{{"B", "C"}, {"A"}}, p.waves(t, p.plan(t)), "a wave lists its tasks by score")
		})

		t.Run("outside dependencies", func(t *testing.T) {
			p := newPlanList(t, s)
			p.add(t, "A", nil)
			p.add(t, "B", nil)
			p.add(t, "C", nil)
			p.outside(t, "X", nil) // DRAFT, in no list
			p.outside(t, "Y", nil)
			p.link(t, "A", "X", "DEPENDS_ON")
			p.link(t, "B", "A", "DEPENDS_ON")
			p.link(t, "Y", "C", "BLOCKS") // C waits on Y
			xDisplay := s.query(t, p.token, `query($id: ID!) { task(id: $id) { displayId } }`, M{"id": p.ids["X"]}).S("task.displayId")
			aDisplay := s.query(t, p.token, `query($id: ID!) { task(id: $id) { displayId } }`, M{"id": p.ids["A"]}).S("task.displayId")

			plan := p.plan(t)
			require.Empty(t, plan.L("waves"))
			require.Equal(t, 0, plan.N("totalTasks"))
			un := plan.L("unplannable")
			require.Equal(t, []string{"A", "B", "C"}, p.namesOf(plan.Col("unplannable", "task.id")))
			require.Equal(t, "depends on "+xDisplay+" (DRAFT), which is outside this list and not COMPLETED", un[0].S("reason"))
			require.Equal(t, "depends on "+aDisplay+", which cannot be planned", un[1].S("reason"))
			require.Contains(t, un[2].S("reason"), "outside this list and not COMPLETED")

			p.complete(t, "X", "DRAFT")
			plan = p.plan(t)
			require.Equal(t, [][]string{{"A"}, {"B"}}, p.waves(t, plan), "a COMPLETED outside dependency is met")
			require.Equal(t, []string{"C"}, p.namesOf(plan.Col("unplannable", "task.id")))

			// A task of another list is outside too.
			other := s.createList(t, p.token, p.project, "other")
			p.named("Z", s.createTask(t, p.token, p.project, "Z", M{"taskListId": other}))
			p.link(t, "A", "Z", "DEPENDS_ON")
			require.Equal(t, []string{"A", "B", "C"}, p.namesOf(p.plan(t).Col("unplannable", "task.id")))
		})

		t.Run("completed tasks are not planned", func(t *testing.T) {
			p := newPlanList(t, s)
			p.add(t, "A", M{"fileImpacts": []M{{"filePath": "x", "operation": "UPDATE"}}})
			p.add(t, "B", M{"fileImpacts": []M{{"filePath": "x", "operation": "UPDATE"}}})
			p.add(t, "C", nil)
			p.link(t, "B", "A", "DEPENDS_ON")
			p.link(t, "C", "A", "CONFLICTS_WITH")
			p.complete(t, "A", "PENDING")
			plan := p.plan(t)
			require.Equal(t, [][]string{{"B", "C"}}, p.waves(t, plan))
			require.Empty(t, plan.L("conflicts"))
			require.Empty(t, plan.L("unplannable"))
			require.Equal(t, 2, plan.N("totalTasks"))
		})

		t.Run("critical path", func(t *testing.T) {
			p := newPlanList(t, s)
			p.add(t, "A", M{"effort": "SMALL"})
			p.add(t, "B", M{"effort": "LARGE"})
			p.add(t, "C", M{"effort": "SMALL", "priority": "P1"})
			p.add(t, "D", M{"effort": "TRIVIAL"})
			p.add(t, "E", M{"effort": "EPIC", "priority": "P4"})
			p.link(t, "B", "A", "DEPENDS_ON")
			p.link(t, "C", "A", "DEPENDS_ON")
			p.link(t, "D", "B", "DEPENDS_ON")
			p.link(t, "C", "D", "BLOCKS")
			plan := p.plan(t)
			require.Equal(t, [][]string{{"A", "E"}, {"C", "B"}, {"D"}}, p.waves(t, plan))
			require.Equal(t, []string{"E"}, p.namesOf(plan.Col("criticalPath.tasks", "id")), "one EPIC task outweighs the chain")
			require.Equal(t, 40.0, plan.F("criticalPath.estimatedHours"))
			require.Equal(t, 2+16+2+0.5+40, plan.F("estimatedHours"))

			s.mustDo(t, p.token, `mutation($id: ID!) { updateTask(input: {id: $id, effort: SMALL}) { task { id } } }`, M{"id": p.ids["E"]}, nil)
			plan = p.plan(t)
			require.Equal(t, []string{"A", "B", "D"}, p.namesOf(plan.Col("criticalPath.tasks", "id")))
			require.Equal(t, 18.5, plan.F("criticalPath.estimatedHours"))
		})

		t.Run("empty list", func(t *testing.T) {
			p := newPlanList(t, s)
			plan := p.plan(t)
			require.Empty(t, plan.L("waves"))
			require.Empty(t, plan.L("criticalPath.tasks"))
			require.Equal(t, 0.0, plan.F("criticalPath.estimatedHours"))
		})

		t.Run("no side effects", func(t *testing.T) {
			p := newPlanList(t, s)
			p.add(t, "A", M{"fileImpacts": []M{{"filePath": "x", "operation": "UPDATE"}}})
			p.add(t, "B", M{"fileImpacts": []M{{"filePath": "x", "operation": "UPDATE"}}})
			p.add(t, "C", nil)
			p.outside(t, "X", nil)
			p.link(t, "C", "X", "DEPENDS_ON")
			snapshot := func() string {
				d := s.query(t, p.token, `query($l: ID!) { taskList(id: $l) { status updatedAt totalTasks
					tasks { nodes { id version updatedAt status priorityScore blocksCount stateHistory { toStatus }
						blocks { id } fileImpacts { id updatedAt } } } } }`, M{"l": p.list})
				return string(mustJSON(t, d.v))
			}
			before := snapshot()
			for range 3 {
				plan := p.plan(t)
				require.Len(t, plan.L("waves"), 2)
				require.Len(t, plan.L("unplannable"), 1)
			}
			require.Equal(t, before, snapshot())
		})

		t.Run("visibility", func(t *testing.T) {
			p := newPlanList(t, s)
			p.add(t, "A", nil)
			_, other := s.member(t, fmt.Sprintf("planner%d", planSlugs.Add(1)))
			r := s.requireCode(t, other, planQuery, M{"id": p.list}, "NOT_FOUND")
			require.Equal(t, "taskListId", r.ext("field"))
			require.True(t, r.dataIsNull())
			s.requireCode(t, p.token, planQuery, M{"id": missingID("TaskList")}, "NOT_FOUND")
			s.requireCode(t, p.token, planQuery, M{"id": p.ids["A"]}, "NOT_FOUND")
			s.requireCode(t, p.token, planQuery, M{"id": "not an id"}, "BAD_USER_INPUT")
			s.requireCode(t, "", planQuery, M{"id": p.list}, "UNAUTHENTICATED")
			// The owner of the project sees it, and so does an agent of the project.
			_, owner := s.member(t, fmt.Sprintf("owner%d", planSlugs.Add(1)))
			op := &planList{s: s, token: owner, ids: map[string]string{}, names: map[string]string{}}
			op.project = s.createProject(t, owner, fmt.Sprintf("pl%04d", planSlugs.Add(1)))
			op.list = s.createList(t, owner, op.project, "mine")
			op.add(t, "M", nil)
			require.Equal(t, [][]string{{"M"}}, op.waves(t, op.plan(t)))
			_, agent := s.userWithToken(t, fmt.Sprintf("agent%d", planSlugs.Add(1)), "AGENT", op.project)
			require.Len(t, s.query(t, agent, planQuery, M{"id": op.list}).L("wavePlan.waves"), 1)
			s.requireCode(t, agent, planQuery, M{"id": p.list}, "NOT_FOUND")
		})
	})
}

// seedPlanList creates a list of n tasks in one request, links them in a
// second (task i depends on task i/2, every seventh pair conflicts, the first
// task depends on a COMPLETED outside task and the last on an unfinished one),
// and returns the list id.
func seedPlanList(t *testing.T, s *testServer, n int) string {
	t.Helper()
	p := newPlanList(t, s)
	var doc strings.Builder
	doc.WriteString(`mutation($p: ID!, $l: ID!) {`)
	for i := range n {
		fmt.Fprintf(&doc, ` t%d: createTask(input: {projectId: $p, taskListId: $l, title: "t%d", effort: SMALL,
			fileImpacts: [{filePath: "src/f%d.go", operation: UPDATE}, {filePath: "go.mod", operation: READ}]}) { task { id } }`, i, i, i%5)
	}
	doc.WriteString(` done: createTask(input: {projectId: $p, title: "done"}) { task { id } }`)
	doc.WriteString(` open: createTask(input: {projectId: $p, title: "open"}) { task { id } } }`)
	d := s.query(t, p.token, doc.String(), M{"p": p.project, "l": p.list})
	id := func(alias string) string { return d.S(alias + ".task.id") }
	p.named("done", id("done"))
	p.complete(t, "done", "DRAFT")

	doc.Reset()
	doc.WriteString(`mutation {`)
	link := func(alias, a, b, typ string) {
		fmt.Fprintf(&doc, ` %s: addTaskRelationship(input: {sourceTaskId: %q, targetTaskId: %q, type: %s}) { relationship { id } }`,
			alias, a, b, typ)
	}
	for i := 1; i < n; i++ {
		link(fmt.Sprintf("d%d", i), id(fmt.Sprintf("t%d", i)), id(fmt.Sprintf("t%d", i/2)), "DEPENDS_ON")
		if i%7 == 0 {
			link(fmt.Sprintf("c%d", i), id(fmt.Sprintf("t%d", i)), id(fmt.Sprintf("t%d", i-1)), "CONFLICTS_WITH")
		}
	}
	link("o1", id("t0"), id("done"), "DEPENDS_ON")
	link("o2", id(fmt.Sprintf("t%d", n-1)), id("open"), "DEPENDS_ON")
	doc.WriteString(` }`)
	s.query(t, p.token, doc.String(), nil)
	return p.list
}

// TestWavePlanStatements: the plan of a list of 100 tasks costs as many SQL
// statements as that of 10, Task fields included (the loader is primed).
func TestWavePlanStatements(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		small, large := seedPlanList(t, s, 10), seedPlanList(t, s, 100)
		const q = `query($id: ID!) { wavePlan(taskListId: $id) {
			waves { number tasks { id displayId status priorityScore } }
			conflicts { taskA { id displayId } taskB { id displayId } type filePath operations }
			criticalPath { tasks { id displayId } estimatedHours }
			unplannable { task { id displayId } reason } totalTasks estimatedHours } }`
		count := func(list string) (int64, jv) {
			before := s.DB.Statements()
			d := s.query(t, s.AdminToken, q, M{"id": list})
			return s.DB.Statements() - before, d.at("wavePlan")
		}
		count(small) // warm the token's last-used mark
		nSmall, pSmall := count(small)
		nLarge, pLarge := count(large)
		require.Equal(t, 9, pSmall.N("totalTasks"), "the last task waits on an unfinished outside task")
		require.Equal(t, 99, pLarge.N("totalTasks"))
		require.Len(t, pLarge.L("unplannable"), 1)
		require.NotEmpty(t, pLarge.L("conflicts"))
		require.Equal(t, nSmall, nLarge, "statements for 10 tasks vs 100 tasks")
		// token, list, project, begin, tasks, file impacts, links, outside tasks, commit
		require.LessOrEqual(t, nLarge, int64(9))
		t.Logf("wavePlan: %d statements for 10 tasks, %d for 100", nSmall, nLarge)
	})
}
