package main

import (
	"encoding/base64"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/domain"
)

// pagingFixture is a project of twelve tasks that differ in everything the
// filters and orders look at.
type pagingFixture struct {
	project, list string
	ids           []string // by index below
}

func newPagingFixture(t *testing.T, s *testServer, token string) pagingFixture {
	t.Helper()
	f := pagingFixture{project: s.createProject(t, token, "paging")}
	f.list = s.createList(t, token, f.project, "list")
	now := time.Now().UTC()
	day := 24 * time.Hour
	specs := []M{
		0: {"title": "Alpha login bug", "category": "BUG", "priority": "P1", "description": "Users cannot LOG IN", "deadline": now.Add(day),
			"fileImpacts": []M{{"filePath": "src/auth.go", "operation": "UPDATE"}}},
		1: {"title": "Beta signup", "category": "FEATURE", "priority": "P2", "description": "new signup flow",
			"fileImpacts": []M{{"filePath": "src/auth.go", "operation": "READ"}, {"filePath": "web/signup.tsx", "operation": "CREATE"}}},
		2:  {"title": "Gamma refactor", "category": "REFACTOR", "priority": "P3", "deadline": now.Add(10 * day)},
		3:  {"title": "Delta docs", "category": "DOCS", "priority": "P4", "description": "document the Login page"},
		4:  {"title": "Epsilon tests", "category": "TEST", "priority": "P3", "effort": "TRIVIAL", "deadline": now.Add(-day)},
		5:  {"title": "Zeta infra", "category": "INFRA", "priority": "P2", "description": "terraform"},
		6:  {"title": "Eta research", "category": "RESEARCH", "priority": "P1", "deadline": now.Add(3 * day)},
		7:  {"title": "Theta task", "priority": "P3"},
		8:  {"title": "Iota bug", "category": "BUG", "priority": "P4", "description": "100% broken_thing"},
		9:  {"title": "Kappa feature", "category": "FEATURE", "priority": "P3", "inEvaluationQueue": true, "deadline": now.Add(10 * day)},
		10: {"title": "Lambda feature", "category": "FEATURE", "priority": "P1", "taskListId": f.list},
		11: {"title": "Mu task", "category": "TASK", "priority": "P2", "taskListId": f.list},
	}
	for _, spec := range specs {
		if d, ok := spec["deadline"].(time.Time); ok {
			spec["deadline"] = d.Format(time.RFC3339)
		}
		f.ids = append(f.ids, s.createTask(t, token, f.project, spec["title"].(string), spec))
	}
	s.transition(t, token, f.ids[0], "PENDING")
	s.transition(t, token, f.ids[1], "PENDING")
	s.transition(t, token, f.ids[1], "IN_PROGRESS")
	s.transition(t, token, f.ids[4], "PENDING")
	s.transition(t, token, f.ids[4], "BLOCKED")
	s.link(t, token, f.ids[2], f.ids[0], "DEPENDS_ON")
	s.link(t, token, f.ids[3], f.ids[1], "RELATED_TO")
	s.link(t, token, f.ids[5], f.ids[6], "BLOCKS")
	// The most recently updated are 7, then 3.
	s.query(t, token, `mutation($id: ID!) { updateTask(input: {id: $id, riskLevel: LOW}) { task { id } } }`, M{"id": f.ids[3]})
	s.query(t, token, `mutation($id: ID!) { updateTask(input: {id: $id, riskLevel: LOW}) { task { id } } }`, M{"id": f.ids[7]})
	return f
}

func (f pagingFixture) pick(idx ...int) []string {
	out := []string{}
	for _, i := range idx {
		out = append(out, f.ids[i])
	}
	return out
}

const pageFields = `totalCount pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
	edges { cursor node { id } } nodes { id displayId priorityScore createdAt updatedAt deadline }`

// TestTaskFiltersAndOrders covers every TaskFilter field and every order.
func TestTaskFiltersAndOrders(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		admin := s.AdminToken
		f := newPagingFixture(t, s, admin)

		t.Run("filters", func(t *testing.T) {
			for _, tc := range []struct {
				name   string
				filter M
				want   []string
			}{
				{"status", M{"status": []string{"PENDING"}}, f.pick(0, 10, 11)},
				{"statuses", M{"status": []string{"DRAFT", "BLOCKED"}}, f.pick(2, 3, 4, 5, 6, 7, 8)},
				{"status none", M{"status": []string{"COMPLETED"}}, nil},
				{"category", M{"category": []string{"FEATURE"}}, f.pick(1, 9, 10)},
				{"categories", M{"category": []string{"BUG", "DOCS"}}, f.pick(0, 3, 8)},
				{"priority", M{"priority": []string{"P1"}}, f.pick(0, 6, 10)},
				{"priorities", M{"priority": []string{"P4", "P2"}}, f.pick(1, 3, 5, 8, 11)},
				{"task list", M{"taskListId": f.list}, f.pick(10, 11)},
				{"task list of another kind of id", M{"taskListId": f.project}, nil},
				{"in evaluation queue", M{"inEvaluationQueue": true}, f.pick(9)},
				{"not in evaluation queue", M{"inEvaluationQueue": false}, f.pick(0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 11)},
				{"search title", M{"search": "login"}, f.pick(0, 3)},
				{"search description, any case", M{"search": "log in"}, f.pick(0)},
				{"search upper case", M{"search": "LOGIN PAGE"}, f.pick(3)},
				{"search percent is literal", M{"search": "100%"}, f.pick(8)},
				{"search underscore is literal", M{"search": "_"}, f.pick(8)},
				{"search title and description", M{"search": "signup"}, f.pick(1)},
				{"search blank matches all", M{"search": "   "}, f.ids},
				{"affects file", M{"affectsFile": "src/auth.go"}, f.pick(0, 1)},
				{"affects file exact path", M{"affectsFile": "src"}, nil},
				{"affects other file", M{"affectsFile": "web/signup.tsx"}, f.pick(1)},
				{"relationship DEPENDS_ON", M{"relationshipType": "DEPENDS_ON"}, f.pick(0, 2)},
				{"relationship BLOCKS", M{"relationshipType": "BLOCKS"}, f.pick(5, 6)},
				{"relationship RELATED_TO", M{"relationshipType": "RELATED_TO"}, f.pick(1, 3)},
				{"relationship none", M{"relationshipType": "SUBTASK_OF"}, nil},
				{"combined", M{"category": []string{"FEATURE"}, "priority": []string{"P1"}}, f.pick(10)},
				{"combined list and status", M{"status": []string{"PENDING"}, "taskListId": f.list, "search": "mu"}, f.pick(11)},
				{"combined queue and search", M{"search": "feature", "inEvaluationQueue": true}, f.pick(9)},
				{"empty filter", M{}, f.ids},
			} {
				t.Run(tc.name, func(t *testing.T) {
					d := s.query(t, admin, `query($p: ID!, $f: TaskFilter) {
						tasks(projectId: $p, filter: $f, first: 100) { totalCount nodes { id } }
						project(id: $p) { tasks(filter: $f, first: 100) { totalCount nodes { id } } } }`, M{"p": f.project, "f": tc.filter})
					require.ElementsMatch(t, tc.want, d.Col("tasks.nodes", "id"))
					require.Equal(t, len(tc.want), d.N("tasks.totalCount"))
					require.ElementsMatch(t, tc.want, d.Col("project.tasks.nodes", "id"), "Project.tasks filters alike")
					require.Equal(t, len(tc.want), d.N("project.tasks.totalCount"))
				})
			}
			r := s.requireCode(t, admin, `query($p: ID!) { tasks(projectId: $p, filter: {taskListId: "junk"}) { totalCount } }`, M{"p": f.project}, "BAD_USER_INPUT")
			require.Equal(t, "filter.taskListId", r.ext("field"))
		})

		t.Run("orders", func(t *testing.T) {
			for _, field := range []string{"PRIORITY_SCORE", "CREATED_AT", "UPDATED_AT", "DEADLINE", "DISPLAY_ID"} {
				for _, dir := range []string{"ASC", "DESC"} {
					t.Run(field+" "+dir, func(t *testing.T) {
						order := M{"field": field, "direction": dir}
						d := s.query(t, admin, `query($p: ID!, $o: TaskOrder) { tasks(projectId: $p, orderBy: $o, first: 100) { `+pageFields+` } }`,
							M{"p": f.project, "o": order})
						all := d.L("tasks.nodes")
						require.Len(t, all, len(f.ids))
						requireOrdered(t, all, field, dir == "DESC")
						// Paging forward and backward in pages of 5 sees the same
						// sequence, without duplicates or gaps.
						full := d.Col("tasks.nodes", "id")
						require.Equal(t, full, walkForward(t, s, admin, f.project, order, 5))
						require.Equal(t, full, walkBackward(t, s, admin, f.project, order, 5))
					})
				}
			}
			// The order of a few known tasks, as a sanity check of the key.
			d := s.query(t, admin, `query($p: ID!) { tasks(projectId: $p, orderBy: {field: UPDATED_AT, direction: DESC}, first: 2) { nodes { id } } }`, M{"p": f.project})
			require.Equal(t, f.pick(7, 3), d.Col("tasks.nodes", "id"))
			d = s.query(t, admin, `query($p: ID!) { tasks(projectId: $p, orderBy: {field: DEADLINE, direction: ASC}, first: 2) { nodes { id } } }`, M{"p": f.project})
			require.Equal(t, f.pick(4, 0), d.Col("tasks.nodes", "id"), "overdue first")
			d = s.query(t, admin, `query($p: ID!) { tasks(projectId: $p, orderBy: {field: PRIORITY_SCORE, direction: DESC}, first: 1) { nodes { id priorityScore } } }`, M{"p": f.project})
			require.Equal(t, f.ids[0], d.S("tasks.nodes.0.id"), "P1 due tomorrow with a waiting task: 100+10+25")
			require.Equal(t, 135, d.N("tasks.nodes.0.priorityScore"))
			d = s.query(t, admin, `query($p: ID!) { tasks(projectId: $p, first: 100) { nodes { id } } }`, M{"p": f.project})
			require.Equal(t, f.ids, d.Col("tasks.nodes", "id"), "default order: oldest first")
		})
	})
}

// requireOrdered checks that tasks are sorted by field (NULL deadlines last).
func requireOrdered(t *testing.T, tasks []jv, field string, desc bool) {
	t.Helper()
	key := func(n jv) string {
		switch field {
		case "PRIORITY_SCORE":
			return fmt.Sprintf("%06d", n.N("priorityScore"))
		case "CREATED_AT":
			return mustTime(t, n.S("createdAt"))
		case "UPDATED_AT":
			return mustTime(t, n.S("updatedAt"))
		case "DEADLINE":
			if n.Null("deadline") {
				return ""
			}
			return mustTime(t, n.S("deadline"))
		default:
			return n.S("displayId")
		}
	}
	seenNull := false
	for i := 1; i < len(tasks); i++ {
		a, b := key(tasks[i-1]), key(tasks[i])
		if field == "DEADLINE" {
			if a == "" {
				seenNull = true
			}
			require.False(t, seenNull && b != "", "NULL deadlines sort last")
			if a == "" || b == "" {
				continue
			}
		}
		if desc {
			require.GreaterOrEqual(t, a, b, "%s DESC at %d", field, i)
		} else {
			require.LessOrEqual(t, a, b, "%s ASC at %d", field, i)
		}
	}
}

// mustTime normalises an RFC 3339 time to a sortable string.
func mustTime(t *testing.T, s string) string {
	t.Helper()
	tm, err := time.Parse(time.RFC3339Nano, s)
	require.NoError(t, err)
	return tm.UTC().Format("2006-01-02T15:04:05.000000000")
}

// walkForward pages with first/after and returns the ids in order, checking
// pageInfo on the way.
func walkForward(t *testing.T, s *testServer, token, project string, order M, size int) []string {
	t.Helper()
	var ids []string
	var after any
	for page := 0; ; page++ {
		require.Less(t, page, 50, "paging does not end")
		d := s.query(t, token, `query($p: ID!, $o: TaskOrder, $n: Int, $a: String) { tasks(projectId: $p, orderBy: $o, first: $n, after: $a) { `+pageFields+` } }`,
			M{"p": project, "o": order, "n": size, "a": after})
		c := d.at("tasks")
		checkPage(t, c)
		require.Equal(t, page > 0, c.B("pageInfo.hasPreviousPage"), "hasPreviousPage on page %d", page)
		ids = append(ids, c.Col("nodes", "id")...)
		require.Equal(t, len(ids) < c.N("totalCount"), c.B("pageInfo.hasNextPage"), "hasNextPage on page %d", page)
		if !c.B("pageInfo.hasNextPage") {
			return ids
		}
		require.Len(t, c.L("nodes"), size)
		after = c.S("pageInfo.endCursor")
	}
}

// walkBackward pages with last/before from the end and returns the ids in
// forward order.
func walkBackward(t *testing.T, s *testServer, token, project string, order M, size int) []string {
	t.Helper()
	var pages [][]string
	var before any
	total := 0
	for page := 0; ; page++ {
		require.Less(t, page, 50, "paging does not end")
		d := s.query(t, token, `query($p: ID!, $o: TaskOrder, $n: Int, $b: String) { tasks(projectId: $p, orderBy: $o, last: $n, before: $b) { `+pageFields+` } }`,
			M{"p": project, "o": order, "n": size, "b": before})
		c := d.at("tasks")
		checkPage(t, c)
		require.Equal(t, page > 0, c.B("pageInfo.hasNextPage"), "hasNextPage on page %d", page)
		pages = append(pages, c.Col("nodes", "id"))
		total += len(c.L("nodes"))
		require.Equal(t, total < c.N("totalCount"), c.B("pageInfo.hasPreviousPage"), "hasPreviousPage on page %d", page)
		if !c.B("pageInfo.hasPreviousPage") {
			break
		}
		before = c.S("pageInfo.startCursor")
	}
	var ids []string
	for i := len(pages) - 1; i >= 0; i-- {
		ids = append(ids, pages[i]...)
	}
	return ids
}

// checkPage checks that edges and nodes agree and the cursors bracket the page.
func checkPage(t *testing.T, c jv) {
	t.Helper()
	nodes, edges := c.Col("nodes", "id"), c.Col("edges", "node.id")
	require.Equal(t, nodes, edges)
	if len(nodes) == 0 {
		require.True(t, c.Null("pageInfo.startCursor"))
		require.True(t, c.Null("pageInfo.endCursor"))
		return
	}
	cursors := c.Col("edges", "cursor")
	require.Equal(t, cursors[0], c.S("pageInfo.startCursor"))
	require.Equal(t, cursors[len(cursors)-1], c.S("pageInfo.endCursor"))
	seen := map[string]bool{}
	for _, cur := range cursors {
		require.False(t, seen[cur], "distinct cursors")
		seen[cur] = true
	}
}

// TestPaging covers Relay paging rules: default and maximum page sizes,
// cursors, pageInfo and totalCount, on root and nested connections.
func TestPaging(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		admin := s.AdminToken
		project := s.createProject(t, admin, "many")
		const n = 53
		var wg sync.WaitGroup
		errs := make([]error, n)
		sem := make(chan struct{}, 6)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				r, err := s.post(admin, `mutation($p: ID!, $t: String!) { createTask(input: {projectId: $p, title: $t}) { task { id } } }`,
					M{"p": project, "t": fmt.Sprintf("task %d", i)})
				if err == nil && len(r.Errors) > 0 {
					err = fmt.Errorf("%s", r.Errors[0].Message)
				}
				errs[i] = err
			}()
		}
		wg.Wait()
		for _, err := range errs {
			require.NoError(t, err)
		}

		t.Run("default page size 50", func(t *testing.T) {
			d := s.query(t, admin, `query($p: ID!) { tasks(projectId: $p) { totalCount pageInfo { hasNextPage } nodes { id } }
				project(id: $p) { tasks { totalCount pageInfo { hasNextPage } nodes { id } } } }`, M{"p": project})
			require.Len(t, d.L("tasks.nodes"), 50)
			require.True(t, d.B("tasks.pageInfo.hasNextPage"))
			require.Equal(t, n, d.N("tasks.totalCount"))
			require.Len(t, d.L("project.tasks.nodes"), 50)
			require.True(t, d.B("project.tasks.pageInfo.hasNextPage"))
			require.Equal(t, n, d.N("project.tasks.totalCount"))
			d = s.query(t, admin, `query($p: ID!) { tasks(projectId: $p, first: 100) { pageInfo { hasNextPage hasPreviousPage } nodes { id } } }`, M{"p": project})
			require.Len(t, d.L("tasks.nodes"), n)
			require.False(t, d.B("tasks.pageInfo.hasNextPage"))
			require.False(t, d.B("tasks.pageInfo.hasPreviousPage"))
		})

		t.Run("walk", func(t *testing.T) {
			order := M{"field": "CREATED_AT", "direction": "ASC"}
			fw := walkForward(t, s, admin, project, order, 7)
			require.Len(t, fw, n)
			seen := map[string]bool{}
			for _, id := range fw {
				require.False(t, seen[id], "no duplicates")
				seen[id] = true
			}
			require.Equal(t, fw, walkBackward(t, s, admin, project, order, 7))
			all := s.query(t, admin, `query($p: ID!) { tasks(projectId: $p, first: 100) { nodes { id } } }`, M{"p": project}).Col("tasks.nodes", "id")
			require.Equal(t, all, fw)
			// last without before is the end of the list.
			d := s.query(t, admin, `query($p: ID!) { tasks(projectId: $p, last: 3) { pageInfo { hasNextPage hasPreviousPage } nodes { id } } }`, M{"p": project})
			require.Equal(t, all[n-3:], d.Col("tasks.nodes", "id"))
			require.True(t, d.B("tasks.pageInfo.hasPreviousPage"))
			require.False(t, d.B("tasks.pageInfo.hasNextPage"))
			// A page in the middle, from both sides of one cursor.
			mid := s.query(t, admin, `query($p: ID!) { tasks(projectId: $p, first: 10) { edges { cursor } } }`, M{"p": project}).Col("tasks.edges", "cursor")[9]
			d = s.query(t, admin, `query($p: ID!, $c: String!) { after: tasks(projectId: $p, first: 2, after: $c) { nodes { id } }
				before: tasks(projectId: $p, last: 2, before: $c) { nodes { id } pageInfo { hasNextPage hasPreviousPage } } }`, M{"p": project, "c": mid})
			require.Equal(t, all[10:12], d.Col("after.nodes", "id"))
			require.Equal(t, all[7:9], d.Col("before.nodes", "id"))
			require.True(t, d.B("before.pageInfo.hasNextPage"))
			require.True(t, d.B("before.pageInfo.hasPreviousPage"))
			// first: 0 is an empty page.
			d = s.query(t, admin, `query($p: ID!) { tasks(projectId: $p, first: 0) { totalCount nodes { id } pageInfo { hasNextPage startCursor } } }`, M{"p": project})
			require.Empty(t, d.L("tasks.nodes"))
			require.Equal(t, n, d.N("tasks.totalCount"))
			// Nested connections page backward too.
			d = s.query(t, admin, `query($p: ID!) { project(id: $p) { tasks(last: 4) { nodes { id } } } }`, M{"p": project})
			require.Equal(t, all[n-4:], d.Col("project.tasks.nodes", "id"))
		})

		t.Run("limits and bad arguments", func(t *testing.T) {
			for _, q := range []string{
				`query($p: ID!) { tasks(projectId: $p, first: 101) { totalCount } }`,
				`query($p: ID!) { tasks(projectId: $p, last: 101) { totalCount } }`,
				`query($p: ID!) { project(id: $p) { tasks(first: 1000) { totalCount } } }`,
				`query($p: ID!) { project(id: $p) { ideas(first: 101) { totalCount } } }`,
				`query { projects(first: 101) { totalCount } }`,
				`query { taskTemplates(first: 101) { totalCount } }`,
			} {
				r := s.requireCode(t, admin, q, M{"p": project}, "LIMIT_EXCEEDED")
				require.NotEmpty(t, r.Errors[0].Message)
			}
			d := s.query(t, admin, `query($p: ID!) { tasks(projectId: $p, first: 100) { nodes { id } } }`, M{"p": project})
			require.Len(t, d.L("tasks.nodes"), n, "100 is allowed")

			for _, tc := range []struct {
				name, query, field string
			}{
				{"negative first", `query($p: ID!) { tasks(projectId: $p, first: -1) { totalCount } }`, "first"},
				{"first and last", `query($p: ID!) { tasks(projectId: $p, first: 1, last: 1) { totalCount } }`, "last"},
				{"garbage after", `query($p: ID!) { tasks(projectId: $p, after: "garbage!!") { totalCount } }`, "after"},
				{"garbage before", `query($p: ID!) { tasks(projectId: $p, last: 2, before: "Zm9v") { totalCount } }`, "before"},
				{"nested garbage", `query($p: ID!) { project(id: $p) { tasks(after: "xyz") { totalCount } } }`, "after"},
				{"json but not a cursor", `query($p: ID!) { tasks(projectId: $p, after: "` + base64.RawURLEncoding.EncodeToString([]byte(`{"x":1}`)) + `") { totalCount } }`, "after"},
				{"projects cursor", `query { projects(after: "nope") { totalCount } }`, "after"},
			} {
				t.Run(tc.name, func(t *testing.T) {
					r := s.requireCode(t, admin, tc.query, M{"p": project}, "BAD_USER_INPUT")
					require.Equal(t, tc.field, r.ext("field"))
				})
			}
			// A cursor of one order does not fit another.
			scoreCursor := s.query(t, admin, `query($p: ID!) { tasks(projectId: $p, orderBy: {field: PRIORITY_SCORE, direction: DESC}, first: 1) { pageInfo { endCursor } } }`,
				M{"p": project}).S("tasks.pageInfo.endCursor")
			r := s.requireCode(t, admin, `query($p: ID!, $c: String!) { tasks(projectId: $p, orderBy: {field: CREATED_AT, direction: ASC}, after: $c) { totalCount } }`,
				M{"p": project, "c": scoreCursor}, "BAD_USER_INPUT")
			require.Equal(t, "after", r.ext("field"))
		})

		t.Run("sorted ids", func(t *testing.T) {
			// DISPLAY_ID order is the order of the numbers: 001..053.
			d := s.query(t, admin, `query($p: ID!) { tasks(projectId: $p, orderBy: {field: DISPLAY_ID, direction: ASC}, first: 100) { nodes { displayId } } }`, M{"p": project})
			got := d.Col("tasks.nodes", "displayId")
			want := append([]string(nil), got...)
			sort.Strings(want)
			require.Equal(t, want, got)
			require.Equal(t, "TU-MANY-TSK-001", got[0])
			require.Equal(t, fmt.Sprintf("TU-MANY-TSK-%03d", n), got[n-1])
		})

		t.Run("sorted ids past 999", func(t *testing.T) {
			// Natural order, not text order: …-999 before …-1000.
			_, projectID, ok := domain.ParseGlobalID(project)
			require.True(t, ok)
			_, err := s.DB.SQL().Exec(`UPDATE display_id_counters SET last_value = 997
				WHERE project_id = $1 AND category = 'TASK'`, projectID)
			require.NoError(t, err)
			for i := range 4 {
				s.createTask(t, admin, project, fmt.Sprintf("late %d", i), nil)
			}
			const q = `query($p: ID!, $dir: OrderDirection!, $after: String) { tasks(projectId: $p,
				orderBy: {field: DISPLAY_ID, direction: $dir}, first: 2, after: $after) { nodes { displayId } pageInfo { endCursor } } }`
			desc := s.query(t, admin, q, M{"p": project, "dir": "DESC"}).at("tasks")
			require.Equal(t, []string{"TU-MANY-TSK-1001", "TU-MANY-TSK-1000"}, desc.Col("nodes", "displayId"))
			next := s.query(t, admin, q, M{"p": project, "dir": "DESC", "after": desc.S("pageInfo.endCursor")}).at("tasks")
			require.Equal(t, []string{"TU-MANY-TSK-999", "TU-MANY-TSK-998"}, next.Col("nodes", "displayId"))
			asc := s.query(t, admin, `query($p: ID!) { tasks(projectId: $p, orderBy: {field: DISPLAY_ID, direction: ASC}, first: 100) {
				nodes { displayId } } }`, M{"p": project}).Col("tasks.nodes", "displayId")
			require.Equal(t, []string{"TU-MANY-TSK-998", "TU-MANY-TSK-999", "TU-MANY-TSK-1000", "TU-MANY-TSK-1001"}, asc[len(asc)-4:])
		})
	})
}
