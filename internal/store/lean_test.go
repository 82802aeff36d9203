package store_test

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/domain"
)

// TestShownReads: a read showing some fields is the full read with exactly
// the other fields zero (but for those it always reads), on a task, an
// impact and a link that set every column.
func TestShownReads(t *testing.T) {
	run(t, func(t *testing.T, b *bundle) {
		parent := b.task(b.project, 0)
		b.insertTask(t, parent)
		task := b.task(b.project, 1)
		task.Description = "why"
		task.AcceptanceCriteria = domain.Strings{"a"}
		task.CodebaseTests = domain.Strings{"c"}
		task.APITests = domain.Strings{"api"}
		task.UITests = domain.Strings{"ui"}
		task.AffectedFiles = domain.Strings{"f.go"}
		task.ExecutionLog = domain.JSON(`{"k":1}`)
		task.Embedding = []byte{1, 2, 3}
		task.EmbeddingModel = ptr("m")
		task.Deadline = ptr(ts(48 * 3600e9))
		task.UpdatedAt = ts(3600e9)
		task.StartedAt = ptr(ts(7200e9))
		task.CompletedAt = ptr(ts(9000e9))
		task.Queue = ptr(domain.QueueEvaluation)
		task.Effort = ptr(domain.EffortSmall)
		task.ActualEffortMinutes = ptr(30)
		b.insertTask(t, task)
		impact := &domain.TaskFileImpact{ID: uuid.NewString(), TaskID: task.ID, FilePath: "src/a.go", Operation: domain.OpUpdate,
			Confidence: 0.5, Source: domain.SourceAIEstimate, WasAccurate: ptr(true), ValidatedAt: ptr(ts(1e9)), CreatedAt: ts(0), UpdatedAt: ts(2e9)}
		require.NoError(t, b.db.Tasks.InsertFileImpacts(b.ctx, []*domain.TaskFileImpact{impact}))
		link := &domain.TaskRelationship{ID: uuid.NewString(), SourceTaskID: task.ID, TargetTaskID: parent.ID, Type: domain.RelDependsOn,
			Strength: ptr(0.75), Notes: ptr("first"), CreatedAt: ts(3e9), CreatedByID: ptr(task.UserID)}
		require.NoError(t, b.db.Tasks.InsertRelationship(b.ctx, link))

		fullTask := b.loadTask(t, task.ID)
		fullImpacts, err := b.db.Tasks.FileImpactsOfTasks(b.ctx, []string{task.ID})
		require.NoError(t, err)
		fullLinks, err := b.db.Tasks.RelationshipsFromTasks(b.ctx, []string{task.ID})
		require.NoError(t, err)
		require.Len(t, fullLinks, 1)
		for _, fields := range [][]string{nil, {"Title", "Status"}, {"Deadline", "ExecutionLog", "AcceptanceCriteria", "Embedding"},
			fieldNames[domain.Task]()} {
			got, err := b.db.Tasks.ShownTasksByIDs(b.ctx, fields, []string{task.ID})
			require.NoError(t, err)
			require.Len(t, got, 1)
			require.Equal(t, utc(only(fullTask, append(fields, "ID", "ProjectID"))), utc(got[0]), "tasks showing %v", fields)
		}
		for _, fields := range [][]string{nil, {"FilePath", "Operation"}, fieldNames[domain.TaskFileImpact]()} {
			got, err := b.db.Tasks.ShownFileImpactsOfTasks(b.ctx, fields, []string{task.ID})
			require.NoError(t, err)
			require.Len(t, got, 1)
			require.Equal(t, utc(only(fullImpacts[0], append(fields, "ID", "TaskID"))), utc(got[0]), "impacts showing %v", fields)
		}
		for _, dir := range []domain.RelationshipDirection{domain.DirectionBoth, domain.DirectionOutgoing, domain.DirectionIncoming} {
			end := task.ID
			if dir == domain.DirectionIncoming {
				end = parent.ID
			}
			for _, fields := range [][]string{nil, {"Notes"}, fieldNames[domain.TaskRelationship]()} {
				got, err := b.db.Tasks.ShownRelationshipsOfTasks(b.ctx, fields, dir, []string{end})
				require.NoError(t, err)
				require.Len(t, got, 1)
				require.Equal(t, utc(only(fullLinks[0], append(fields, "ID", "SourceTaskID", "TargetTaskID", "Type"))), utc(got[0]),
					"links %s showing %v", dir, fields)
			}
		}
		require.Panics(t, func() { _, _ = b.db.Tasks.ShownTasksByIDs(b.ctx, []string{"Nope"}, []string{task.ID}) })
	})
}

// only is a copy of v with every field outside fields zero.
func only[T any](v *T, fields []string) *T {
	out := *v
	rv := reflect.ValueOf(&out).Elem()
	for i := range rv.NumField() {
		if !slices.Contains(fields, rv.Type().Field(i).Name) {
			rv.Field(i).SetZero()
		}
	}
	return &out
}

// fieldNames are the names of T's fields.
func fieldNames[T any]() []string {
	var out []string
	for f := range reflect.TypeFor[T]().Fields() {
		out = append(out, f.Name)
	}
	return out
}

// TestKeyListLookups: lookups by key lists padded with repeats answer each
// row once, whatever the list's length and repeats.
func TestKeyListLookups(t *testing.T) {
	run(t, func(t *testing.T, b *bundle) {
		var tasks []*domain.Task
		for i := range 5 {
			tasks = append(tasks, b.insertTask(t, b.task(b.project, i)))
		}
		for i := 1; i < 5; i++ {
			require.NoError(t, b.db.Tasks.InsertRelationship(b.ctx, &domain.TaskRelationship{ID: uuid.NewString(),
				SourceTaskID: tasks[0].ID, TargetTaskID: tasks[i].ID, Type: domain.RelRelatedTo, CreatedAt: ts(time.Duration(i) * time.Second)}))
		}
		ids := func(ts []*domain.Task) []string {
			out := make([]string, len(ts))
			for i, t := range ts {
				out[i] = t.ID
			}
			return out
		}
		for n := 1; n <= 5; n++ {
			want := ids(tasks[:n])
			slices.Sort(want)
			asked := append(ids(tasks[:n]), uuid.NewString()) // and one that is not there
			got, err := b.db.Tasks.ShownTasksByIDs(b.ctx, []string{"Title"}, asked)
			require.NoError(t, err)
			require.Equal(t, want, ids(got), "%d tasks", n)

			links, err := b.db.Tasks.ShownRelationshipsOfTasks(b.ctx, nil, domain.DirectionBoth, ids(tasks[:n]))
			require.NoError(t, err)
			require.Len(t, links, 4, "links of %d tasks", n) // each once, though both ends may be asked
		}
	})
}
