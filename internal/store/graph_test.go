package store_test

import (
	"sort"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/store"
)

func (b *bundle) link(t *testing.T, source, target *domain.Task, typ domain.RelationshipType) *domain.TaskRelationship {
	t.Helper()
	r := &domain.TaskRelationship{ID: uuid.NewString(), SourceTaskID: source.ID, TargetTaskID: target.ID, Type: typ, CreatedAt: ts(0)}
	require.NoError(t, b.db.Tasks.InsertRelationship(b.ctx, r))
	return r
}

func TestRecountBlocks(t *testing.T) {
	run(t, func(t *testing.T, b *bundle) {
		var tk [6]*domain.Task
		ids := make([]string, len(tk))
		for i := range tk {
			tk[i] = b.insertTask(t, b.task(b.project, i+1))
			ids[i] = tk[i].ID
		}
		a, x, y, z, w, v := tk[0], tk[1], tk[2], tk[3], tk[4], tk[5]
		b.link(t, x, a, domain.RelDependsOn) // x waits on a
		b.link(t, y, a, domain.RelDependsOn) // y waits on a
		b.link(t, a, y, domain.RelBlocks)    // y waits on a again: counted once
		b.link(t, a, z, domain.RelBlocks)    // z waits on a
		b.link(t, w, a, domain.RelRelatedTo) // not a wait
		b.link(t, a, v, domain.RelDependsOn) // a waits on v: v gains, a does not
		b.link(t, v, w, domain.RelBlocks)    // w waits on v

		counts := func() map[string]int {
			got, err := b.db.Tasks.TasksByIDs(b.ctx, ids)
			require.NoError(t, err)
			out := map[string]int{}
			for _, task := range got {
				out[task.ID] = task.BlocksCount
			}
			return out
		}
		require.Equal(t, map[string]int{a.ID: 0, x.ID: 0, y.ID: 0, z.ID: 0, w.ID: 0, v.ID: 0}, counts(), "nothing recounted yet")

		require.NoError(t, b.db.Tasks.RecountBlocks(b.ctx, []string{a.ID}))
		require.Equal(t, 3, counts()[a.ID], "only the asked tasks change")
		require.Equal(t, 0, counts()[v.ID])

		require.NoError(t, b.db.Tasks.RecountBlocks(b.ctx, ids))
		require.Equal(t, map[string]int{a.ID: 3, x.ID: 0, y.ID: 0, z.ID: 0, w.ID: 0, v.ID: 2}, counts())
		require.Equal(t, 1, b.loadTask(t, a.ID).Version, "recounting is no edit")

		require.NoError(t, b.db.Tasks.DeleteLink(b.ctx, a.ID, z.ID, domain.RelBlocks))
		require.NoError(t, b.db.Tasks.DeleteLink(b.ctx, a.ID, z.ID, domain.RelBlocks), "deleting a missing link is no error")
		require.NoError(t, b.db.Tasks.RecountBlocks(b.ctx, ids))
		require.Equal(t, 2, counts()[a.ID])
		require.NoError(t, b.db.Tasks.RecountBlocks(b.ctx, nil))
	})
}

func TestOrderingEdges(t *testing.T) {
	run(t, func(t *testing.T, b *bundle) {
		a := b.insertTask(t, b.task(b.project, 1))
		c := b.insertTask(t, b.task(b.project, 2))
		d := b.insertTask(t, b.task(b.project, 3))
		b.link(t, a, c, domain.RelDependsOn)
		b.link(t, c, d, domain.RelBlocks)
		b.link(t, a, d, domain.RelSubtaskOf)
		b.link(t, d, a, domain.RelRelatedTo)
		otherProject := b.newProject(t, "other")
		o1 := b.insertTask(t, b.task(otherProject, 1))
		o2 := b.insertTask(t, b.task(otherProject, 2))
		b.link(t, o1, o2, domain.RelDependsOn)

		all := []string{a.ID, c.ID, d.ID}
		edges := func(from []string, types ...domain.RelationshipType) []store.TaskEdge {
			got, err := b.db.Tasks.OrderingEdgesFrom(b.ctx, from, types)
			require.NoError(t, err)
			sort.Slice(got, func(i, j int) bool { return got[i].From+got[i].To < got[j].From+got[j].To })
			return got
		}
		want := []store.TaskEdge{{From: a.ID, To: c.ID}, {From: d.ID, To: c.ID}}
		sort.Slice(want, func(i, j int) bool { return want[i].From+want[i].To < want[j].From+want[j].To })
		require.Equal(t, want, edges(all, domain.GraphKind(domain.RelDependsOn)...), "BLOCKS is the reverse dependency")
		require.Equal(t, []store.TaskEdge{{From: d.ID, To: c.ID}}, edges([]string{d.ID}, domain.GraphKind(domain.RelDependsOn)...),
			"only edges leaving the frontier")
		require.Equal(t, []store.TaskEdge{{From: a.ID, To: d.ID}}, edges(all, domain.RelSubtaskOf))
		require.Empty(t, edges(all, domain.RelSupersedes))
		require.Empty(t, edges(nil, domain.RelDependsOn))

		require.NoError(t, b.db.InTx(b.ctx, func(q *store.Q) error {
			if err := q.Tasks.LockProjectGraph(b.ctx, b.project.ID); err != nil {
				return err
			}
			return q.Tasks.LockProjectGraph(b.ctx, b.project.ID) // re-entrant within a transaction
		}))
	})
}

func TestClearMirroredRef(t *testing.T) {
	run(t, func(t *testing.T, b *bundle) {
		parent := b.insertTask(t, b.task(b.project, 1))
		child := b.task(b.project, 2)
		child.ParentTaskID, child.SupersedesTaskID = &parent.ID, &parent.ID
		b.insertTask(t, child)

		require.NoError(t, b.db.Tasks.ClearMirroredRef(b.ctx, child.ID, uuid.NewString(), domain.RelSubtaskOf))
		got := b.loadTask(t, child.ID)
		require.Equal(t, parent.ID, *got.ParentTaskID, "another target leaves the reference")
		require.Equal(t, 1, got.Version)

		require.NoError(t, b.db.Tasks.ClearMirroredRef(b.ctx, child.ID, parent.ID, domain.RelSubtaskOf))
		got = b.loadTask(t, child.ID)
		require.Nil(t, got.ParentTaskID)
		require.Equal(t, parent.ID, *got.SupersedesTaskID)
		require.Equal(t, 2, got.Version)

		require.NoError(t, b.db.Tasks.ClearMirroredRef(b.ctx, child.ID, parent.ID, domain.RelSupersedes))
		got = b.loadTask(t, child.ID)
		require.Nil(t, got.SupersedesTaskID)
		require.Equal(t, 3, got.Version)
	})
}

func TestRecountTaskLists(t *testing.T) {
	run(t, func(t *testing.T, b *bundle) {
		newList := func(name string) *domain.TaskList { return b.newList(t, name, 3) }
		l1, l2 := newList("one"), newList("two")
		statuses := []domain.TaskStatus{domain.StatusCompleted, domain.StatusCompleted, domain.StatusFailed, domain.StatusPending, domain.StatusInProgress}
		var items []*domain.TaskListItem
		for i, st := range statuses {
			task := b.task(b.project, i+1)
			task.Status, task.TaskListID = st, &l1.ID
			b.insertTask(t, task)
			items = append(items, &domain.TaskListItem{ID: uuid.NewString(), TaskListID: l1.ID, TaskID: task.ID,
				Position: i + 1, ItemStatus: domain.ItemStatusFor(st), AddedAt: ts(0)})
		}
		require.NoError(t, b.db.Lists.InsertItems(b.ctx, items))
		outside := b.task(b.project, 10)
		outside.Status = domain.StatusCompleted
		b.insertTask(t, outside)

		require.NoError(t, b.db.Lists.RecountTaskLists(b.ctx, []string{l1.ID, l2.ID}, ts(time.Hour)))
		got, err := b.db.Lists.TaskListsByIDs(b.ctx, []string{l1.ID, l2.ID})
		require.NoError(t, err)
		byID := map[string]*domain.TaskList{got[0].ID: got[0], got[1].ID: got[1]}
		require.Equal(t, [3]int{5, 2, 1}, [3]int{byID[l1.ID].TotalTasks, byID[l1.ID].CompletedTasks, byID[l1.ID].FailedTasks})
		require.Equal(t, [3]int{0, 0, 0}, [3]int{byID[l2.ID].TotalTasks, byID[l2.ID].CompletedTasks, byID[l2.ID].FailedTasks})
		require.Equal(t, ts(time.Hour), byID[l1.ID].UpdatedAt.UTC())

		// moving a task to the other list and recounting both keeps the counters true
		moved := items[0].TaskID
		require.NoError(t, b.db.InTx(b.ctx, func(q *store.Q) error {
			if err := q.Lists.DeleteItemOfTask(b.ctx, moved); err != nil {
				return err
			}
			if err := q.Tasks.SetTaskList(b.ctx, moved, &l2.ID); err != nil {
				return err
			}
			if err := q.Lists.InsertItems(b.ctx, []*domain.TaskListItem{{ID: uuid.NewString(), TaskListID: l2.ID, TaskID: moved,
				Position: 1, ItemStatus: domain.ItemCompleted, AddedAt: ts(0)}}); err != nil {
				return err
			}
			return q.Lists.RecountTaskLists(b.ctx, []string{l1.ID, l2.ID}, ts(2*time.Hour))
		}))
		got, err = b.db.Lists.TaskListsByIDs(b.ctx, []string{l1.ID, l2.ID})
		require.NoError(t, err)
		byID = map[string]*domain.TaskList{got[0].ID: got[0], got[1].ID: got[1]}
		require.Equal(t, [3]int{4, 1, 1}, [3]int{byID[l1.ID].TotalTasks, byID[l1.ID].CompletedTasks, byID[l1.ID].FailedTasks})
		require.Equal(t, [3]int{1, 1, 0}, [3]int{byID[l2.ID].TotalTasks, byID[l2.ID].CompletedTasks, byID[l2.ID].FailedTasks})
		require.NoError(t, b.db.Lists.RecountTaskLists(b.ctx, nil, ts(0)))
	})
}

func TestTasksWithDeadlines(t *testing.T) {
	run(t, func(t *testing.T, b *bundle) {
		mk := func(n int, st domain.TaskStatus, deadline *time.Time) *domain.Task {
			task := b.task(b.project, n)
			task.Status, task.Deadline = st, deadline
			return b.insertTask(t, task)
		}
		d := ptr(ts(time.Hour))
		open := mk(1, domain.StatusPending, d)
		blocked := mk(2, domain.StatusBlocked, d)
		mk(3, domain.StatusCompleted, d)
		mk(4, domain.StatusFailed, d)
		mk(5, domain.StatusPending, nil)
		got, err := b.db.Tasks.TasksWithDeadlines(b.ctx)
		require.NoError(t, err)
		var ids []string
		for _, task := range got {
			ids = append(ids, task.ID)
		}
		require.ElementsMatch(t, []string{open.ID, blocked.ID}, ids)
	})
}
