package store_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/store"
	"github.com/taskgraph/taskgraph/internal/testdb"
)

func TestOpenAndMigrate(t *testing.T) {
	testdb.RunEmpty(t, func(t *testing.T, url string) {
		ctx := context.Background()
		db, err := store.Open(ctx, url)
		require.NoError(t, err)
		defer db.Close()
		require.NoError(t, db.Ping(ctx))
		want := store.SQLite
		if t.Name() == "TestOpenAndMigrate/postgres" {
			want = store.Postgres
		}
		require.Equal(t, want, db.Dialect())

		st, err := db.MigrationStatuses(ctx)
		require.NoError(t, err)
		require.NotEmpty(t, st)
		for _, s := range st {
			require.False(t, s.Applied, s.Name)
		}
		require.NoError(t, db.Migrate(ctx))
		require.NoError(t, db.Migrate(ctx), "migrating twice is a no-op")
		st, err = db.MigrationStatuses(ctx)
		require.NoError(t, err)
		for _, s := range st {
			require.True(t, s.Applied, s.Name)
			require.Positive(t, s.Version)
		}
		n, err := db.Users.CountUsers(ctx)
		require.NoError(t, err)
		require.Zero(t, n)
	})
}

func TestOpenRejectsBadURLs(t *testing.T) {
	ctx := context.Background()
	for _, url := range []string{"", "mysql://x", "sqlite:", "file.db"} {
		_, err := store.Open(ctx, url)
		require.Error(t, err, url)
	}
	_, err := store.Open(ctx, "postgres://user:secret@127.0.0.1:1/none?sslmode=disable&connect_timeout=1")
	require.Error(t, err)
	require.NotContains(t, err.Error(), "secret", "the password is redacted")
}

func TestRoundTrips(t *testing.T) {
	run(t, func(t *testing.T, b *bundle) {
		ctx := b.ctx
		// users and projects
		gotUsers, err := b.db.Users.UsersByIDs(ctx, []string{b.user.ID})
		require.NoError(t, err)
		require.Equal(t, []*domain.User{b.user}, []*domain.User{utc(gotUsers[0])})
		u, err := b.db.Users.UserBySlug(ctx, "owner")
		require.NoError(t, err)
		require.Equal(t, b.user.ID, u.ID)
		chat := "chat-1"
		u2 := &domain.User{ID: uuid.NewString(), Slug: "u2", Name: "U2", Email: "", TelegramChatID: &chat,
			Settings: domain.JSON(`{"theme": "dark"}`), CreatedAt: ts(time.Second), UpdatedAt: ts(2 * time.Second)}
		require.NoError(t, b.db.Users.CreateUser(ctx, u2))
		gotUsers, err = b.db.Users.UsersByIDs(ctx, []string{u2.ID})
		require.NoError(t, err)
		require.Equal(t, u2, utc(gotUsers[0]))

		gotProjects, err := b.db.Projects.ProjectsByIDs(ctx, []string{b.project.ID})
		require.NoError(t, err)
		require.Equal(t, b.project, utc(gotProjects[0]))
		p, err := b.db.Projects.ProjectBySlug(ctx, "proj")
		require.NoError(t, err)
		require.Equal(t, b.project, utc(p))
		upd := *b.project
		upd.Name, upd.Description, upd.Status, upd.UpdatedAt = "Renamed", "desc", domain.ProjectPaused, ts(time.Hour)
		require.NoError(t, b.db.Projects.UpdateProject(ctx, &upd))
		gotProjects, err = b.db.Projects.ProjectsByIDs(ctx, []string{b.project.ID})
		require.NoError(t, err)
		require.Equal(t, &upd, utc(gotProjects[0]))

		// tokens
		tok := &domain.APIToken{ID: uuid.NewString(), UserID: b.user.ID, Name: "agent", Role: domain.RoleAgent,
			ProjectID: &b.project.ID, TokenHash: "hash-1", CreatedAt: ts(time.Minute)}
		require.NoError(t, b.db.Users.CreateAPIToken(ctx, tok))
		gotTok, err := b.db.Users.APITokenByHash(ctx, "hash-1")
		require.NoError(t, err)
		require.Equal(t, tok, utc(gotTok))
		require.NoError(t, b.db.Users.TouchAPIToken(ctx, tok.ID, ts(2*time.Minute)))
		toks, err := b.db.Users.APITokensByUsers(ctx, []string{b.user.ID})
		require.NoError(t, err)
		require.Len(t, toks, 1)
		require.Equal(t, ts(2*time.Minute), toks[0].LastUsedAt.UTC())
		require.NoError(t, b.db.Users.RevokeAPIToken(ctx, tok.ID, ts(3*time.Minute)))
		_, err = b.db.Users.APITokenByHash(ctx, "hash-1")
		require.ErrorIs(t, err, store.ErrNotFound, "revoked tokens do not authenticate")
		toks, err = b.db.Users.APITokensByIDs(ctx, []string{tok.ID})
		require.NoError(t, err)
		require.Equal(t, ts(3*time.Minute), toks[0].RevokedAt.UTC())
		require.NoError(t, b.db.Users.DeleteRevokedToken(ctx, "hash-1"))
		toks, err = b.db.Users.APITokensByIDs(ctx, []string{tok.ID})
		require.NoError(t, err)
		require.Empty(t, toks)

		// ideas
		idea := &domain.Idea{ID: uuid.NewString(), Slug: "spark", ProjectID: b.project.ID, Name: "Idea", Description: "d",
			LifecycleStage: "spark", CreatedAt: ts(time.Second), UpdatedAt: ts(time.Second)}
		require.NoError(t, b.db.Projects.CreateIdea(ctx, idea))
		ideas, err := b.db.Projects.IdeasByIDs(ctx, []string{idea.ID})
		require.NoError(t, err)
		require.Equal(t, idea, utc(ideas[0]))

		// task lists
		list := &domain.TaskList{ID: uuid.NewString(), Schedule: domain.ScheduleWaves, Name: "L", Description: "list", ProjectID: b.project.ID,
			UserID: b.user.ID, Status: domain.ListReady, MaxParallelAgents: 4, AutoExecute: true,
			TelegramChatID: &chat, CreatedAt: ts(time.Second), UpdatedAt: ts(time.Second),
			StartedAt: ptr(ts(time.Minute))}
		require.NoError(t, b.db.Lists.InsertTaskList(ctx, list))
		lists, err := b.db.Lists.TaskListsByIDs(ctx, []string{list.ID})
		require.NoError(t, err)
		require.Equal(t, list, utc(lists[0]))

		// a task with every column set
		effort, owner, phase := domain.EffortTrivial, domain.OwnerBuildAgent, domain.PhaseAPI
		parent := b.insertTask(t, b.task(b.project, 1))
		task := b.task(b.project, 2)
		task.IdeaID, task.ParentTaskID, task.SupersedesTaskID = &idea.ID, &parent.ID, &parent.ID
		task.TaskListID = &list.ID
		task.Description, task.Status, task.RiskLevel, task.Priority = "desc", domain.StatusInProgress, domain.RiskHigh, domain.PriorityP1
		task.PriorityScore, task.BlocksCount, task.IsQuickWin = 165, 1, true
		task.Deadline, task.Effort, task.Owner, task.Phase = ptr(ts(48*time.Hour)), &effort, &owner, &phase
		task.AssignedAgentID = ptr(uuid.NewString())
		task.AcceptanceCriteria = domain.Strings{"works", "is tested"}
		task.CodebaseTests, task.APITests, task.UITests = domain.Strings{"go test"}, domain.Strings{"api 1"}, domain.Strings{"ui 1"}
		task.ActualEffortMinutes = ptr(30)
		task.AffectedFiles = domain.Strings{"a.go", "b.go"}
		task.ExecutionLog = domain.JSON(`{"a": 1, "b": [1, 2]}`)
		task.Version = 3
		task.Embedding = domain.EncodeEmbedding([]float64{0.5, -1, 2})
		task.EmbeddingModel = ptr("text-embed")
		task.CreatedAt, task.UpdatedAt = ts(time.Second), ts(2*time.Second)
		task.StartedAt, task.CompletedAt = ptr(ts(3*time.Second)), ptr(ts(4*time.Second))
		b.insertTask(t, task)
		require.Equal(t, task, utc(b.loadTask(t, task.ID)))
		byDisplay, err := b.db.Tasks.TaskByDisplayID(ctx, task.DisplayID)
		require.NoError(t, err)
		require.Equal(t, task, utc(byDisplay))
		locked, err := b.db.Tasks.TaskForUpdate(ctx, task.ID)
		require.NoError(t, err)
		require.Equal(t, task, utc(locked))

		// a minimal task: optional columns read back as NULL / empty lists
		got := b.loadTask(t, parent.ID)
		require.Nil(t, got.Deadline)
		require.Nil(t, got.Effort)
		require.Nil(t, got.Embedding)
		require.Nil(t, got.ExecutionLog)
		require.Equal(t, domain.Strings{}, got.AcceptanceCriteria)
		require.Equal(t, domain.Strings{}, got.AffectedFiles)

		// list items
		item := &domain.TaskListItem{ID: uuid.NewString(), TaskListID: list.ID, TaskID: task.ID, Position: 1,
			ItemStatus: domain.ItemInProgress, StartedAt: ptr(ts(time.Minute)), ExecutionNotes: ptr("n"), AddedAt: ts(time.Second)}
		require.NoError(t, b.db.Lists.InsertItems(ctx, []*domain.TaskListItem{item}))
		items, err := b.db.Lists.ItemsByIDs(ctx, []string{item.ID})
		require.NoError(t, err)
		require.Equal(t, item, utc(items[0]))
		items, err = b.db.Lists.ItemsOfTasks(ctx, []string{task.ID})
		require.NoError(t, err)
		require.Equal(t, item, utc(items[0]))
		require.NoError(t, b.db.Lists.SetItemStatus(ctx, task.ID, domain.ItemCompleted, ptr(ts(time.Hour)), ptr(ts(2*time.Hour))))
		items, err = b.db.Lists.ItemsByIDs(ctx, []string{item.ID})
		require.NoError(t, err)
		require.Equal(t, domain.ItemCompleted, items[0].ItemStatus)
		require.Equal(t, ts(time.Minute), items[0].StartedAt.UTC(), "started_at is kept once set")
		require.Equal(t, ts(2*time.Hour), items[0].CompletedAt.UTC())
		pos, err := b.db.Lists.MaxItemPosition(ctx, list.ID)
		require.NoError(t, err)
		require.Equal(t, 1, pos)

		// relationships
		rel := &domain.TaskRelationship{ID: uuid.NewString(), SourceTaskID: task.ID, TargetTaskID: parent.ID,
			Type: domain.RelSubtaskOf, Strength: ptr(0.75), Notes: ptr("why"), CreatedAt: ts(time.Second), CreatedByID: &b.user.ID}
		require.NoError(t, b.db.Tasks.InsertRelationship(ctx, rel))
		gotRel, err := b.db.Tasks.RelationshipByID(ctx, rel.ID)
		require.NoError(t, err)
		require.Equal(t, rel, utc(gotRel))
		rels, err := b.db.Tasks.RelationshipsOfTasks(ctx, []string{parent.ID})
		require.NoError(t, err)
		require.Len(t, rels, 1)
		require.Equal(t, rel, utc(rels[0]))

		// state history
		from := domain.StatusDraft
		change := &domain.TaskStateChange{ID: uuid.NewString(), TaskID: task.ID, FromStatus: &from,
			ToStatus: domain.StatusPending, Reason: ptr("r"), ChangedBy: ptr("someone"), ChangedAt: ts(time.Second)}
		require.NoError(t, b.db.Tasks.InsertStateChange(ctx, change))
		hist, err := b.db.Tasks.StateHistoryOfTasks(ctx, []string{task.ID})
		require.NoError(t, err)
		require.Equal(t, []*domain.TaskStateChange{change}, []*domain.TaskStateChange{utc(hist[0])})
		changes, err := b.db.Tasks.StateChangesByIDs(ctx, []string{change.ID})
		require.NoError(t, err)
		require.Equal(t, change, utc(changes[0]))

		// blocks
		blk := &domain.TaskBlock{ID: uuid.NewString(), TaskID: task.ID, BlockType: domain.BlockDependency, Reason: "waits",
			BlockingEntityID: &parent.ID, CreatedAt: ts(time.Second)}
		require.NoError(t, b.db.Tasks.InsertBlock(ctx, blk))
		blocks, err := b.db.Tasks.BlocksByIDs(ctx, []string{blk.ID})
		require.NoError(t, err)
		require.Equal(t, blk, utc(blocks[0]))
		n, err := b.db.Tasks.CountOpenBlocks(ctx, task.ID)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		require.NoError(t, b.db.Tasks.ResolveBlock(ctx, blk.ID, ts(time.Hour), "me", ptr("done")))
		resolved, err := b.db.Tasks.BlockForUpdate(ctx, blk.ID)
		require.NoError(t, err)
		blk.ResolvedAt, blk.ResolvedBy, blk.ResolutionNotes = ptr(ts(time.Hour)), ptr("me"), ptr("done")
		require.Equal(t, blk, utc(resolved))
		n, err = b.db.Tasks.CountOpenBlocks(ctx, task.ID)
		require.NoError(t, err)
		require.Zero(t, n)

		// file impacts
		impacts := []*domain.TaskFileImpact{
			{ID: uuid.NewString(), TaskID: task.ID, FilePath: "b.go", Operation: domain.OpUpdate, Confidence: 0.5,
				Source: domain.SourceAIEstimate, WasAccurate: ptr(true), ValidatedAt: ptr(ts(time.Hour)), CreatedAt: ts(0), UpdatedAt: ts(0)},
			{ID: uuid.NewString(), TaskID: task.ID, FilePath: "a.go", Operation: domain.OpCreate, Confidence: 1,
				Source: domain.SourceUserDeclared, CreatedAt: ts(0), UpdatedAt: ts(0)},
		}
		require.NoError(t, b.db.Tasks.ReplaceFileImpacts(ctx, task.ID, impacts))
		gotImpacts, err := b.db.Tasks.FileImpactsOfTasks(ctx, []string{task.ID})
		require.NoError(t, err)
		require.Equal(t, []*domain.TaskFileImpact{impacts[1], impacts[0]}, []*domain.TaskFileImpact{utc(gotImpacts[0]), utc(gotImpacts[1])})
		require.NoError(t, b.db.Tasks.ReplaceFileImpacts(ctx, task.ID, impacts[:1]))
		gotImpacts, err = b.db.Tasks.FileImpactsOfTasks(ctx, []string{task.ID})
		require.NoError(t, err)
		require.Len(t, gotImpacts, 1)
		require.Equal(t, impacts[0], utc(gotImpacts[0]))

		// templates
		tpl := &domain.TaskTemplate{ID: uuid.NewString(), Name: "T", Description: "d", Category: domain.CategoryBug,
			DefaultAcceptanceCriteria: domain.Strings{"ac"}, DefaultCodebaseTests: domain.Strings{"ct"},
			DefaultAPITests: domain.Strings{}, DefaultUITests: domain.Strings{"ui"}, DefaultAffectedFiles: domain.Strings{"f"},
			Scope: domain.ScopeProject, ScopeID: &b.project.ID, CreatedByID: &b.user.ID, CreatedAt: ts(0), UpdatedAt: ts(0)}
		require.NoError(t, b.db.Lists.InsertTemplate(ctx, tpl))
		tpls, err := b.db.Lists.TemplatesByIDs(ctx, []string{tpl.ID})
		require.NoError(t, err)
		require.Equal(t, tpl, utc(tpls[0]))
		require.NoError(t, b.db.Lists.CountTemplateUse(ctx, tpl.ID, ts(time.Hour)))
		tpls, err = b.db.Lists.TemplatesByIDs(ctx, []string{tpl.ID})
		require.NoError(t, err)
		require.Equal(t, 1, tpls[0].UsageCount)
		require.Equal(t, ts(time.Hour), tpls[0].UpdatedAt.UTC())
	})
}

func TestNowIsUTCMicroseconds(t *testing.T) {
	run(t, func(t *testing.T, b *bundle) {
		now, err := b.db.Now(b.ctx)
		require.NoError(t, err)
		require.Equal(t, time.UTC, now.Location())
		require.Equal(t, now, now.Truncate(time.Microsecond))
		require.WithinDuration(t, time.Now(), now, time.Minute)
	})
}

// TestClockFollowsTheDatabase: DB.Clock, which stamps people's writes, and
// Q.Now, which stamps the agent protocol at its statement, are one clock:
// a reading of either lies between readings of the other.
func TestClockFollowsTheDatabase(t *testing.T) {
	run(t, func(t *testing.T, b *bundle) {
		before, err := b.db.Q.Now(b.ctx)
		require.NoError(t, err)
		clock := b.db.Clock()
		after, err := b.db.Q.Now(b.ctx)
		require.NoError(t, err)
		require.Equal(t, time.UTC, clock.Location())
		require.Equal(t, clock, clock.Truncate(time.Microsecond))
		// The clock is placed at the middle of its reading's round trip:
		// allow that half round trip on either side, and this test's own.
		slack := time.Millisecond + after.Sub(before) + b.db.ClockSpread()
		require.False(t, clock.Before(before.Add(-slack)), "clock %v before the database's %v", clock, before)
		require.False(t, clock.After(after.Add(slack)), "clock %v after the database's %v", clock, after)
	})
}

func TestUpdateTaskCompareAndSwap(t *testing.T) {
	run(t, func(t *testing.T, b *bundle) {
		task := b.insertTask(t, b.task(b.project, 1))
		stale := *task

		fresh := b.loadTask(t, task.ID)
		fresh.Title, fresh.UpdatedAt = "renamed", ts(time.Hour)
		require.NoError(t, b.db.Tasks.UpdateTask(b.ctx, fresh))
		require.Equal(t, 2, fresh.Version, "the struct follows the row")
		got := b.loadTask(t, task.ID)
		require.Equal(t, 2, got.Version)
		require.Equal(t, "renamed", got.Title)
		require.Equal(t, ts(time.Hour), got.UpdatedAt.UTC())

		stale.Title = "lost update"
		err := b.db.Tasks.UpdateTask(b.ctx, &stale)
		require.ErrorIs(t, err, store.ErrVersionConflict)
		require.Equal(t, 1, stale.Version, "a failed swap leaves the version alone")
		got = b.loadTask(t, task.ID)
		require.Equal(t, "renamed", got.Title)
		require.Equal(t, 2, got.Version)

		missing := b.task(b.project, 99)
		require.ErrorIs(t, b.db.Tasks.UpdateTask(b.ctx, missing), store.ErrVersionConflict)

		// derived score updates leave the version alone
		require.NoError(t, b.db.Tasks.SetTaskScore(b.ctx, task.ID, 77, true))
		got = b.loadTask(t, task.ID)
		require.Equal(t, 77, got.PriorityScore)
		require.True(t, got.IsQuickWin)
		require.Equal(t, 2, got.Version)
	})
}

func TestErrorMapping(t *testing.T) {
	run(t, func(t *testing.T, b *bundle) {
		ctx := b.ctx
		tests := []struct {
			name string
			do   func() error
			want error
		}{
			{"duplicate user slug", func() error {
				return b.db.Users.CreateUser(ctx, &domain.User{ID: uuid.NewString(), Slug: "owner", Name: "x", CreatedAt: ts(0), UpdatedAt: ts(0)})
			}, store.ErrUnique},
			{"duplicate email", func() error {
				return b.db.Users.CreateUser(ctx, &domain.User{ID: uuid.NewString(), Slug: "other", Name: "x", Email: "owner@example.com", CreatedAt: ts(0), UpdatedAt: ts(0)})
			}, store.ErrUnique},
			{"duplicate primary key", func() error {
				u := *b.user
				u.Slug, u.Email = "fresh", ""
				return b.db.Users.CreateUser(ctx, &u)
			}, store.ErrUnique},
			{"duplicate project slug", func() error {
				return b.db.Projects.CreateProject(ctx, &domain.Project{ID: uuid.NewString(), Slug: "proj", Name: "x", OwnerID: b.user.ID,
					Status: domain.ProjectActive, CreatedAt: ts(0), UpdatedAt: ts(0)})
			}, store.ErrUnique},
			{"project of a missing owner", func() error {
				return b.db.Projects.CreateProject(ctx, &domain.Project{ID: uuid.NewString(), Slug: "orphan", Name: "x", OwnerID: uuid.NewString(),
					Status: domain.ProjectActive, CreatedAt: ts(0), UpdatedAt: ts(0)})
			}, store.ErrForeignKey},
			{"task of a missing project", func() error {
				task := b.task(b.project, 50)
				task.ProjectID = uuid.NewString()
				return b.db.Tasks.InsertTask(ctx, task)
			}, store.ErrForeignKey},
			{"bad project status", func() error {
				return b.db.Projects.CreateProject(ctx, &domain.Project{ID: uuid.NewString(), Slug: "bad", Name: "x", OwnerID: b.user.ID,
					Status: "GONE", CreatedAt: ts(0), UpdatedAt: ts(0)})
			}, store.ErrCheck},
			{"bad task status", func() error {
				task := b.task(b.project, 51)
				task.Status = "DONE"
				return b.db.Tasks.InsertTask(ctx, task)
			}, store.ErrCheck},
			{"queue and list at once", func() error {
				list := &domain.TaskList{ID: uuid.NewString(), Schedule: domain.ScheduleWaves, Name: "L", ProjectID: b.project.ID, UserID: b.user.ID,
					Status: domain.ListDraft, MaxParallelAgents: 1, CreatedAt: ts(0), UpdatedAt: ts(0)}
				if err := b.db.Lists.InsertTaskList(ctx, list); err != nil {
					return err
				}
				task := b.task(b.project, 52)
				task.Queue, task.TaskListID = ptr(domain.QueueEvaluation), &list.ID
				return b.db.Tasks.InsertTask(ctx, task)
			}, store.ErrCheck},
			{"agent token without project", func() error {
				return b.db.Users.CreateAPIToken(ctx, &domain.APIToken{ID: uuid.NewString(), UserID: b.user.ID, Name: "a",
					Role: domain.RoleAgent, TokenHash: "h-agent", CreatedAt: ts(0)})
			}, store.ErrCheck},
			{"missing user", func() error { _, err := b.db.Users.UserBySlug(ctx, "nobody"); return err }, store.ErrNotFound},
			{"missing project", func() error { _, err := b.db.Projects.ProjectBySlug(ctx, "nothing"); return err }, store.ErrNotFound},
			{"missing task", func() error { _, err := b.db.Tasks.TaskForUpdate(ctx, uuid.NewString()); return err }, store.ErrNotFound},
			{"missing display id", func() error { _, err := b.db.Tasks.TaskByDisplayID(ctx, "TU-X-TSK-001"); return err }, store.ErrNotFound},
			{"missing relationship", func() error { _, err := b.db.Tasks.RelationshipByID(ctx, uuid.NewString()); return err }, store.ErrNotFound},
			{"missing token", func() error { _, err := b.db.Users.APITokenByHash(ctx, "none"); return err }, store.ErrNotFound},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				err := tc.do()
				require.ErrorIs(t, err, tc.want)
				for _, other := range []error{store.ErrUnique, store.ErrForeignKey, store.ErrCheck, store.ErrNotFound} {
					if other != tc.want {
						require.False(t, errors.Is(err, other), "%v is not %v", err, other)
					}
				}
			})
		}

		// relationships: duplicate (source, target, type) and self-links
		a := b.insertTask(t, b.task(b.project, 1))
		c := b.insertTask(t, b.task(b.project, 2))
		rel := func(s, t string, typ domain.RelationshipType) *domain.TaskRelationship {
			return &domain.TaskRelationship{ID: uuid.NewString(), SourceTaskID: s, TargetTaskID: t, Type: typ, CreatedAt: ts(0)}
		}
		require.NoError(t, b.db.Tasks.InsertRelationship(ctx, rel(a.ID, c.ID, domain.RelDependsOn)))
		require.ErrorIs(t, b.db.Tasks.InsertRelationship(ctx, rel(a.ID, c.ID, domain.RelDependsOn)), store.ErrUnique)
		require.NoError(t, b.db.Tasks.InsertRelationship(ctx, rel(a.ID, c.ID, domain.RelRelatedTo)), "another type is another link")
		require.ErrorIs(t, b.db.Tasks.InsertRelationship(ctx, rel(a.ID, a.ID, domain.RelRelatedTo)), store.ErrCheck)
		require.ErrorIs(t, b.db.Tasks.InsertRelationship(ctx, rel(a.ID, uuid.NewString(), domain.RelRelatedTo)), store.ErrForeignKey)
		bad := rel(c.ID, a.ID, domain.RelRelatedTo)
		bad.Strength = ptr(1.5)
		require.ErrorIs(t, b.db.Tasks.InsertRelationship(ctx, bad), store.ErrCheck)
		dupDisplay := b.task(b.project, 1)
		require.ErrorIs(t, b.db.Tasks.InsertTask(ctx, dupDisplay), store.ErrUnique, "display ids are unique")
	})
}

func TestInTxRollsBack(t *testing.T) {
	run(t, func(t *testing.T, b *bundle) {
		boom := errors.New("boom")
		task := b.task(b.project, 1)
		err := b.db.InTx(b.ctx, func(q *store.Q) error {
			require.NoError(t, q.Tasks.InsertTask(b.ctx, task))
			return boom
		})
		require.ErrorIs(t, err, boom)
		_, err = b.db.Tasks.TaskForUpdate(b.ctx, task.ID)
		require.ErrorIs(t, err, store.ErrNotFound)

		require.Panics(t, func() {
			_ = b.db.InTx(b.ctx, func(q *store.Q) error {
				require.NoError(t, q.Tasks.InsertTask(b.ctx, task))
				panic("bad")
			})
		})
		_, err = b.db.Tasks.TaskForUpdate(b.ctx, task.ID)
		require.ErrorIs(t, err, store.ErrNotFound)

		require.NoError(t, b.db.InTx(b.ctx, func(q *store.Q) error { return q.Tasks.InsertTask(b.ctx, task) }))
		require.Equal(t, task.ID, b.loadTask(t, task.ID).ID)
	})
}

func TestStatementsCount(t *testing.T) {
	run(t, func(t *testing.T, b *bundle) {
		ctx := b.ctx
		task := b.insertTask(t, b.task(b.project, 1))
		steps := []struct {
			name string
			do   func() error
			want int64
		}{
			{"one select", func() error { _, err := b.db.Tasks.TasksByIDs(ctx, []string{task.ID}); return err }, 1},
			{"one get", func() error { _, err := b.db.Users.CountUsers(ctx); return err }, 1},
			{"one exec", func() error { return b.db.Tasks.SetTaskScore(ctx, task.ID, 1, false) }, 1},
			{"one named exec", func() error { return b.db.Tasks.InsertTask(ctx, b.task(b.project, 2)) }, 1},
			{"a page", func() error {
				_, err := b.db.Tasks.Tasks(ctx, store.TaskQuery{Scope: domain.ProjectScope{All: true}})
				return err
			}, 1},
			{"a nested page", func() error {
				_, err := b.db.Tasks.Tasks(ctx, store.TaskQuery{Scope: domain.ProjectScope{All: true}, ProjectIDs: []string{b.project.ID, uuid.NewString()}})
				return err
			}, 1},
			{"a count", func() error {
				_, err := b.db.Tasks.CountTasks(ctx, store.TaskQuery{Scope: domain.ProjectScope{All: true}})
				return err
			}, 1},
			{"empty batch reads run nothing", func() error { _, err := b.db.Tasks.TasksByIDs(ctx, nil); return err }, 0},
			{"begin + 2 statements + commit", func() error {
				return b.db.InTx(ctx, func(q *store.Q) error {
					if _, err := q.Tasks.TaskForUpdate(ctx, task.ID); err != nil {
						return err
					}
					return q.Tasks.SetTaskScore(ctx, task.ID, 2, false)
				})
			}, 4},
		}
		for _, s := range steps {
			before := b.db.Statements()
			require.NoError(t, s.do(), s.name)
			require.Equal(t, s.want, b.db.Statements()-before, s.name)
		}
	})
}

func TestOpenSQLitePathWithURICharacters(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "a#b?c%20d")
	path := filepath.Join(dir, "x.db")
	db, err := store.Open(ctx, "sqlite:"+path)
	require.NoError(t, err)
	defer db.Close()
	require.NoError(t, db.Migrate(ctx))
	_, err = os.Stat(path)
	require.NoError(t, err, "the database is the file named, not a prefix of it")
	entries, err := os.ReadDir(filepath.Dir(dir))
	require.NoError(t, err)
	require.Len(t, entries, 1, "no stray file beside the directory")
	var fk int
	require.NoError(t, db.SQL().QueryRowContext(ctx, "PRAGMA foreign_keys").Scan(&fk))
	require.Equal(t, 1, fk, "the pragmas still apply")
}
