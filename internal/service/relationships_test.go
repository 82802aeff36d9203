package service_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/service"
)

func TestRelationshipRules(t *testing.T) {
	run(t, func(t *testing.T, b *bundle) {
		a, c := b.createTask("a"), b.createTask("c")
		r := b.mustLink(a, c, domain.RelDependsOn)
		require.Equal(t, a.ID, r.SourceTaskID)
		require.Equal(t, c.ID, r.TargetTaskID)
		require.Equal(t, b.owner.UserID, *r.CreatedByID)
		require.True(t, at(0).Equal(r.CreatedAt))

		_, err := b.link(a, c, domain.RelDependsOn)
		requireCode(t, err, domain.CodeConflict, "type")
		_, err = b.link(a, a, domain.RelRelatedTo)
		requireCode(t, err, domain.CodeBadUserInput, "targetTaskId")
		_, err = b.link(a, a, domain.RelDependsOn)
		requireCode(t, err, domain.CodeBadUserInput, "targetTaskId")

		_, err = b.svc.Tasks.AddTaskRelationship(as(b.owner), domain.AddTaskRelationshipInput{SourceTaskID: a.GlobalID(),
			TargetTaskID: c.GlobalID(), Type: domain.RelRelatedTo, Strength: ptr(1.01)})
		requireCode(t, err, domain.CodeBadUserInput, "strength")
		_, err = b.svc.Tasks.AddTaskRelationship(as(b.owner), domain.AddTaskRelationshipInput{SourceTaskID: a.GlobalID(),
			TargetTaskID: "garbage", Type: domain.RelRelatedTo})
		requireCode(t, err, domain.CodeBadUserInput, "targetTaskId")

		foreign := b.createProject(b.owner, "foreign")
		stray, err := b.svc.Tasks.CreateTask(as(b.owner), domain.CreateTaskInput{ProjectID: foreign.GlobalID(), Title: "stray"})
		require.NoError(t, err)
		_, err = b.link(a, stray, domain.RelRelatedTo)
		requireCode(t, err, domain.CodeBadUserInput, "targetTaskId")

		withNotes, err := b.svc.Tasks.AddTaskRelationship(as(b.owner), domain.AddTaskRelationshipInput{SourceTaskID: c.GlobalID(),
			TargetTaskID: a.GlobalID(), Type: domain.RelConflictsWith, Strength: ptr(0.5), Notes: ptr(" same file ")})
		require.NoError(t, err)
		require.Equal(t, 0.5, *withNotes.Strength)
		require.Equal(t, "same file", *withNotes.Notes)

		rels, err := b.svc.Tasks.Relationships(as(b.owner), a.ID, domain.DirectionOutgoing, nil)
		require.NoError(t, err)
		require.Len(t, rels, 1)
		rels, err = b.svc.Tasks.Relationships(as(b.owner), a.ID, domain.DirectionBoth, []domain.RelationshipType{domain.RelConflictsWith})
		require.NoError(t, err)
		require.Len(t, rels, 1)
		rels, err = b.svc.Tasks.Relationships(as(b.owner), a.ID, domain.DirectionIncoming, nil)
		require.NoError(t, err)
		require.Len(t, rels, 1)

		// removing and adding again works; the removed link's id is gone
		removed, err := b.svc.Tasks.RemoveTaskRelationship(as(b.owner), domain.RemoveTaskRelationshipInput{ID: r.GlobalID()})
		require.NoError(t, err)
		require.Equal(t, r.ID, removed.ID)
		_, err = b.svc.Tasks.RemoveTaskRelationship(as(b.owner), domain.RemoveTaskRelationshipInput{ID: r.GlobalID()})
		requireCode(t, err, domain.CodeNotFound)
		b.mustLink(a, c, domain.RelDependsOn)
	})
}

func TestCycleDetection(t *testing.T) {
	type edge struct {
		source, target int
		typ            domain.RelationshipType
	}
	tests := []struct {
		name      string
		existing  []edge
		add       edge
		cycle     []int // task indexes on the cycle, as reported; nil = allowed
		allowedOK bool
	}{
		{"DEPENDS_ON two", []edge{{0, 1, domain.RelDependsOn}}, edge{1, 0, domain.RelDependsOn}, []int{1, 0}, false},
		{"DEPENDS_ON three", []edge{{0, 1, domain.RelDependsOn}, {1, 2, domain.RelDependsOn}},
			edge{2, 0, domain.RelDependsOn}, []int{2, 0, 1}, false},
		{"BLOCKS is the reverse of DEPENDS_ON", []edge{{0, 1, domain.RelDependsOn}},
			edge{0, 1, domain.RelBlocks}, []int{1, 0}, false},
		{"DEPENDS_ON closing a BLOCKS chain", []edge{{0, 1, domain.RelBlocks}, {1, 2, domain.RelBlocks}},
			edge{0, 2, domain.RelDependsOn}, []int{0, 2, 1}, false},
		{"BLOCKS both ways", []edge{{0, 1, domain.RelBlocks}}, edge{1, 0, domain.RelBlocks}, []int{0, 1}, false},
		{"SUBTASK_OF", []edge{{0, 1, domain.RelSubtaskOf}, {1, 2, domain.RelSubtaskOf}},
			edge{2, 0, domain.RelSubtaskOf}, []int{2, 0, 1}, false},
		{"SUPERSEDES", []edge{{0, 1, domain.RelSupersedes}}, edge{1, 0, domain.RelSupersedes}, []int{1, 0}, false},

		{"same direction DEPENDS_ON and BLOCKS", []edge{{0, 1, domain.RelDependsOn}}, edge{1, 0, domain.RelBlocks}, nil, true},
		{"a diamond is no cycle", []edge{{0, 1, domain.RelDependsOn}, {0, 2, domain.RelDependsOn}, {1, 3, domain.RelDependsOn}},
			edge{2, 3, domain.RelDependsOn}, nil, true},
		{"graphs are separate: SUBTASK_OF vs DEPENDS_ON", []edge{{0, 1, domain.RelSubtaskOf}}, edge{1, 0, domain.RelDependsOn}, nil, true},
		{"graphs are separate: SUPERSEDES vs SUBTASK_OF", []edge{{0, 1, domain.RelSupersedes}}, edge{1, 0, domain.RelSubtaskOf}, nil, true},
		{"RELATED_TO both ways", []edge{{0, 1, domain.RelRelatedTo}}, edge{1, 0, domain.RelRelatedTo}, nil, true},
		{"CONFLICTS_WITH both ways", []edge{{0, 1, domain.RelConflictsWith}}, edge{1, 0, domain.RelConflictsWith}, nil, true},
		{"ENABLES both ways", []edge{{0, 1, domain.RelEnables}}, edge{1, 0, domain.RelEnables}, nil, true},
		{"DUPLICATE_OF both ways", []edge{{0, 1, domain.RelDuplicateOf}}, edge{1, 0, domain.RelDuplicateOf}, nil, true},
		{"TESTS both ways", []edge{{0, 1, domain.RelTests}}, edge{1, 0, domain.RelTests}, nil, true},
	}
	run(t, func(t *testing.T, b *bundle) {
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				var tasks []*domain.Task
				for i := range 4 {
					tasks = append(tasks, b.createTask(tc.name+" "+string(rune('a'+i))))
				}
				for _, e := range tc.existing {
					b.mustLink(tasks[e.source], tasks[e.target], e.typ)
				}
				_, err := b.link(tasks[tc.add.source], tasks[tc.add.target], tc.add.typ)
				if tc.allowedOK {
					require.NoError(t, err)
					return
				}
				e := requireCode(t, err, domain.CodeCycleDetected, "type")
				want := make([]string, len(tc.cycle))
				for i, n := range tc.cycle {
					want[i] = tasks[n].GlobalID()
				}
				require.Equal(t, want, e.Details["cycle"])
				rels, err := b.svc.Tasks.Relationships(as(b.owner), tasks[tc.add.source].ID, domain.DirectionBoth, []domain.RelationshipType{tc.add.typ})
				require.NoError(t, err)
				for _, r := range rels {
					require.False(t, r.SourceTaskID == tasks[tc.add.source].ID && r.TargetTaskID == tasks[tc.add.target].ID,
						"the refused link was not written")
				}
			})
		}
	})
}

func TestParentAndSupersedesAreLinks(t *testing.T) {
	run(t, func(t *testing.T, b *bundle) {
		parent := b.createTask("parent")
		child := b.createTask("child", func(in *domain.CreateTaskInput) { in.ParentTaskID = ptr(parent.GlobalID()) })
		require.Equal(t, parent.ID, *child.ParentTaskID)
		subs, err := b.svc.Tasks.Linked(as(b.owner), parent.ID, service.SubtaskLinks)
		require.NoError(t, err)
		require.Len(t, subs, 1)
		require.Equal(t, child.ID, subs[0].ID)

		// making the parent a subtask of its child would close a SUBTASK_OF cycle
		_, err = b.svc.Tasks.UpdateTask(as(b.owner), domain.UpdateTaskInput{ID: parent.GlobalID(), ParentTaskID: ptr(child.GlobalID())})
		e := requireCode(t, err, domain.CodeCycleDetected, "parentTaskId")
		require.Equal(t, []string{parent.GlobalID(), child.GlobalID()}, e.Details["cycle"])
		require.Nil(t, b.reload(parent).ParentTaskID)
		_, err = b.svc.Tasks.UpdateTask(as(b.owner), domain.UpdateTaskInput{ID: parent.GlobalID(), ParentTaskID: ptr(parent.GlobalID())})
		requireCode(t, err, domain.CodeBadUserInput, "parentTaskId")

		// re-parenting replaces the link
		other := b.createTask("other parent")
		up, err := b.svc.Tasks.UpdateTask(as(b.owner), domain.UpdateTaskInput{ID: child.GlobalID(), ParentTaskID: ptr(other.GlobalID())})
		require.NoError(t, err)
		require.Equal(t, other.ID, *up.ParentTaskID)
		subs, err = b.svc.Tasks.Linked(as(b.owner), parent.ID, service.SubtaskLinks)
		require.NoError(t, err)
		require.Empty(t, subs)

		// removing the SUBTASK_OF link clears the mirrored reference
		rels, err := b.svc.Tasks.Relationships(as(b.owner), child.ID, domain.DirectionOutgoing, []domain.RelationshipType{domain.RelSubtaskOf})
		require.NoError(t, err)
		require.Len(t, rels, 1)
		_, err = b.svc.Tasks.RemoveTaskRelationship(as(b.owner), domain.RemoveTaskRelationshipInput{ID: rels[0].GlobalID()})
		require.NoError(t, err)
		require.Nil(t, b.reload(child).ParentTaskID)

		newer := b.createTask("v2", func(in *domain.CreateTaskInput) { in.SupersedesTaskID = ptr(parent.GlobalID()) })
		_, err = b.link(parent, newer, domain.RelSupersedes)
		requireCode(t, err, domain.CodeCycleDetected)
	})
}

func TestBlocksCountAndScore(t *testing.T) {
	run(t, func(t *testing.T, b *bundle) {
		hub := b.createTask("hub")
		var waiters []*domain.Task
		for i := range 7 {
			waiters = append(waiters, b.createTask("waiter "+string(rune('a'+i))))
		}
		check := func(blocks, score int) {
			t.Helper()
			got := b.reload(hub)
			require.Equal(t, blocks, got.BlocksCount)
			require.Equal(t, score, got.PriorityScore)
		}
		check(0, 40)
		r0 := b.mustLink(waiters[0], hub, domain.RelDependsOn)
		check(1, 50)
		r1 := b.mustLink(hub, waiters[1], domain.RelBlocks)
		check(2, 60)
		rDup := b.mustLink(hub, waiters[0], domain.RelBlocks) // waiters[0] already waits: distinct tasks count once
		check(2, 60)
		b.mustLink(hub, waiters[2], domain.RelRelatedTo)
		check(2, 60)
		b.mustLink(hub, waiters[3], domain.RelDependsOn) // hub waits on waiters[3]
		check(2, 60)
		require.Equal(t, 1, b.reload(waiters[3]).BlocksCount)
		require.Equal(t, 50, b.reload(waiters[3]).PriorityScore)
		for _, w := range waiters[4:] {
			b.mustLink(w, hub, domain.RelDependsOn)
		}
		check(5, 90)
		b.mustLink(waiters[2], hub, domain.RelDependsOn)
		check(6, 90) // +50 at most
		require.Equal(t, 1, b.reload(hub).Version, "link changes rescore without an edit")

		for _, r := range []struct {
			id                string
			blocks, wantScore int
		}{{rDup.GlobalID(), 6, 90}, {r0.GlobalID(), 5, 90}, {r1.GlobalID(), 4, 80}} {
			_, err := b.svc.Tasks.RemoveTaskRelationship(as(b.owner), domain.RemoveTaskRelationshipInput{ID: r.id})
			require.NoError(t, err)
			check(r.blocks, r.wantScore)
		}

		// the score keeps the other terms
		up, err := b.svc.Tasks.UpdateTask(as(b.owner), domain.UpdateTaskInput{ID: hub.GlobalID(), Priority: ptr(domain.PriorityP1),
			Effort: ptr(domain.EffortTrivial)})
		require.NoError(t, err)
		require.Equal(t, 100+40+15, up.PriorityScore)
		require.Equal(t, 4, up.BlocksCount)
		deps, err := b.svc.Tasks.Linked(as(b.owner), hub.ID, service.DependentLinks)
		require.NoError(t, err)
		require.Len(t, deps, 4)
		deps, err = b.svc.Tasks.Linked(as(b.owner), hub.ID, service.DependencyLinks)
		require.NoError(t, err)
		require.Len(t, deps, 1)
		require.Equal(t, waiters[3].ID, deps[0].ID)
	})
}

func TestBlocksFlow(t *testing.T) {
	run(t, func(t *testing.T, b *bundle) {
		task := b.transition(b.createTask("blockable"), domain.StatusPending)
		blocker := b.createTask("blocker")

		blk1, got, err := b.svc.Tasks.CreateTaskBlock(as(b.owner), domain.CreateTaskBlockInput{TaskID: task.GlobalID(),
			BlockType: domain.BlockDependency, Reason: "waits for the blocker", BlockingTaskID: ptr(blocker.GlobalID())})
		require.NoError(t, err)
		require.Equal(t, domain.StatusBlocked, got.Status)
		require.Equal(t, blocker.ID, *blk1.BlockingEntityID)
		require.False(t, blk1.IsResolved())

		blk2, got, err := b.svc.Tasks.CreateTaskBlock(as(b.owner), domain.CreateTaskBlockInput{TaskID: task.GlobalID(),
			BlockType: domain.BlockManual, Reason: "needs a decision"})
		require.NoError(t, err)
		require.Equal(t, domain.StatusBlocked, got.Status, "a second block keeps it blocked")

		b.clock.Advance(1)
		res1, got, err := b.svc.Tasks.ResolveTaskBlock(as(b.owner), domain.ResolveTaskBlockInput{ID: blk1.GlobalID(), Notes: ptr("done")})
		require.NoError(t, err)
		require.True(t, res1.IsResolved())
		require.Equal(t, "done", *res1.ResolutionNotes)
		require.Equal(t, domain.StatusBlocked, got.Status, "one open block left")

		_, _, err = b.svc.Tasks.ResolveTaskBlock(as(b.owner), domain.ResolveTaskBlockInput{ID: blk1.GlobalID()})
		requireCode(t, err, domain.CodeConflict, "id")

		_, got, err = b.svc.Tasks.ResolveTaskBlock(as(b.owner), domain.ResolveTaskBlockInput{ID: blk2.GlobalID()})
		require.NoError(t, err)
		require.Equal(t, domain.StatusPending, got.Status, "the last resolve unblocks")
		require.Equal(t, domain.StatusPending, b.reload(task).Status)

		open, err := b.svc.Tasks.BlocksOfTask(as(b.owner), task.ID, false)
		require.NoError(t, err)
		require.Empty(t, open)
		all, err := b.svc.Tasks.BlocksOfTask(as(b.owner), task.ID, true)
		require.NoError(t, err)
		require.Len(t, all, 2)

		hist, err := b.svc.Tasks.StateHistory(as(b.owner), task.ID)
		require.NoError(t, err)
		var moves []string
		for _, h := range hist {
			from := "-"
			if h.FromStatus != nil {
				from = string(*h.FromStatus)
			}
			moves = append(moves, from+">"+string(h.ToStatus))
		}
		require.Equal(t, []string{"->DRAFT", "DRAFT>PENDING", "PENDING>BLOCKED", "BLOCKED>PENDING"}, moves)

		// a DRAFT task records the block but keeps its status
		draft := b.createTask("draft")
		_, got, err = b.svc.Tasks.CreateTaskBlock(as(b.owner), domain.CreateTaskBlockInput{TaskID: draft.GlobalID(),
			BlockType: domain.BlockManual, Reason: "later"})
		require.NoError(t, err)
		require.Equal(t, domain.StatusDraft, got.Status)

		_, _, err = b.svc.Tasks.CreateTaskBlock(as(b.owner), domain.CreateTaskBlockInput{TaskID: task.GlobalID(),
			BlockType: domain.BlockManual, Reason: "self", BlockingTaskID: ptr(task.GlobalID())})
		requireCode(t, err, domain.CodeBadUserInput, "blockingTaskId")
		_, _, err = b.svc.Tasks.CreateTaskBlock(as(b.owner), domain.CreateTaskBlockInput{TaskID: task.GlobalID(),
			BlockType: domain.BlockManual, Reason: " "})
		requireCode(t, err, domain.CodeBadUserInput, "reason")
	})
}

// ReadLinked answers, for many tasks at once, what Linked answers for each.
func TestReadLinkedIsLinked(t *testing.T) {
	run(t, func(t *testing.T, b *bundle) {
		a, bb, c, d, lone := b.createTask("a"), b.createTask("b"), b.createTask("c"), b.createTask("d"), b.createTask("lone")
		b.mustLink(a, bb, domain.RelDependsOn)
		b.mustLink(c, a, domain.RelBlocks)
		b.mustLink(d, a, domain.RelSubtaskOf)
		b.mustLink(bb, c, domain.RelDependsOn)
		ids := []string{a.ID, bb.ID, c.ID, d.ID, lone.ID}
		for name, links := range map[string]service.Links{"dependencies": service.DependencyLinks,
			"dependents": service.DependentLinks, "subtasks": service.SubtaskLinks} {
			got, err := b.svc.Tasks.ReadLinked(as(b.owner), ids, links)
			require.NoError(t, err, name)
			require.Len(t, got, len(ids), name)
			for i, id := range ids {
				want, err := b.svc.Tasks.Linked(as(b.owner), id, links)
				require.NoError(t, err, name)
				require.Equal(t, want, got[i], "%s of task %d", name, i)
			}
		}
		deps, err := b.svc.Tasks.ReadLinked(as(b.owner), []string{a.ID}, service.DependencyLinks)
		require.NoError(t, err)
		require.Len(t, deps[0], 2, "a waits on b (DEPENDS_ON) and on c (BLOCKS)")
	})
}
