package sessions_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/sessions"
	"github.com/taskgraph/taskgraph/internal/store"
)

// lessonFixture records 30 lessons: 27 fillers about unrelated tools, and
// three about database migrations, of which one matches the query best.
func lessonFixture(t *testing.T, b *bundle) {
	t.Helper()
	ctx := as(b.agent)
	rec := func(context, worked, lesson, tool string, conf float64) {
		_, err := b.svc.RecordLesson(ctx, domain.RecordLessonInput{ProjectID: &b.project, Context: context,
			WhatWorked: worked, Lesson: lesson, ToolName: &tool, Confidence: conf})
		require.NoError(t, err)
	}
	for i := range 27 {
		rec(fmt.Sprintf("Formatting source file number %d before review", i), "running the formatter",
			fmt.Sprintf("format early, case %d", i), "gofmt", 0.3+float64(i%5)/10)
	}
	rec("A schema migration failed on a locked table", "retrying the migration after the lock cleared",
		"Run database migrations outside peak hours; migrations lock tables", "psql", 0.9)
	rec("Slow test suite", "caching the database between tests", "Reuse the database fixture", "go test", 0.8)
	rec("Deploying the service", "a canary release", "Watch error rates after a migration of traffic", "kubectl", 0.95)
}

func TestLessonSearch(t *testing.T) {
	run(t, func(t *testing.T, b *bundle) {
		lessonFixture(t, b)
		ctx := as(b.owner)
		pg, err := b.svc.Lessons(ctx, sessions.LessonsArgs{ProjectID: &b.project, Query: ptr("database migration locks a table")})
		require.NoError(t, err)
		require.NotEmpty(t, pg.Items)
		require.Equal(t, "psql", *pg.Items[0].ToolName)
		n, err := pg.Total(ctx)
		require.NoError(t, err)
		require.Equal(t, len(pg.Items), n)
		for _, l := range pg.Items {
			require.NotEqual(t, "gofmt", *l.ToolName)
		}

		// Without a query: by confidence.
		pg, err = b.svc.Lessons(ctx, sessions.LessonsArgs{ProjectID: &b.project, MinConfidence: ptr(0.75), First: ptr(2)})
		require.NoError(t, err)
		require.Len(t, pg.Items, 2)
		require.Equal(t, 0.95, pg.Items[0].Confidence)
		require.Equal(t, 0.9, pg.Items[1].Confidence)
		require.True(t, pg.HasNextPage)
		next, err := b.svc.Lessons(ctx, sessions.LessonsArgs{ProjectID: &b.project, MinConfidence: ptr(0.75), First: ptr(50), After: &pg.Cursors[1]})
		require.NoError(t, err)
		require.Len(t, next.Items, 1)
		require.Equal(t, 0.8, next.Items[0].Confidence)
		total, err := next.Total(ctx)
		require.NoError(t, err)
		require.Equal(t, 2+len(next.Items), total)

		// Tool filter; other members see nothing of the project.
		pg, err = b.svc.Lessons(ctx, sessions.LessonsArgs{ToolName: ptr("kubectl")})
		require.NoError(t, err)
		require.Len(t, pg.Items, 1)
		pg, err = b.svc.Lessons(as(b.other), sessions.LessonsArgs{})
		require.NoError(t, err)
		require.Empty(t, pg.Items)

		// A global lesson is seen by everyone; only an admin records one; the
		// same lesson is stored once.
		in := domain.RecordLessonInput{Context: "Any project", WhatWorked: "reading the error", Lesson: "Read errors fully", Confidence: 0.7}
		_, err = b.svc.RecordLesson(as(b.other), in)
		requireCode(t, err, domain.CodeForbidden)
		l1, err := b.svc.RecordLesson(as(b.admin), in)
		require.NoError(t, err)
		require.Nil(t, l1.ProjectID)
		l2, err := b.svc.RecordLesson(as(b.admin), in)
		require.NoError(t, err)
		require.Equal(t, l1.ID, l2.ID)
		pg, err = b.svc.Lessons(as(b.other), sessions.LessonsArgs{Query: ptr("errors")})
		require.NoError(t, err)
		require.Len(t, pg.Items, 1)

		// Bad input.
		_, err = b.svc.RecordLesson(ctx, domain.RecordLessonInput{Context: "c", WhatWorked: "w", Lesson: "l", Confidence: 1.5})
		requireCode(t, err, domain.CodeBadUserInput, "confidence")
		_, err = b.svc.RecordLesson(ctx, domain.RecordLessonInput{Context: " ", WhatWorked: "w", Lesson: "l", Confidence: 0.5})
		requireCode(t, err, domain.CodeBadUserInput, "context")
	})
}

func TestRelevantLessons(t *testing.T) {
	run(t, func(t *testing.T, b *bundle) {
		lessonFixture(t, b)
		task := &domain.Task{ID: "x", ProjectID: b.projectID, Title: "Add a migration for the orders table",
			AffectedFiles: domain.Strings{"db/migrations/0010_orders.sql"}}
		got, err := b.svc.RelevantLessons(as(b.owner), task, ptr(3))
		require.NoError(t, err)
		require.NotEmpty(t, got)
		require.Equal(t, "psql", *got[0].ToolName)
	})
}

// TestLessonIndexFollowsRows: the full-text index follows lessons as they are
// written and deleted.
func TestLessonIndexFollowsRows(t *testing.T) {
	run(t, func(t *testing.T, b *bundle) {
		ctx := as(b.admin)
		search := func() int {
			pg, err := b.svc.Lessons(ctx, sessions.LessonsArgs{Query: ptr("kubernetes rollout")})
			require.NoError(t, err)
			n, err := pg.Total(ctx)
			require.NoError(t, err)
			require.Len(t, pg.Items, n)
			return n
		}
		_, err := b.svc.RecordLesson(ctx, domain.RecordLessonInput{ProjectID: &b.project, Context: "A kubernetes rollout stalled",
			WhatWorked: "pausing it", Lesson: "Watch rollouts", Confidence: 0.5})
		require.NoError(t, err)
		require.Equal(t, 1, search())
		del := `DELETE FROM lessons WHERE project_id = ?`
		if b.db.Dialect() == store.Postgres {
			del = `DELETE FROM lessons WHERE project_id = $1`
		}
		_, err = b.db.SQL().Exec(del, b.projectID)
		require.NoError(t, err)
		require.Equal(t, 0, search())
	})
}
