package store_test

import (
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/domain"
)

// TestTasksByLists: a list's task page, read in one statement with its
// items, is the item page's tasks in list order with the item page's cursors
// and flags, in both directions and for several lists at once; read lean, it
// holds the shown fields, the id and the project, and nothing else.
func TestTasksByLists(t *testing.T) {
	run(t, func(t *testing.T, b *bundle) {
		ctx := b.ctx
		newList := func(name string) *domain.TaskList { return b.newList(t, name, 1) }
		lists := []*domain.TaskList{newList("A"), newList("B"), newList("empty")}
		taskOf := map[string]*domain.Task{} // by item id
		for li, l := range lists[:2] {
			var items []*domain.TaskListItem
			for i := range 5 {
				task := b.task(b.project, 10*li+i+1)
				task.Description = "description"
				b.insertTask(t, task)
				it := &domain.TaskListItem{ID: uuid.NewString(), TaskListID: l.ID, TaskID: task.ID,
					Position: 5 - i, ItemStatus: domain.ItemPending, AddedAt: ts(0)}
				items = append(items, it)
				taskOf[it.ID] = task
			}
			require.NoError(t, b.db.Lists.InsertItems(ctx, items))
		}
		ids := []string{lists[0].ID, lists[1].ID, lists[2].ID}
		first, last := 2, 2
		for _, parents := range [][]string{ids, ids[:1]} { // the window and the plain LIMIT
			for _, page := range []domain.PageArgs{{}, {First: &first}, {Last: &last}} {
				items, err := b.db.Lists.ItemsByLists(ctx, parents, page)
				require.NoError(t, err)
				full, err := b.db.Lists.TasksByLists(ctx, false, nil, parents, page)
				require.NoError(t, err)
				lean, err := b.db.Lists.TasksByLists(ctx, true, []string{"Title"}, parents, page)
				require.NoError(t, err)
				require.Len(t, full, len(parents))
				for _, list := range parents {
					ip, fp, lp := items[list], full[list], lean[list]
					require.Equal(t, ip.Cursors, fp.Cursors, "cursors")
					require.Equal(t, ip.Cursors, lp.Cursors, "cursors, lean")
					require.Equal(t, [2]bool{ip.HasNextPage, ip.HasPreviousPage}, [2]bool{fp.HasNextPage, fp.HasPreviousPage})
					require.Equal(t, [2]bool{ip.HasNextPage, ip.HasPreviousPage}, [2]bool{lp.HasNextPage, lp.HasPreviousPage})
					require.Len(t, fp.Items, len(ip.Items))
					require.Len(t, lp.Items, len(ip.Items))
					for i, it := range ip.Items {
						want := taskOf[it.ID]
						require.Equal(t, want.ID, fp.Items[i].ID)
						require.Equal(t, want.Title, fp.Items[i].Title)
						require.Equal(t, "description", fp.Items[i].Description, "read in full")
						require.Equal(t, domain.Task{ID: want.ID, ProjectID: want.ProjectID, Title: want.Title}, *lp.Items[i], "read lean")
					}
				}
			}
		}
		// Past the first page, from the item page's cursor.
		items, err := b.db.Lists.ItemsByLists(ctx, ids[:1], domain.PageArgs{First: &first})
		require.NoError(t, err)
		after := items[ids[0]].Cursors[1]
		next, err := b.db.Lists.TasksByLists(ctx, false, nil, ids[:1], domain.PageArgs{First: &first, After: &after})
		require.NoError(t, err)
		nextItems, err := b.db.Lists.ItemsByLists(ctx, ids[:1], domain.PageArgs{First: &first, After: &after})
		require.NoError(t, err)
		require.Equal(t, nextItems[ids[0]].Cursors, next[ids[0]].Cursors)
		require.Equal(t, taskOf[nextItems[ids[0]].Items[0].ID].ID, next[ids[0]].Items[0].ID)
		require.True(t, next[ids[0]].HasPreviousPage)
	})
}
