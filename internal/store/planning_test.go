package store_test

import (
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/store"
)

// TestPlanningReads covers the reads of a wave plan: a list's tasks, their file
// impacts, the links that matter for planning, and the outside tasks they wait on.
func TestPlanningReads(t *testing.T) {
	run(t, func(t *testing.T, b *bundle) {
		newList := func(name string) *domain.TaskList { return b.newList(t, name, 3) }
		list, other := newList("L"), newList("M")
		var tk [7]*domain.Task
		for i := range tk {
			tk[i] = b.task(b.project, i+1)
		}
		tk[0].TaskListID, tk[1].TaskListID, tk[2].TaskListID = &list.ID, &list.ID, &list.ID
		tk[2].Status = domain.StatusCompleted
		tk[3].TaskListID = &other.ID // in another list
		// tk[4], tk[5], tk[6] in no list
		for _, task := range tk {
			b.insertTask(t, task)
		}
		a, bb, done, m, x, y, z := tk[0], tk[1], tk[2], tk[3], tk[4], tk[5], tk[6]
		for _, fi := range []*domain.TaskFileImpact{
			{ID: uuid.NewString(), TaskID: a.ID, FilePath: "x.go", Operation: domain.OpUpdate},
			{ID: uuid.NewString(), TaskID: done.ID, FilePath: "y.go", Operation: domain.OpCreate},
			{ID: uuid.NewString(), TaskID: m.ID, FilePath: "x.go", Operation: domain.OpUpdate},
		} {
			fi.Confidence, fi.Source, fi.CreatedAt, fi.UpdatedAt = 1, domain.SourceUserDeclared, ts(0), ts(0)
			require.NoError(t, b.db.Tasks.ReplaceFileImpacts(b.ctx, fi.TaskID, []*domain.TaskFileImpact{fi}))
		}
		links := []*domain.TaskRelationship{
			b.link(t, bb, a, domain.RelDependsOn),    // inside
			b.link(t, a, m, domain.RelDependsOn),     // a waits on m (other list)
			b.link(t, x, bb, domain.RelBlocks),       // bb waits on x
			b.link(t, a, y, domain.RelConflictsWith), // touches the list
			b.link(t, z, done, domain.RelDependsOn),  // z waits on a list task: a link, but z is no dependency
			b.link(t, a, z, domain.RelBlocks),        // z waits on a: same
			b.link(t, a, bb, domain.RelRelatedTo),    // not a planning link
			b.link(t, x, y, domain.RelDependsOn),     // outside the list entirely
		}

		var tasks, outside []*domain.Task
		var impacts []*domain.TaskFileImpact
		var rels []*domain.TaskRelationship
		before := b.db.Statements()
		require.NoError(t, b.db.InReadTx(b.ctx, func(q *store.Q) error {
			var err error
			if tasks, err = q.Planning.TasksOfList(b.ctx, list.ID); err != nil {
				return err
			}
			if impacts, err = q.Planning.FileImpactsOfList(b.ctx, list.ID); err != nil {
				return err
			}
			if rels, err = q.Planning.PlanningLinksOfList(b.ctx, list.ID); err != nil {
				return err
			}
			outside, err = q.Planning.OutsideDependenciesOfList(b.ctx, list.ID)
			return err
		}))
		require.Equal(t, int64(6), b.db.Statements()-before, "begin, four reads, commit")

		ids := func(ts []*domain.Task) []string {
			var out []string
			for _, t := range ts {
				out = append(out, t.ID)
			}
			return out
		}
		require.Equal(t, []string{a.ID, bb.ID, done.ID}, ids(tasks), "every status, by display id")
		require.Len(t, impacts, 2)
		require.ElementsMatch(t, []string{a.ID, done.ID}, []string{impacts[0].TaskID, impacts[1].TaskID})
		var relIDs []string
		for _, r := range rels {
			relIDs = append(relIDs, r.ID)
		}
		require.ElementsMatch(t, []string{links[0].ID, links[1].ID, links[2].ID, links[3].ID, links[4].ID, links[5].ID}, relIDs)
		require.Equal(t, []string{m.ID, x.ID}, ids(outside))

		// A read transaction that fails rolls back and reports the error.
		err := b.db.InReadTx(b.ctx, func(q *store.Q) error {
			_, err := q.Planning.TasksOfList(b.ctx, list.ID)
			require.NoError(t, err)
			return store.ErrNotFound
		})
		require.ErrorIs(t, err, store.ErrNotFound)
	})
}
