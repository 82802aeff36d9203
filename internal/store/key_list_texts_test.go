package store_test

import (
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/store"
)

// TestKeyListTexts: reads by a list of keys — tasks by id, relationships,
// a page per parent — answer every key, from two keys to more than the
// longest list SQLite pads; on PostgreSQL their texts do not vary with the
// number of keys (one array), so each read is one prepared text however
// many keys it names.
func TestKeyListTexts(t *testing.T) {
	run(t, func(t *testing.T, b *bundle) {
		ctx := b.ctx
		const n = 1100 // past maxPaddedKeys (1024)
		tasks := make([]*domain.Task, n)
		for i := range tasks {
			tasks[i] = b.insertTask(t, b.task(b.project, i+1))
		}
		for i := 0; i+1 < 300; i += 2 {
			b.link(t, tasks[i], tasks[i+1], domain.RelRelatedTo)
		}
		ids := func(k int) []string {
			out := make([]string, k)
			for i := range out {
				out[i] = tasks[i].ID
			}
			return out
		}
		var lists []string
		for i := range 3 {
			l := b.newList(t, "L", 1)
			var items []*domain.TaskListItem
			for j := range 4 {
				items = append(items, &domain.TaskListItem{ID: uuid.NewString(), TaskListID: l.ID, TaskID: tasks[4*i+j].ID,
					Position: j, ItemStatus: domain.ItemPending, AddedAt: ts(0)})
			}
			require.NoError(t, b.db.Lists.InsertItems(ctx, items))
			lists = append(lists, l.ID)
		}
		first := 3
		read := func(k int) {
			got, err := b.db.Tasks.ShownTasksByIDs(ctx, []string{"Title"}, ids(k))
			require.NoError(t, err)
			require.Len(t, got, k, "tasks by %d ids", k)
			links, err := b.db.Tasks.ShownRelationshipsOfTasks(ctx, nil, domain.DirectionOutgoing, ids(k))
			require.NoError(t, err)
			require.Len(t, links, min(k+1, 300)/2, "links of %d tasks", k)
			pages, err := b.db.Lists.TasksByLists(ctx, true, []string{"Title"}, lists[:min(k, 3)], domain.PageArgs{First: &first})
			require.NoError(t, err)
			require.Len(t, pages, min(k, 3))
			for _, p := range pages {
				require.Len(t, p.Items, 3)
				require.True(t, p.HasNextPage)
			}
		}
		read(2)
		texts := b.db.PreparedTexts()
		for _, k := range []int{3, 100, n} {
			read(k)
		}
		if b.db.Dialect() == store.Postgres {
			require.Equal(t, texts, b.db.PreparedTexts(), "one text per read, whatever the number of keys")
		}
	})
}
