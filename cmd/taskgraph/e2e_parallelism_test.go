package main

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

const (
	analysisFields = `id canParallel conflictType conflictDetails files { filePath operations } analyzedAt invalidatedAt
		taskList { id } taskA { id } taskB { id }`
	analysisQuery = `query($id: ID!, $inv: Boolean, $first: Int, $after: String) { taskList(id: $id) {
		parallelismAnalysis(first: $first, after: $after, includeInvalidated: $inv) {
			totalCount pageInfo { hasNextPage endCursor } edges { cursor } nodes { ` + analysisFields + ` } } } }`
	conflictsQuery = `query($id: ID!) { task(id: $id) { conflicts { ` + analysisFields + ` } } }`
)

// analysisOf reads a list's parallelism analysis (current rows, or all).
func (e *execList) analysisOf(t *testing.T, includeInvalidated bool) jv {
	t.Helper()
	return e.s.query(t, e.token, analysisQuery, M{"id": e.list, "inv": includeInvalidated}).at("taskList.parallelismAnalysis")
}

// pairName names a row by its tasks' names, sorted: "T1+T2".
func (e *execList) pairName(row jv) string {
	names := []string{e.names[row.S("taskA.id")], e.names[row.S("taskB.id")]}
	slices.Sort(names)
	return names[0] + "+" + names[1]
}

// byPair indexes rows by pairName.
func (e *execList) byPair(t *testing.T, rows []jv) map[string]jv {
	t.Helper()
	out := map[string]jv{}
	for _, r := range rows {
		name := e.pairName(r)
		_, dup := out[name]
		require.False(t, dup, "two rows for %s", name)
		out[name] = r
	}
	return out
}

// conflictNames lists the pairs of a task's current conflicts.
func (e *execList) conflictNames(t *testing.T, task string) []string {
	t.Helper()
	out := []string{}
	for _, r := range e.s.query(t, e.token, conflictsQuery, M{"id": e.ids[task]}).L("task.conflicts") {
		require.True(t, r.Null("invalidatedAt"))
		out = append(out, e.pairName(r))
	}
	slices.Sort(out)
	return out
}

// TestParallelismAnalysis covers the analysis a run records: one row per
// conflicting pair (file, dependency, resource), its invalidation when a task's
// file impacts or planning links change, supersession by a newer plan, and
// that wavePlan writes nothing.
func TestParallelismAnalysis(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		e := newExecList(t, s, 3)
		impacts := func(fs ...string) []M {
			var out []M
			for i := 0; i < len(fs); i += 2 {
				out = append(out, M{"filePath": fs[i], "operation": fs[i+1]})
			}
			return out
		}
		e.add(t, "T1", M{"fileImpacts": impacts("a.go", "UPDATE", "b.go", "UPDATE")})
		e.add(t, "T2", M{"fileImpacts": impacts("a.go", "UPDATE", "b.go", "DELETE", "c.go", "READ")})
		e.add(t, "T3", M{"fileImpacts": impacts("c.go", "READ")}) // READ/READ with T2: safe
		e.add(t, "T4", nil)
		e.add(t, "T5", nil)
		e.link(t, "T3", "T1", "DEPENDS_ON")
		resource := s.link(t, e.token, e.ids["T4"], e.ids["T5"], "CONFLICTS_WITH")

		// The dry run writes nothing.
		require.NotEmpty(t, e.plan(t).L("conflicts"))
		require.Equal(t, 0, e.analysisOf(t, true).N("totalCount"))
		require.Empty(t, e.conflictNames(t, "T1"))

		run := e.start(t)
		cur := e.analysisOf(t, false)
		require.Equal(t, 3, cur.N("totalCount"))
		rows := e.byPair(t, cur.L("nodes"))
		require.Len(t, rows, 3)
		for name, r := range rows {
			require.False(t, r.B("canParallel"), name)
			require.True(t, r.Null("invalidatedAt"), name)
			require.Equal(t, e.list, r.S("taskList.id"), name)
			require.NotEmpty(t, r.S("analyzedAt"), name)
			require.NotEqual(t, r.S("taskA.id"), r.S("taskB.id"), name)
		}

		// T1+T2: one FILE_CONFLICT row naming both files, operations in (taskA, taskB) order.
		file := rows["T1+T2"]
		require.Equal(t, "FILE_CONFLICT", file.S("conflictType"))
		require.Equal(t, []string{"FILE_CONFLICT"}, file.Strs("conflictDetails.types"))
		opsOf := func(r jv, task, path string) string {
			for _, f := range r.L("files") {
				if f.S("filePath") == path {
					if r.S("taskA.id") == e.ids[task] {
						return f.S("operations.0")
					}
					return f.S("operations.1")
				}
			}
			t.Fatalf("no file %s in %v", path, r.v)
			return ""
		}
		require.Equal(t, []string{"a.go", "b.go"}, file.Col("files", "filePath"))
		require.Equal(t, []string{"a.go", "b.go"}, file.Col("conflictDetails.files", "filePath"))
		require.Equal(t, "UPDATE", opsOf(file, "T1", "a.go"))
		require.Equal(t, "UPDATE", opsOf(file, "T2", "a.go"))
		require.Equal(t, "UPDATE", opsOf(file, "T1", "b.go"))
		require.Equal(t, "DELETE", opsOf(file, "T2", "b.go"))
		require.Empty(t, file.L("conflictDetails.dependencies"))
		require.Empty(t, file.L("conflictDetails.resources"))

		// T1+T3: DEPENDENCY, naming the link and which task runs first (T1).
		dep := rows["T1+T3"]
		require.Equal(t, "DEPENDENCY", dep.S("conflictType"))
		require.Empty(t, dep.L("files"))
		link := dep.at("conflictDetails.dependencies.0")
		require.Equal(t, "DEPENDS_ON", link.S("relationshipType"))
		require.Equal(t, e.ids["T3"], link.S("sourceTaskId"))
		require.Equal(t, e.ids["T1"], link.S("targetTaskId"))
		want := "B_BEFORE_A"
		if dep.S("taskA.id") == e.ids["T1"] {
			want = "A_BEFORE_B"
		}
		require.Equal(t, want, link.S("order"))

		// T4+T5: RESOURCE_CONFLICT.
		res := rows["T4+T5"]
		require.Equal(t, "RESOURCE_CONFLICT", res.S("conflictType"))
		require.Equal(t, "CONFLICTS_WITH", res.S("conflictDetails.resources.0.relationshipType"))

		require.Equal(t, []string{"T1+T2", "T1+T3"}, e.conflictNames(t, "T1"))
		require.Equal(t, []string{"T1+T2"}, e.conflictNames(t, "T2"))
		require.Equal(t, []string{"T1+T3"}, e.conflictNames(t, "T3"))
		require.Equal(t, []string{"T4+T5"}, e.conflictNames(t, "T5"))

		// A row is a node, visible only to who sees the list.
		node := s.query(t, e.token, `query($id: ID!) { node(id: $id) { __typename id ... on ParallelismAnalysis { conflictType } } }`,
			M{"id": res.S("id")})
		require.Equal(t, "ParallelismAnalysis", node.S("node.__typename"))
		require.Equal(t, "RESOURCE_CONFLICT", node.S("node.conflictType"))
		_, stranger := s.member(t, fmt.Sprintf("pa%04d", planSlugs.Add(1)))
		require.True(t, s.query(t, stranger, `query($id: ID!) { node(id: $id) { id } }`, M{"id": res.S("id")}).Null("node"))
		require.True(t, s.query(t, stranger, analysisQuery, M{"id": e.list}).Null("taskList"))
		s.requireCode(t, e.token, analysisQuery, M{"id": e.list, "first": 101}, "LIMIT_EXCEEDED")

		// Same files and operations, another confidence: the analysis holds.
		s.query(t, e.token, `mutation($in: UpdateTaskInput!) { updateTask(input: $in) { task { id } } }`,
			M{"in": M{"id": e.ids["T2"], "fileImpacts": []M{{"filePath": "c.go", "operation": "READ", "confidence": 0.5},
				{"filePath": "b.go", "operation": "DELETE"}, {"filePath": "a.go", "operation": "UPDATE"}}}})
		// A link that does not plan (RELATED_TO) changes nothing either.
		s.link(t, e.token, e.ids["T1"], e.ids["T4"], "RELATED_TO")
		require.Equal(t, 3, e.analysisOf(t, false).N("totalCount"))

		// T1 no longer touches a.go: every current row of T1 is invalidated.
		s.query(t, e.token, `mutation($in: UpdateTaskInput!) { updateTask(input: $in) { task { id } } }`,
			M{"in": M{"id": e.ids["T1"], "fileImpacts": impacts("b.go", "UPDATE")}})
		require.Empty(t, e.conflictNames(t, "T1"))
		require.Empty(t, e.conflictNames(t, "T2"))
		require.Empty(t, e.conflictNames(t, "T3"))
		require.Equal(t, []string{"T4+T5"}, e.conflictNames(t, "T4"))
		cur = e.analysisOf(t, false)
		require.Equal(t, 1, cur.N("totalCount"))
		require.Equal(t, "T4+T5", e.pairName(cur.at("nodes.0")))
		all := e.byPair(t, e.analysisOf(t, true).L("nodes"))
		require.Len(t, all, 3)
		require.False(t, all["T1+T2"].Null("invalidatedAt"))
		require.False(t, all["T1+T3"].Null("invalidatedAt"))
		require.True(t, all["T4+T5"].Null("invalidatedAt"))

		// Removing the CONFLICTS_WITH link invalidates T4+T5.
		s.query(t, e.token, `mutation($id: ID!) { removeTaskRelationship(input: {id: $id}) { removedRelationshipId } }`,
			M{"id": resource})
		require.Empty(t, e.conflictNames(t, "T5"))
		require.Equal(t, 0, e.analysisOf(t, false).N("totalCount"))

		// A new plan is analysed afresh: T1 and T2 still clash on b.go.
		require.Equal(t, "CANCELLED", e.action(t, "cancelExecutionRun", run).S("status"))
		e.start(t)
		cur = e.analysisOf(t, false)
		rows = e.byPair(t, cur.L("nodes"))
		require.Len(t, rows, 2)
		require.Equal(t, []string{"b.go"}, rows["T1+T2"].Col("files", "filePath"))
		require.Equal(t, "DEPENDENCY", rows["T1+T3"].S("conflictType"))
		require.Equal(t, []string{"T1+T2", "T1+T3"}, e.conflictNames(t, "T1"))
		require.Equal(t, 5, e.analysisOf(t, true).N("totalCount"))

		// Paging: two rows at a time, through every row once.
		seen := map[string]bool{}
		var after any
		for {
			pg := s.query(t, e.token, analysisQuery, M{"id": e.list, "inv": true, "first": 2, "after": after}).
				at("taskList.parallelismAnalysis")
			for _, n := range pg.L("nodes") {
				require.False(t, seen[n.S("id")])
				seen[n.S("id")] = true
			}
			if !pg.B("pageInfo.hasNextPage") {
				break
			}
			after = pg.S("pageInfo.endCursor")
		}
		require.Len(t, seen, 5)
	})
}
