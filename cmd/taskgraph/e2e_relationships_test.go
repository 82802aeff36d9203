package main

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

var relationshipTypes = []string{"DEPENDS_ON", "BLOCKS", "RELATED_TO", "DUPLICATE_OF", "SUBTASK_OF", "SUPERSEDES",
	"IMPLEMENTS", "CONFLICTS_WITH", "ENABLES", "INSPIRED_BY", "TESTS"}

// TestRelationships covers addTaskRelationship and removeTaskRelationship
// with their rules (self-links, duplicates, cycles), the nested fields that
// read the graph, and task blocks.
func TestRelationships(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		admin := s.AdminToken
		project := s.createProject(t, admin, "graph")
		viewer := s.query(t, admin, `{ viewer { id } }`, nil).S("viewer.id")

		t.Run("every type", func(t *testing.T) {
			a := s.createTask(t, admin, project, "A", nil)
			for _, typ := range relationshipTypes {
				t.Run(typ, func(t *testing.T) {
					b := s.createTask(t, admin, project, "B "+typ, nil)
					d := s.query(t, admin, `mutation($s: ID!, $t: ID!, $type: RelationshipType!) {
						addTaskRelationship(input: {sourceTaskId: $s, targetTaskId: $t, type: $type, strength: 0.75, notes: "why"}) {
						relationship { id type source { id } target { id } strength notes createdAt createdBy { id } } } }`,
						M{"s": a, "t": b, "type": typ})
					rel := d.at("addTaskRelationship.relationship")
					require.Equal(t, typ, rel.S("type"))
					require.Equal(t, a, rel.S("source.id"))
					require.Equal(t, b, rel.S("target.id"))
					require.Equal(t, 0.75, rel.F("strength"))
					require.Equal(t, "why", rel.S("notes"))
					require.Equal(t, viewer, rel.S("createdBy.id"))
					// The link is visible from both ends and as a node.
					out := s.query(t, admin, `query($id: ID!, $type: RelationshipType!) { task(id: $id) { relationships(direction: OUTGOING, types: [$type]) { id } } }`,
						M{"id": a, "type": typ})
					require.Equal(t, []string{rel.S("id")}, out.Col("task.relationships", "id"))
					in := s.query(t, admin, `query($id: ID!) { task(id: $id) { relationships(direction: INCOMING) { id type } } }`, M{"id": b})
					require.Equal(t, []string{rel.S("id")}, in.Col("task.relationships", "id"))
					n := s.query(t, admin, `query($id: ID!) { node(id: $id) { id ... on TaskRelationship { type } } }`, M{"id": rel.S("id")})
					require.Equal(t, typ, n.S("node.type"))
					// Duplicates of (source, target, type) are refused.
					s.requireCode(t, admin, `mutation($s: ID!, $t: ID!, $type: RelationshipType!) {
						addTaskRelationship(input: {sourceTaskId: $s, targetTaskId: $t, type: $type}) { relationship { id } } }`,
						M{"s": a, "t": b, "type": typ}, "CONFLICT")
					// Self-links are refused.
					r := s.requireCode(t, admin, `mutation($s: ID!, $type: RelationshipType!) {
						addTaskRelationship(input: {sourceTaskId: $s, targetTaskId: $s, type: $type}) { relationship { id } } }`,
						M{"s": a, "type": typ}, "BAD_USER_INPUT")
					require.Equal(t, "targetTaskId", r.ext("field"))
				})
			}
			d := s.query(t, admin, `query($id: ID!) { task(id: $id) { relationships { type } } }`, M{"id": a})
			require.ElementsMatch(t, relationshipTypes, d.Col("task.relationships", "type"))
		})

		t.Run("input errors", func(t *testing.T) {
			a := s.createTask(t, admin, project, "A", nil)
			b := s.createTask(t, admin, project, "B", nil)
			r := s.requireCode(t, admin, `mutation($s: ID!, $t: ID!) { addTaskRelationship(input: {sourceTaskId: $s, targetTaskId: $t, type: RELATED_TO, strength: 1.5}) { relationship { id } } }`,
				M{"s": a, "t": b}, "BAD_USER_INPUT")
			require.Equal(t, "strength", r.ext("field"))
			other := s.createProject(t, admin, "graph-other")
			c := s.createTask(t, admin, other, "C", nil)
			r = s.requireCode(t, admin, `mutation($s: ID!, $t: ID!) { addTaskRelationship(input: {sourceTaskId: $s, targetTaskId: $t, type: RELATED_TO}) { relationship { id } } }`,
				M{"s": a, "t": c}, "BAD_USER_INPUT")
			require.Equal(t, "targetTaskId", r.ext("field"))
			r = s.requireCode(t, admin, `mutation($s: ID!) { addTaskRelationship(input: {sourceTaskId: $s, targetTaskId: "nope", type: RELATED_TO}) { relationship { id } } }`,
				M{"s": a}, "BAD_USER_INPUT")
			require.Equal(t, "targetTaskId", r.ext("field"))
			s.requireCode(t, admin, `mutation($s: ID!, $t: ID!) { addTaskRelationship(input: {sourceTaskId: $s, targetTaskId: $t, type: RELATED_TO}) { relationship { id } } }`,
				M{"s": a, "t": missingID("Task")}, "NOT_FOUND")
			s.requireCode(t, admin, `mutation($id: ID!) { removeTaskRelationship(input: {id: $id}) { removedRelationshipId } }`,
				M{"id": missingID("TaskRelationship")}, "NOT_FOUND")
		})

		t.Run("cycles", func(t *testing.T) {
			for _, tc := range []struct {
				name  string
				links [][3]int // source, target, type index into types
				types []string
				close [2]int
				typ   string
				cycle []int
			}{
				{name: "DEPENDS_ON two", links: [][3]int{{0, 1, 0}}, types: []string{"DEPENDS_ON"}, close: [2]int{1, 0}, typ: "DEPENDS_ON", cycle: []int{0, 1}},
				{name: "DEPENDS_ON three", links: [][3]int{{0, 1, 0}, {1, 2, 0}}, types: []string{"DEPENDS_ON"}, close: [2]int{2, 0}, typ: "DEPENDS_ON", cycle: []int{0, 1, 2}},
				{name: "BLOCKS reverses DEPENDS_ON", links: [][3]int{{0, 1, 0}}, types: []string{"DEPENDS_ON"}, close: [2]int{0, 1}, typ: "BLOCKS", cycle: []int{0, 1}},
				{name: "BLOCKS two", links: [][3]int{{0, 1, 0}}, types: []string{"BLOCKS"}, close: [2]int{1, 0}, typ: "BLOCKS", cycle: []int{0, 1}},
				{name: "BLOCKS then DEPENDS_ON", links: [][3]int{{0, 1, 0}, {1, 2, 0}}, types: []string{"BLOCKS"}, close: [2]int{0, 2}, typ: "DEPENDS_ON", cycle: []int{0, 1, 2}},
				{name: "mixed chain", links: [][3]int{{0, 1, 0}, {2, 1, 1}}, types: []string{"DEPENDS_ON", "BLOCKS"}, close: [2]int{0, 2}, typ: "BLOCKS", cycle: []int{0, 1, 2}},
				{name: "SUBTASK_OF", links: [][3]int{{0, 1, 0}, {1, 2, 0}}, types: []string{"SUBTASK_OF"}, close: [2]int{2, 0}, typ: "SUBTASK_OF", cycle: []int{0, 1, 2}},
				{name: "SUPERSEDES", links: [][3]int{{0, 1, 0}}, types: []string{"SUPERSEDES"}, close: [2]int{1, 0}, typ: "SUPERSEDES", cycle: []int{0, 1}},
			} {
				t.Run(tc.name, func(t *testing.T) {
					ids := []string{s.createTask(t, admin, project, "c0", nil), s.createTask(t, admin, project, "c1", nil), s.createTask(t, admin, project, "c2", nil)}
					for _, l := range tc.links {
						s.link(t, admin, ids[l[0]], ids[l[1]], tc.types[l[2]])
					}
					r := s.requireCode(t, admin, `mutation($s: ID!, $t: ID!, $type: RelationshipType!) {
						addTaskRelationship(input: {sourceTaskId: $s, targetTaskId: $t, type: $type}) { relationship { id } } }`,
						M{"s": ids[tc.close[0]], "t": ids[tc.close[1]], "type": tc.typ}, "CYCLE_DETECTED")
					cycle, ok := r.ext("cycle").([]any)
					require.True(t, ok, "extensions.cycle is a list: %v", r.Errors[0].Extensions)
					var want, got []string
					for _, i := range tc.cycle {
						want = append(want, ids[i])
					}
					for _, c := range cycle {
						got = append(got, c.(string))
					}
					require.ElementsMatch(t, want, got)
					// Nothing was written.
					d := s.query(t, admin, `query($id: ID!) { task(id: $id) { relationships { id } } }`, M{"id": ids[tc.close[0]]})
					n := 0
					for _, l := range tc.links {
						if l[0] == tc.close[0] || l[1] == tc.close[0] {
							n++
						}
					}
					require.Len(t, d.L("task.relationships"), n)
				})
			}
			// Links of the other types never close a cycle, and acyclic graphs
			// are separate: a SUBTASK_OF loop over DEPENDS_ON is fine.
			a, b := s.createTask(t, admin, project, "free a", nil), s.createTask(t, admin, project, "free b", nil)
			for _, typ := range []string{"RELATED_TO", "DUPLICATE_OF", "IMPLEMENTS", "CONFLICTS_WITH", "ENABLES", "INSPIRED_BY", "TESTS"} {
				s.link(t, admin, a, b, typ)
				s.link(t, admin, b, a, typ)
			}
			s.link(t, admin, a, b, "DEPENDS_ON")
			s.link(t, admin, b, a, "SUBTASK_OF")
			s.link(t, admin, b, a, "SUPERSEDES")
			// A parent set through updateTask is cycle-checked too.
			r := s.requireCode(t, admin, `mutation($id: ID!, $p: ID!) { updateTask(input: {id: $id, parentTaskId: $p}) { task { id } } }`,
				M{"id": a, "p": b}, "CYCLE_DETECTED")
			require.Equal(t, "parentTaskId", r.ext("field"))
		})

		t.Run("links mirror parentTask and supersedes", func(t *testing.T) {
			child, p1, p2 := s.createTask(t, admin, project, "child", nil), s.createTask(t, admin, project, "p1", nil), s.createTask(t, admin, project, "p2", nil)
			for _, tc := range []struct{ typ, field string }{{"SUBTASK_OF", "parentTask"}, {"SUPERSEDES", "supersedes"}} {
				rel := s.link(t, admin, child, p1, tc.typ)
				q := `query($id: ID!) { task(id: $id) { ` + tc.field + ` { id } } }`
				require.Equal(t, p1, s.query(t, admin, q, M{"id": child}).S("task."+tc.field+".id"), "%s sets %s", tc.typ, tc.field)
				// One parent, one superseded task: a second link is refused.
				r := s.requireCode(t, admin, `mutation($s: ID!, $t: ID!, $type: RelationshipType!) {
					addTaskRelationship(input: {sourceTaskId: $s, targetTaskId: $t, type: $type}) { relationship { id } } }`,
					M{"s": child, "t": p2, "type": tc.typ}, "CONFLICT")
				require.Equal(t, "sourceTaskId", r.ext("field"))
				require.Equal(t, p1, s.query(t, admin, q, M{"id": child}).S("task."+tc.field+".id"))
				// updateTask moves it, replacing the link.
				in := M{"id": child, "parentTaskId": p2}
				if tc.field == "supersedes" {
					in = M{"id": child, "supersedesTaskId": p2}
				}
				s.query(t, admin, `mutation($in: UpdateTaskInput!) { updateTask(input: $in) { task { id } } }`, M{"in": in})
				d := s.query(t, admin, `query($id: ID!, $type: RelationshipType!) { task(id: $id) { `+tc.field+` { id } relationships(direction: OUTGOING, types: [$type]) { id target { id } } } }`,
					M{"id": child, "type": tc.typ})
				require.Equal(t, p2, d.S("task."+tc.field+".id"))
				require.Equal(t, []string{p2}, d.Col("task.relationships", "target.id"))
				require.True(t, s.query(t, admin, `query($id: ID!) { node(id: $id) { id } }`, M{"id": rel}).Null("node"), "the old link is gone")
				// Removing the link clears the field.
				s.query(t, admin, `mutation($id: ID!) { removeTaskRelationship(input: {id: $id}) { removedRelationshipId } }`, M{"id": d.S("task.relationships.0.id")})
				require.True(t, s.query(t, admin, q, M{"id": child}).Null("task."+tc.field))
			}
		})

		t.Run("concurrent links", func(t *testing.T) {
			// Pairs linked both ways at once: exactly one direction wins.
			const pairs = 6
			ids := make([][2]string, pairs)
			for i := range ids {
				ids[i] = [2]string{s.createTask(t, admin, project, "p", nil), s.createTask(t, admin, project, "q", nil)}
			}
			codes := make([]string, 2*pairs)
			errs := make([]error, 2*pairs)
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i := range 2 * pairs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					pair := ids[i/2]
					src, dst := pair[i%2], pair[1-i%2]
					r, err := s.post(admin, `mutation($s: ID!, $t: ID!) { addTaskRelationship(input: {sourceTaskId: $s, targetTaskId: $t, type: DEPENDS_ON}) { relationship { id } } }`,
						M{"s": src, "t": dst})
					codes[i], errs[i] = r.code(), err
				}()
			}
			close(start)
			wg.Wait()
			for p := range pairs {
				require.NoError(t, errs[2*p])
				require.NoError(t, errs[2*p+1])
				got := []string{codes[2*p], codes[2*p+1]}
				require.ElementsMatch(t, []string{"", "CYCLE_DETECTED"}, got, "pair %d", p)
			}
			// Many tasks start waiting on one at once: the count is exact.
			hub := s.createTask(t, admin, project, "hub", nil)
			waiters := make([]string, 8)
			for i := range waiters {
				waiters[i] = s.createTask(t, admin, project, "waiter", nil)
			}
			concurrently(t, len(waiters), func(i int) (gqlResponse, error) {
				typ, src, dst := "DEPENDS_ON", waiters[i], hub
				if i%2 == 1 {
					typ, src, dst = "BLOCKS", hub, waiters[i]
				}
				return s.post(admin, `mutation($s: ID!, $t: ID!, $type: RelationshipType!) { addTaskRelationship(input: {sourceTaskId: $s, targetTaskId: $t, type: $type}) { relationship { id } } }`,
					M{"s": src, "t": dst, "type": typ})
			})
			d := s.query(t, admin, `query($id: ID!) { task(id: $id) { blocksCount priorityScore dependents { id } } }`, M{"id": hub})
			require.Equal(t, 8, d.N("task.blocksCount"))
			require.Equal(t, 90, d.N("task.priorityScore"))
			require.ElementsMatch(t, waiters, d.Col("task.dependents", "id"))
		})

		t.Run("nested fields", func(t *testing.T) {
			// epic <- SUBTASK_OF - sub1, sub2; api DEPENDS_ON db; db BLOCKS ui; new SUPERSEDES old
			epic := s.createTask(t, admin, project, "epic", nil)
			sub1 := s.createTask(t, admin, project, "sub1", M{"parentTaskId": epic})
			sub2 := s.createTask(t, admin, project, "sub2", nil)
			s.query(t, admin, `mutation($id: ID!, $p: ID!) { updateTask(input: {id: $id, parentTaskId: $p}) { task { id } } }`, M{"id": sub2, "p": epic})
			db := s.createTask(t, admin, project, "db", nil)
			api := s.createTask(t, admin, project, "api", nil)
			ui := s.createTask(t, admin, project, "ui", nil)
			depRel := s.link(t, admin, api, db, "DEPENDS_ON")
			blockRel := s.link(t, admin, db, ui, "BLOCKS")
			relRel := s.link(t, admin, db, api, "RELATED_TO")
			old := s.createTask(t, admin, project, "old", nil)
			newer := s.createTask(t, admin, project, "new", M{"supersedesTaskId": old})

			d := s.query(t, admin, `query($epic: ID!, $db: ID!, $api: ID!, $ui: ID!, $sub1: ID!, $new: ID!) {
				epic: task(id: $epic) { subtasks { id } relationships(direction: INCOMING, types: [SUBTASK_OF]) { source { id } } }
				sub1: task(id: $sub1) { parentTask { id subtasks { id } } }
				db: task(id: $db) { dependents { id } dependencies { id } blocksCount
					both: relationships { id } out: relationships(direction: OUTGOING) { id } in: relationships(direction: INCOMING) { id }
					typed: relationships(types: [BLOCKS, RELATED_TO]) { id } }
				api: task(id: $api) { dependencies { id title } dependents { id } }
				ui: task(id: $ui) { dependencies { id } dependents { id } relationships(direction: INCOMING) { type source { id } target { id } } }
				new: task(id: $new) { supersedes { id title supersedes { id } } }
			}`, M{"epic": epic, "db": db, "api": api, "ui": ui, "sub1": sub1, "new": newer})
			require.ElementsMatch(t, []string{sub1, sub2}, d.Col("epic.subtasks", "id"))
			require.Len(t, d.L("epic.relationships"), 2)
			require.Equal(t, epic, d.S("sub1.parentTask.id"))
			require.ElementsMatch(t, []string{sub1, sub2}, d.Col("sub1.parentTask.subtasks", "id"))
			require.ElementsMatch(t, []string{api, ui}, d.Col("db.dependents", "id"))
			require.Empty(t, d.L("db.dependencies"))
			require.Equal(t, 2, d.N("db.blocksCount"))
			require.ElementsMatch(t, []string{depRel, blockRel, relRel}, d.Col("db.both", "id"))
			require.ElementsMatch(t, []string{blockRel, relRel}, d.Col("db.out", "id"))
			require.ElementsMatch(t, []string{depRel}, d.Col("db.in", "id"))
			require.ElementsMatch(t, []string{blockRel, relRel}, d.Col("db.typed", "id"))
			require.Equal(t, []string{db}, d.Col("api.dependencies", "id"))
			require.Equal(t, "db", d.S("api.dependencies.0.title"))
			require.Empty(t, d.L("api.dependents"))
			require.Equal(t, []string{db}, d.Col("ui.dependencies", "id"))
			require.Empty(t, d.L("ui.dependents"))
			require.Equal(t, "BLOCKS", d.S("ui.relationships.0.type"))
			require.Equal(t, db, d.S("ui.relationships.0.source.id"))
			require.Equal(t, ui, d.S("ui.relationships.0.target.id"))
			require.Equal(t, old, d.S("new.supersedes.id"))
			require.True(t, d.Null("new.supersedes.supersedes"))

			// Removing links: the payload names both ends; the graph forgets it.
			rm := s.query(t, admin, `mutation($id: ID!) { removeTaskRelationship(input: {id: $id}) { removedRelationshipId source { id blocksCount } target { id blocksCount } } }`,
				M{"id": blockRel})
			require.Equal(t, blockRel, rm.S("removeTaskRelationship.removedRelationshipId"))
			require.Equal(t, db, rm.S("removeTaskRelationship.source.id"))
			require.Equal(t, 1, rm.N("removeTaskRelationship.source.blocksCount"))
			require.Equal(t, ui, rm.S("removeTaskRelationship.target.id"))
			require.True(t, s.query(t, admin, `query($id: ID!) { node(id: $id) { id } }`, M{"id": blockRel}).Null("node"))
			require.Empty(t, s.query(t, admin, `query($id: ID!) { task(id: $id) { dependencies { id } } }`, M{"id": ui}).L("task.dependencies"))
			s.requireCode(t, admin, `mutation($id: ID!) { removeTaskRelationship(input: {id: $id}) { removedRelationshipId } }`, M{"id": blockRel}, "NOT_FOUND")
			// The removed link no longer closes a cycle.
			s.link(t, admin, ui, db, "BLOCKS")
			// Removing the SUBTASK_OF link of a parent clears parentTask.
			sub1Rel := s.query(t, admin, `query($id: ID!) { task(id: $id) { relationships(direction: OUTGOING, types: [SUBTASK_OF]) { id } } }`, M{"id": sub1}).S("task.relationships.0.id")
			s.query(t, admin, `mutation($id: ID!) { removeTaskRelationship(input: {id: $id}) { removedRelationshipId } }`, M{"id": sub1Rel})
			d = s.query(t, admin, `query($id: ID!, $epic: ID!) { task(id: $id) { parentTask { id } } epic: task(id: $epic) { subtasks { id } } }`, M{"id": sub1, "epic": epic})
			require.True(t, d.Null("task.parentTask"))
			require.Equal(t, []string{sub2}, d.Col("epic.subtasks", "id"))
		})

		t.Run("blocks", func(t *testing.T) {
			task := s.createTask(t, admin, project, "blocked one", nil)
			blocker := s.createTask(t, admin, project, "blocker", nil)
			s.transition(t, admin, task, "PENDING")
			create := `mutation($id: ID!, $type: BlockType!, $reason: String!, $by: ID) {
				createTaskBlock(input: {taskId: $id, blockType: $type, reason: $reason, blockingTaskId: $by}) {
				block { id blockType reason blockingTask { id } isResolved resolvedAt resolvedBy resolutionNotes createdAt task { id } }
				task { id status } } }`
			d := s.query(t, admin, create, M{"id": task, "type": "DEPENDENCY", "reason": "waits for the blocker", "by": blocker})
			b1 := d.at("createTaskBlock.block")
			require.Equal(t, "DEPENDENCY", b1.S("blockType"))
			require.Equal(t, "waits for the blocker", b1.S("reason"))
			require.Equal(t, blocker, b1.S("blockingTask.id"))
			require.Equal(t, task, b1.S("task.id"))
			require.False(t, b1.B("isResolved"))
			require.True(t, b1.Null("resolvedAt"))
			require.Equal(t, "BLOCKED", d.S("createTaskBlock.task.status"))
			d = s.query(t, admin, create, M{"id": task, "type": "MANUAL", "reason": "needs a decision"})
			b2 := d.at("createTaskBlock.block")
			require.True(t, b2.Null("blockingTask"))
			require.Equal(t, "BLOCKED", d.S("createTaskBlock.task.status"))

			resolve := `mutation($id: ID!, $notes: String) { resolveTaskBlock(input: {id: $id, notes: $notes}) {
				block { id isResolved resolvedAt resolvedBy resolutionNotes } task { id status } } }`
			d = s.query(t, admin, resolve, M{"id": b1.S("id"), "notes": "done"})
			require.True(t, d.B("resolveTaskBlock.block.isResolved"))
			require.False(t, d.Null("resolveTaskBlock.block.resolvedAt"))
			require.Equal(t, viewer, d.S("resolveTaskBlock.block.resolvedBy"))
			require.Equal(t, "done", d.S("resolveTaskBlock.block.resolutionNotes"))
			require.Equal(t, "BLOCKED", d.S("resolveTaskBlock.task.status"), "one block is still open")
			d = s.query(t, admin, resolve, M{"id": b2.S("id")})
			require.Equal(t, "PENDING", d.S("resolveTaskBlock.task.status"), "the last open block resolved")
			s.requireCode(t, admin, resolve, M{"id": b2.S("id")}, "CONFLICT")
			s.requireCode(t, admin, resolve, M{"id": missingID("TaskBlock")}, "NOT_FOUND")

			d = s.query(t, admin, `query($id: ID!) { task(id: $id) { status all: blocks { id isResolved } open: blocks(includeResolved: false) { id }
				stateHistory { fromStatus toStatus reason } } }`, M{"id": task})
			require.ElementsMatch(t, []string{b1.S("id"), b2.S("id")}, d.Col("task.all", "id"))
			require.Empty(t, d.L("task.open"))
			h := d.L("task.stateHistory")
			require.Equal(t, "BLOCKED", h[2].S("toStatus"))
			require.Equal(t, "waits for the blocker", h[2].S("reason"))
			require.Equal(t, "PENDING", h[3].S("toStatus"))
			require.Len(t, h, 4, "created, PENDING, BLOCKED once, PENDING")

			// A DRAFT task records the block and keeps its status.
			draft := s.createTask(t, admin, project, "draft", nil)
			d = s.query(t, admin, create, M{"id": draft, "type": "VALIDATION", "reason": "r"})
			require.Equal(t, "DRAFT", d.S("createTaskBlock.task.status"))
			open := s.query(t, admin, `query($id: ID!) { task(id: $id) { blocks(includeResolved: false) { id } } }`, M{"id": draft})
			require.Len(t, open.L("task.blocks"), 1)
			r := s.requireCode(t, admin, create, M{"id": draft, "type": "MANUAL", "reason": " "}, "BAD_USER_INPUT")
			require.Equal(t, "reason", r.ext("field"))
			r = s.requireCode(t, admin, create, M{"id": draft, "type": "MANUAL", "reason": "self", "by": draft}, "BAD_USER_INPUT")
			require.Equal(t, "blockingTaskId", r.ext("field"))
		})
	})
}
