package service_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/service"
)

// TestEmbeddingDimensionKept: a model's dimension in a project, once
// committed, is checked from memory; a dimension whose create rolled back is
// neither stored nor kept; another replica (a second service on the same
// database) checks the committed dimension from the database.
func TestEmbeddingDimensionKept(t *testing.T) {
	run(t, func(t *testing.T, b *bundle) {
		model := "m"
		withVector := func(v []float64) func(*domain.CreateTaskInput) {
			return func(in *domain.CreateTaskInput) { in.Embedding, in.EmbeddingModel = v, &model }
		}
		create := func(svc *service.Service, title string, edit ...func(*domain.CreateTaskInput)) error {
			in := domain.CreateTaskInput{ProjectID: b.project.GlobalID(), Title: title}
			for _, e := range edit {
				e(&in)
			}
			_, err := svc.Tasks.CreateTask(as(b.owner), in)
			return err
		}
		// The model's first vector, in a create the archived list refuses
		// after its dimension was checked: rolled back.
		list, err := b.svc.Lists.CreateTaskList(as(b.owner), domain.CreateTaskListInput{ProjectID: b.project.GlobalID(), Name: "closed"})
		require.NoError(t, err)
		_, err = b.svc.Lists.SetTaskListStatus(as(b.owner), domain.SetTaskListStatusInput{ID: list.GlobalID(), Status: domain.ListArchived})
		require.NoError(t, err)
		err = create(b.svc, "refused", withVector([]float64{1, 2, 3}), func(in *domain.CreateTaskInput) {
			id := list.GlobalID()
			in.TaskListID = &id
		})
		requireField(t, err, "taskListId")
		known, found, err := b.db.Tasks.KnownDimension(context.Background(), b.project.ID, model)
		require.NoError(t, err)
		require.False(t, found, "rolled back: no dimension (got %d)", known)

		// So the model's first committed vector sets it: 2.
		require.NoError(t, create(b.svc, "first", withVector([]float64{0.1, 0.2})))
		for range 2 { // the second from memory
			err = create(b.svc, "wrong", withVector([]float64{1, 2, 3}))
			requireField(t, err, "embedding")
			require.NoError(t, create(b.svc, "right", withVector([]float64{0.3, 0.4})))
		}
		// Another replica reads it from the database.
		other := service.New(b.db, service.Options{})
		requireField(t, create(other, "wrong elsewhere", withVector([]float64{1, 2, 3})), "embedding")
		require.NoError(t, create(other, "right elsewhere", withVector([]float64{0.5, 0.6})))
	})
}

func requireField(t *testing.T, err error, field string) {
	t.Helper()
	var de *domain.Error
	require.ErrorAs(t, err, &de)
	require.Equal(t, field, de.Field, de.Message)
}
