package store_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/store"
)

// seedPaging inserts n tasks whose sort keys tie in groups and whose deadlines are
// partly NULL, so every order exercises the id tie-break and the NULL handling.
func seedPaging(t *testing.T, b *bundle, p *domain.Project, n int) []*domain.Task {
	t.Helper()
	out := make([]*domain.Task, n)
	for i := range n {
		task := b.task(p, i+1)
		task.PriorityScore = (i * 7) % 5 * 10
		task.CreatedAt = ts(time.Duration(i/3) * time.Second)
		task.UpdatedAt = ts(time.Duration((n-i)%4)*time.Minute + 500*time.Microsecond)
		if i%3 != 0 {
			// whole seconds and fractions mixed: SQLite compares the stored text
			task.Deadline = ptr(base.Truncate(time.Second).Add(time.Duration((i*5)%7)*time.Hour +
				time.Duration(i%2)*250*time.Millisecond))
		}
		out[i] = b.insertTask(t, task)
	}
	return out
}

// expectedOrder sorts tasks as the connection must: by key in the direction,
// NULL keys last, ties by id in the same direction.
func expectedOrder(tasks []*domain.Task, field domain.TaskOrderField, dir domain.OrderDirection) []string {
	sorted := append([]*domain.Task(nil), tasks...)
	cmpKey := func(a, b *domain.Task) (int, bool) { // compare, and whether either key is NULL
		switch field {
		case domain.OrderPriorityScore:
			return a.PriorityScore - b.PriorityScore, false
		case domain.OrderCreatedAt:
			return a.CreatedAt.Compare(b.CreatedAt), false
		case domain.OrderUpdatedAt:
			return a.UpdatedAt.Compare(b.UpdatedAt), false
		case domain.OrderDisplayID:
			return strings.Compare(domain.DisplaySortKey(a.DisplayID), domain.DisplaySortKey(b.DisplayID)), false
		default:
			switch {
			case a.Deadline == nil && b.Deadline == nil:
				return 0, false
			case a.Deadline == nil:
				return 1, true
			case b.Deadline == nil:
				return -1, true
			}
			return a.Deadline.Compare(*b.Deadline), false
		}
	}
	sort.Slice(sorted, func(i, j int) bool {
		a, b := sorted[i], sorted[j]
		c, nullDecided := cmpKey(a, b)
		if nullDecided {
			return c < 0 // NULLs last whatever the direction
		}
		if c == 0 {
			c = strings.Compare(a.ID, b.ID)
		}
		if dir == domain.OrderDesc {
			return c > 0
		}
		return c < 0
	})
	ids := make([]string, len(sorted))
	for i, t := range sorted {
		ids[i] = t.ID
	}
	return ids
}

func pageIDs(pg domain.Page[*domain.Task]) []string {
	ids := make([]string, len(pg.Items))
	for i, t := range pg.Items {
		ids[i] = t.ID
	}
	return ids
}

var allOrderFields = []domain.TaskOrderField{domain.OrderPriorityScore, domain.OrderCreatedAt,
	domain.OrderUpdatedAt, domain.OrderDeadline, domain.OrderDisplayID}

func TestTaskPagingEveryOrder(t *testing.T) {
	run(t, func(t *testing.T, b *bundle) {
		const n = 17
		tasks := seedPaging(t, b, b.project, n)
		// a task in another project must never show up in this project's pages
		b.insertTask(t, b.task(b.newProject(t, "elsewhere"), 1))
		scope := domain.ProjectScope{ProjectID: b.project.ID}
		read := func(order domain.TaskOrder, page domain.PageArgs) domain.Page[*domain.Task] {
			pages, err := b.db.Tasks.Tasks(b.ctx, store.TaskQuery{Scope: scope, Order: &order, Page: page})
			require.NoError(t, err)
			require.Len(t, pages, 1)
			pg := pages[""]
			require.Len(t, pg.Cursors, len(pg.Items))
			return pg
		}
		for _, field := range allOrderFields {
			for _, dir := range []domain.OrderDirection{domain.OrderAsc, domain.OrderDesc} {
				order := domain.TaskOrder{Field: field, Direction: dir}
				want := expectedOrder(tasks, field, dir)
				t.Run(fmt.Sprintf("%s_%s", field, dir), func(t *testing.T) {
					full := read(order, domain.PageArgs{First: ptr(100)})
					require.Equal(t, want, pageIDs(full), "a full read is in the expected order")
					require.False(t, full.HasNextPage)
					require.False(t, full.HasPreviousPage)
					if field == domain.OrderDeadline {
						last := full.Items[len(full.Items)-1]
						require.Nil(t, last.Deadline, "NULL deadlines sort last going forward")
						require.NotNil(t, full.Items[0].Deadline)
					}

					for _, size := range []int{1, 4, 7, n, n + 5} {
						// forward: first/after
						var got []string
						var after *string
						for pages := 0; ; pages++ {
							require.Less(t, pages, n+2, "paging must end")
							pg := read(order, domain.PageArgs{First: ptr(size), After: after})
							require.LessOrEqual(t, len(pg.Items), size)
							require.Equal(t, after != nil, pg.HasPreviousPage)
							got = append(got, pageIDs(pg)...)
							if !pg.HasNextPage {
								break
							}
							require.Len(t, pg.Items, size, "only the last page is short")
							after = ptr(pg.Cursors[len(pg.Cursors)-1])
						}
						require.Equal(t, want, got, "forward pages of %d joined", size)

						// backward: last/before
						got = nil
						var before *string
						for pages := 0; ; pages++ {
							require.Less(t, pages, n+2, "paging must end")
							pg := read(order, domain.PageArgs{Last: ptr(size), Before: before})
							require.LessOrEqual(t, len(pg.Items), size)
							require.Equal(t, before != nil, pg.HasNextPage)
							got = append(pageIDs(pg), got...)
							if !pg.HasPreviousPage {
								break
							}
							require.Len(t, pg.Items, size, "only the first page is short")
							before = ptr(pg.Cursors[0])
						}
						require.Equal(t, want, got, "backward pages of %d joined", size)
					}

					// every cursor of the full read resumes right after (and before) its row
					for i, c := range full.Cursors {
						next := read(order, domain.PageArgs{First: ptr(2), After: ptr(c)})
						require.Equal(t, want[i+1:min(i+3, n)], pageIDs(next), "after cursor %d", i)
						prev := read(order, domain.PageArgs{Last: ptr(2), Before: ptr(c)})
						require.Equal(t, want[max(i-2, 0):i], pageIDs(prev), "before cursor %d", i)
					}
				})
			}
		}
	})
}

func TestTaskPagingDefaults(t *testing.T) {
	run(t, func(t *testing.T, b *bundle) {
		tasks := seedPaging(t, b, b.project, 60)
		pages, err := b.db.Tasks.Tasks(b.ctx, store.TaskQuery{Scope: domain.ProjectScope{All: true}})
		require.NoError(t, err)
		pg := pages[""]
		require.Len(t, pg.Items, domain.DefaultPageSize)
		require.True(t, pg.HasNextPage)
		require.Equal(t, expectedOrder(tasks, domain.OrderCreatedAt, domain.OrderAsc)[:domain.DefaultPageSize], pageIDs(pg),
			"default order is CREATED_AT ASC")

		pages, err = b.db.Tasks.Tasks(b.ctx, store.TaskQuery{Scope: domain.ProjectScope{All: true}, Page: domain.PageArgs{First: ptr(0)}})
		require.NoError(t, err)
		require.Empty(t, pages[""].Items)
		require.NotNil(t, pages[""].Items)
		require.True(t, pages[""].HasNextPage)
	})
}

func TestTaskPagingBadArguments(t *testing.T) {
	run(t, func(t *testing.T, b *bundle) {
		seedPaging(t, b, b.project, 3)
		all := domain.ProjectScope{All: true}
		byScore := &domain.TaskOrder{Field: domain.OrderPriorityScore, Direction: domain.OrderAsc}
		pages, err := b.db.Tasks.Tasks(b.ctx, store.TaskQuery{Scope: all, Order: byScore, Page: domain.PageArgs{First: ptr(1)}})
		require.NoError(t, err)
		scoreCursor := pages[""].Cursors[0]

		tests := []struct {
			name  string
			order *domain.TaskOrder
			page  domain.PageArgs
			code  domain.Code
			field string
		}{
			{"first above 100", nil, domain.PageArgs{First: ptr(101)}, domain.CodeLimitExceeded, "first"},
			{"last above 100", nil, domain.PageArgs{Last: ptr(500)}, domain.CodeLimitExceeded, "last"},
			{"negative first", nil, domain.PageArgs{First: ptr(-1)}, domain.CodeBadUserInput, "first"},
			{"garbage after", nil, domain.PageArgs{After: ptr("%%%")}, domain.CodeBadUserInput, "after"},
			{"not json", nil, domain.PageArgs{After: ptr("bm90IGpzb24")}, domain.CodeBadUserInput, "after"},
			{"garbage before", nil, domain.PageArgs{Last: ptr(2), Before: ptr("zzz")}, domain.CodeBadUserInput, "before"},
			{"cursor of another order", &domain.TaskOrder{Field: domain.OrderCreatedAt, Direction: domain.OrderAsc},
				domain.PageArgs{After: &scoreCursor}, domain.CodeBadUserInput, "after"},
			{"cursor of another order (string key)", &domain.TaskOrder{Field: domain.OrderDisplayID, Direction: domain.OrderAsc},
				domain.PageArgs{After: &scoreCursor}, domain.CodeBadUserInput, "after"},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				_, err := b.db.Tasks.Tasks(b.ctx, store.TaskQuery{Scope: all, Order: tc.order, Page: tc.page})
				e, ok := domain.AsError(err)
				require.True(t, ok, "%v", err)
				require.Equal(t, tc.code, e.Code)
				require.Equal(t, tc.field, e.Field)
			})
		}
	})
}

func TestTaskPagingPerProject(t *testing.T) {
	run(t, func(t *testing.T, b *bundle) {
		p1, p2, p3 := b.newProject(t, "one"), b.newProject(t, "two"), b.newProject(t, "three")
		t1 := seedPaging(t, b, p1, 7)
		t2 := seedPaging(t, b, p2, 2)
		seedPaging(t, b, b.project, 4) // not asked for
		parents := []string{p1.ID, p2.ID, p3.ID}
		all := domain.ProjectScope{All: true}

		for _, field := range allOrderFields {
			for _, dir := range []domain.OrderDirection{domain.OrderAsc, domain.OrderDesc} {
				order := &domain.TaskOrder{Field: field, Direction: dir}
				w1, w2 := expectedOrder(t1, field, dir), expectedOrder(t2, field, dir)
				name := fmt.Sprintf("%s_%s", field, dir)

				pages, err := b.db.Tasks.Tasks(b.ctx, store.TaskQuery{Scope: all, ProjectIDs: parents, Order: order, Page: domain.PageArgs{First: ptr(3)}})
				require.NoError(t, err, name)
				require.Len(t, pages, 3, "every parent has a page, empty ones too")
				require.Equal(t, w1[:3], pageIDs(pages[p1.ID]), name)
				require.True(t, pages[p1.ID].HasNextPage)
				require.Equal(t, w2, pageIDs(pages[p2.ID]), name)
				require.False(t, pages[p2.ID].HasNextPage)
				require.Empty(t, pages[p3.ID].Items)
				require.NotNil(t, pages[p3.ID].Items)
				require.False(t, pages[p3.ID].HasNextPage)

				pages, err = b.db.Tasks.Tasks(b.ctx, store.TaskQuery{Scope: all, ProjectIDs: parents, Order: order, Page: domain.PageArgs{Last: ptr(2)}})
				require.NoError(t, err, name)
				require.Equal(t, w1[5:], pageIDs(pages[p1.ID]), name)
				require.True(t, pages[p1.ID].HasPreviousPage)
				require.Equal(t, w2, pageIDs(pages[p2.ID]), name)
				require.False(t, pages[p2.ID].HasPreviousPage)
				require.Empty(t, pages[p3.ID].Items)

				// paging on within one parent with its cursor
				first, err := b.db.Tasks.Tasks(b.ctx, store.TaskQuery{Scope: all, ProjectIDs: []string{p1.ID}, Order: order, Page: domain.PageArgs{First: ptr(3)}})
				require.NoError(t, err)
				next, err := b.db.Tasks.Tasks(b.ctx, store.TaskQuery{Scope: all, ProjectIDs: []string{p1.ID}, Order: order,
					Page: domain.PageArgs{First: ptr(3), After: ptr(first[p1.ID].Cursors[2])}})
				require.NoError(t, err)
				require.Equal(t, w1[3:6], pageIDs(next[p1.ID]), name)
			}
		}

		counts, err := b.db.Tasks.CountTasks(b.ctx, store.TaskQuery{Scope: all, ProjectIDs: parents})
		require.NoError(t, err)
		require.Equal(t, 7, counts[p1.ID])
		require.Equal(t, 2, counts[p2.ID])
		require.Zero(t, counts[p3.ID])

		none, err := b.db.Tasks.Tasks(b.ctx, store.TaskQuery{Scope: all, ProjectIDs: []string{}})
		require.NoError(t, err)
		require.Len(t, none, 1, "no parents means the unnested query")
	})
}

func TestTaskFiltersAndCounts(t *testing.T) {
	run(t, func(t *testing.T, b *bundle) {
		ctx := b.ctx
		other := b.newProject(t, "other")
		stranger := b.newUser(t, "stranger")
		foreign := &domain.Project{ID: uuid.NewString(), Slug: "foreign", Name: "F", OwnerID: stranger.ID,
			Status: domain.ProjectActive, CreatedAt: ts(0), UpdatedAt: ts(0)}
		require.NoError(t, b.db.Projects.CreateProject(ctx, foreign))
		list := b.newList(t, "L", 1)

		made := 0
		mk := func(p *domain.Project, n int, edit func(*domain.Task)) *domain.Task {
			task := b.task(p, n)
			made++
			task.CreatedAt = ts(time.Duration(made) * time.Second)
			edit(task)
			return b.insertTask(t, task)
		}
		bug := mk(b.project, 1, func(t *domain.Task) {
			t.Category, t.Priority, t.Title = domain.CategoryBug, domain.PriorityP1, "Fix 100% CPU_usage"
		})
		queued := mk(b.project, 2, func(t *domain.Task) {
			t.Status, t.Queue, t.Description = domain.StatusEvaluating, ptr(domain.QueueEvaluation), "Needs a LOOK"
		})
		listed := mk(b.project, 3, func(t *domain.Task) { t.Status, t.TaskListID = domain.StatusPending, &list.ID })
		plain := mk(b.project, 4, func(t *domain.Task) {})
		elsewhere := mk(other, 1, func(t *domain.Task) { t.Title = "cpu elsewhere" })
		hidden := mk(foreign, 1, func(t *domain.Task) { t.Title = "cpu hidden" })

		require.NoError(t, b.db.Tasks.ReplaceFileImpacts(ctx, plain.ID, []*domain.TaskFileImpact{{ID: uuid.NewString(), TaskID: plain.ID,
			FilePath: "main.go", Operation: domain.OpUpdate, Confidence: 1, Source: domain.SourceUserDeclared, CreatedAt: ts(0), UpdatedAt: ts(0)}}))
		require.NoError(t, b.db.Tasks.InsertRelationship(ctx, &domain.TaskRelationship{ID: uuid.NewString(), SourceTaskID: listed.ID,
			TargetTaskID: bug.ID, Type: domain.RelDependsOn, CreatedAt: ts(0)}))

		own := domain.ProjectScope{OwnerID: b.user.ID}
		tests := []struct {
			name   string
			scope  domain.ProjectScope
			filter *domain.TaskFilter
			want   []*domain.Task
		}{
			{"admin sees all", domain.ProjectScope{All: true}, nil, []*domain.Task{bug, queued, listed, plain, elsewhere, hidden}},
			{"owner sees own projects", own, nil, []*domain.Task{bug, queued, listed, plain, elsewhere}},
			{"agent sees one project", domain.ProjectScope{ProjectID: other.ID}, nil, []*domain.Task{elsewhere}},
			{"status", own, &domain.TaskFilter{Status: []domain.TaskStatus{domain.StatusPending, domain.StatusEvaluating}}, []*domain.Task{queued, listed}},
			{"category", own, &domain.TaskFilter{Category: []domain.TaskCategory{domain.CategoryBug}}, []*domain.Task{bug}},
			{"priority", own, &domain.TaskFilter{Priority: []domain.Priority{domain.PriorityP3}}, []*domain.Task{queued, listed, plain, elsewhere}},
			{"task list", own, &domain.TaskFilter{TaskListID: &list.ID}, []*domain.Task{listed}},
			{"in queue", own, &domain.TaskFilter{InEvaluationQueue: ptr(true)}, []*domain.Task{queued}},
			{"not in queue", own, &domain.TaskFilter{InEvaluationQueue: ptr(false)}, []*domain.Task{bug, listed, plain, elsewhere}},
			{"search is case-insensitive", own, &domain.TaskFilter{Search: ptr("  cpu ")}, []*domain.Task{bug, elsewhere}},
			{"search in description", own, &domain.TaskFilter{Search: ptr("look")}, []*domain.Task{queued}},
			{"search escapes %", own, &domain.TaskFilter{Search: ptr("100%")}, []*domain.Task{bug}},
			{"% is literal", own, &domain.TaskFilter{Search: ptr("%")}, []*domain.Task{bug}},
			{"_ is literal", own, &domain.TaskFilter{Search: ptr("u_a")}, []*domain.Task{}},
			{"blank search ignored", own, &domain.TaskFilter{Search: ptr("   ")}, []*domain.Task{bug, queued, listed, plain, elsewhere}},
			{"affects file", own, &domain.TaskFilter{AffectsFile: ptr("main.go")}, []*domain.Task{plain}},
			{"relationship type", own, &domain.TaskFilter{RelationshipType: ptr(domain.RelDependsOn)}, []*domain.Task{bug, listed}},
			{"combined", own, &domain.TaskFilter{Status: []domain.TaskStatus{domain.StatusDraft}, Search: ptr("cpu")}, []*domain.Task{bug, elsewhere}},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				tq := store.TaskQuery{Scope: tc.scope, Filter: tc.filter}
				pages, err := b.db.Tasks.Tasks(ctx, tq)
				require.NoError(t, err)
				want := make([]string, len(tc.want))
				for i, w := range tc.want {
					want[i] = w.ID
				}
				require.Equal(t, want, pageIDs(pages[""]))
				n, err := b.db.Tasks.CountTasks(ctx, tq)
				require.NoError(t, err)
				require.Equal(t, len(tc.want), n[""])
			})
		}
	})
}

func TestOtherConnections(t *testing.T) {
	run(t, func(t *testing.T, b *bundle) {
		ctx := b.ctx
		second := b.newProject(t, "second")
		for i, slug := range []string{"c-proj", "d-proj", "e-proj"} {
			p := &domain.Project{ID: uuid.NewString(), Slug: slug, Name: strings.ToUpper(slug), OwnerID: b.user.ID,
				Status: domain.ProjectArchived, CreatedAt: ts(time.Duration(i+1) * time.Hour), UpdatedAt: ts(0)}
			require.NoError(t, b.db.Projects.CreateProject(ctx, p))
		}
		pg, err := b.db.Projects.Projects(ctx, domain.ProjectScope{OwnerID: b.user.ID}, nil, domain.PageArgs{First: ptr(2)})
		require.NoError(t, err)
		require.Len(t, pg.Items, 2)
		require.True(t, pg.HasNextPage)
		total, err := pg.Total(ctx)
		require.NoError(t, err)
		require.Equal(t, 5, total)
		rest, err := b.db.Projects.Projects(ctx, domain.ProjectScope{OwnerID: b.user.ID}, nil, domain.PageArgs{First: ptr(10), After: ptr(pg.Cursors[1])})
		require.NoError(t, err)
		require.Len(t, rest.Items, 3)
		require.Equal(t, "c-proj", rest.Items[0].Slug)

		pg, err = b.db.Projects.Projects(ctx, domain.ProjectScope{All: true}, &domain.ProjectFilter{Status: []domain.ProjectStatus{domain.ProjectArchived}, Search: ptr("D-P")}, domain.PageArgs{})
		require.NoError(t, err)
		require.Len(t, pg.Items, 1)
		require.Equal(t, "d-proj", pg.Items[0].Slug)
		pg, err = b.db.Projects.Projects(ctx, domain.ProjectScope{ProjectID: second.ID}, nil, domain.PageArgs{})
		require.NoError(t, err)
		require.Len(t, pg.Items, 1)

		byOwner, err := b.db.Projects.ProjectsByOwners(ctx, domain.ProjectScope{All: true}, []string{b.user.ID, uuid.NewString()}, domain.PageArgs{First: ptr(3)})
		require.NoError(t, err)
		require.Len(t, byOwner[b.user.ID].Items, 3)
		ownerCounts, err := b.db.Projects.CountProjectsByOwners(ctx, domain.ProjectScope{All: true}, []string{b.user.ID})
		require.NoError(t, err)
		require.Equal(t, 5, ownerCounts[b.user.ID])

		// ideas and lists per project, items per list
		for i := range 3 {
			require.NoError(t, b.db.Projects.CreateIdea(ctx, &domain.Idea{ID: uuid.NewString(), Slug: fmt.Sprintf("i%d", i), ProjectID: b.project.ID,
				Name: "I", LifecycleStage: "spark", CreatedAt: ts(time.Duration(i) * time.Second), UpdatedAt: ts(0)}))
		}
		ideas, err := b.db.Projects.IdeasByProjects(ctx, []string{b.project.ID, second.ID}, domain.PageArgs{First: ptr(2)})
		require.NoError(t, err)
		require.Equal(t, "i0", ideas[b.project.ID].Items[0].Slug)
		require.Len(t, ideas[b.project.ID].Items, 2)
		require.Empty(t, ideas[second.ID].Items)
		ideaCounts, err := b.db.Projects.CountIdeasByProjects(ctx, []string{b.project.ID, second.ID})
		require.NoError(t, err)
		require.Equal(t, map[string]int{b.project.ID: 3}, ideaCounts)

		list := b.newList(t, "L", 1)
		lists, err := b.db.Lists.TaskListsByProjects(ctx, []string{b.project.ID, second.ID}, domain.PageArgs{})
		require.NoError(t, err)
		require.Len(t, lists[b.project.ID].Items, 1)
		listCounts, err := b.db.Lists.CountTaskListsByProjects(ctx, []string{b.project.ID})
		require.NoError(t, err)
		require.Equal(t, 1, listCounts[b.project.ID])

		var items []*domain.TaskListItem
		for i := range 5 {
			task := b.insertTask(t, b.task(b.project, i+1))
			items = append(items, &domain.TaskListItem{ID: uuid.NewString(), TaskListID: list.ID, TaskID: task.ID,
				Position: 5 - i, ItemStatus: domain.ItemPending, AddedAt: ts(0)})
		}
		require.NoError(t, b.db.Lists.InsertItems(ctx, items))
		itemPages, err := b.db.Lists.ItemsByLists(ctx, []string{list.ID}, domain.PageArgs{First: ptr(3)})
		require.NoError(t, err)
		var positions []int
		for _, it := range itemPages[list.ID].Items {
			positions = append(positions, it.Position)
		}
		require.Equal(t, []int{1, 2, 3}, positions, "items come in list order")
		itemCounts, err := b.db.Lists.CountItemsByLists(ctx, []string{list.ID})
		require.NoError(t, err)
		require.Equal(t, 5, itemCounts[list.ID])
		require.NoError(t, b.db.Lists.DeleteItemOfTask(ctx, items[0].TaskID))
		itemCounts, err = b.db.Lists.CountItemsByLists(ctx, []string{list.ID})
		require.NoError(t, err)
		require.Equal(t, 4, itemCounts[list.ID])

		// templates visible to a member: GLOBAL, own USER ones, own projects' ones
		stranger := b.newUser(t, "stranger")
		tpl := func(name string, scope domain.TemplateScope, scopeID *string) *domain.TaskTemplate {
			x := &domain.TaskTemplate{ID: uuid.NewString(), Name: name, Category: domain.CategoryTask, Scope: scope, ScopeID: scopeID,
				CreatedAt: ts(time.Duration(len(name)) * time.Second), UpdatedAt: ts(0)}
			require.NoError(t, b.db.Lists.InsertTemplate(ctx, x))
			return x
		}
		tpl("g", domain.ScopeGlobal, nil)
		tpl("mine", domain.ScopeUser, &b.user.ID)
		tpl("theirs", domain.ScopeUser, &stranger.ID)
		tpl("project", domain.ScopeProject, &b.project.ID)
		tpl("second-proj", domain.ScopeProject, &second.ID)
		names := func(tq store.TemplateQuery) []string {
			pg, err := b.db.Lists.Templates(ctx, tq)
			require.NoError(t, err)
			var out []string
			for _, x := range pg.Items {
				out = append(out, x.Name)
			}
			n, err := pg.Total(ctx)
			require.NoError(t, err)
			require.Equal(t, len(out), n)
			return out
		}
		require.Equal(t, []string{"g", "mine", "project", "second-proj"}, names(store.TemplateQuery{Scope: domain.ProjectScope{OwnerID: b.user.ID}, UserID: b.user.ID}))
		require.Equal(t, []string{"g", "mine", "project"}, names(store.TemplateQuery{ProjectID: b.project.ID, UserID: b.user.ID}))
		require.Equal(t, []string{"g", "theirs"}, names(store.TemplateQuery{Scope: domain.ProjectScope{OwnerID: stranger.ID}, UserID: stranger.ID}))
		require.Len(t, names(store.TemplateQuery{Scope: domain.ProjectScope{All: true}}), 5)
	})
}

func TestTaskPagingPerIdea(t *testing.T) {
	run(t, func(t *testing.T, b *bundle) {
		var ideas []*domain.Idea
		for i := range 3 {
			idea := &domain.Idea{ID: uuid.NewString(), Slug: fmt.Sprintf("idea-%d", i), ProjectID: b.project.ID, Name: "I",
				LifecycleStage: "spark", CreatedAt: ts(0), UpdatedAt: ts(0)}
			require.NoError(t, b.db.Projects.CreateIdea(b.ctx, idea))
			ideas = append(ideas, idea)
		}
		var first []*domain.Task
		for i := range 6 {
			task := b.task(b.project, i+1)
			task.CreatedAt = ts(time.Duration(i) * time.Second)
			switch {
			case i < 4:
				task.IdeaID = &ideas[0].ID
				first = append(first, task)
			case i == 4:
				task.IdeaID = &ideas[1].ID
			}
			b.insertTask(t, task)
		}
		parents := []string{ideas[0].ID, ideas[1].ID, ideas[2].ID}
		pages, err := b.db.Tasks.Tasks(b.ctx, store.TaskQuery{Scope: domain.ProjectScope{All: true}, IdeaIDs: parents, Page: domain.PageArgs{First: ptr(3)}})
		require.NoError(t, err)
		require.Equal(t, expectedOrder(first, domain.OrderCreatedAt, domain.OrderAsc)[:3], pageIDs(pages[ideas[0].ID]))
		require.True(t, pages[ideas[0].ID].HasNextPage)
		require.Len(t, pages[ideas[1].ID].Items, 1)
		require.Empty(t, pages[ideas[2].ID].Items)
		counts, err := b.db.Tasks.CountTasks(b.ctx, store.TaskQuery{Scope: domain.ProjectScope{All: true}, IdeaIDs: parents})
		require.NoError(t, err)
		require.Equal(t, map[string]int{ideas[0].ID: 4, ideas[1].ID: 1}, counts)
	})
}
