package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// An update clears a field the client sets to null and keeps a field it leaves
// out, as users of Linear's and GitHub's APIs expect.
func TestUpdateTaskNullClears(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		project := s.createProject(t, s.AdminToken, "clearing")
		parent := s.createTask(t, s.AdminToken, project, "parent", nil)
		deadline := time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339)
		task := s.createTask(t, s.AdminToken, project, "child", M{
			"deadline": deadline, "effort": "TRIVIAL", "owner": "HUMAN", "parentTaskId": parent,
			"acceptanceCriteria": []string{"works"}, "description": "keep me",
		})
		const q = `mutation($input: UpdateTaskInput!) { updateTask(input: $input) { task {
			version deadline effort owner priorityScore isQuickWin description acceptanceCriteria
			parentTask { id } relationships(types: [SUBTASK_OF]) { id } } } }`
		before := s.query(t, s.AdminToken, `query($id: ID!) { node(id: $id) { ... on Task { priorityScore version } } }`, M{"id": task})
		require.Equal(t, 40+15+25, before.N("node.priorityScore"), "P3 + quick win + due within 2 days")

		out := s.query(t, s.AdminToken, q, M{"input": M{"id": task, "deadline": nil, "effort": nil, "parentTaskId": nil, "acceptanceCriteria": nil}})
		got := out.at("updateTask.task")
		require.True(t, got.Null("deadline"))
		require.True(t, got.Null("effort"))
		require.True(t, got.Null("parentTask"))
		require.Empty(t, got.L("relationships"), "the SUBTASK_OF link that mirrored the parent is gone")
		require.Empty(t, got.L("acceptanceCriteria"))
		require.Equal(t, "HUMAN", got.S("owner"), "a field left out is kept")
		require.Equal(t, "keep me", got.S("description"))
		require.False(t, got.B("isQuickWin"))
		require.Equal(t, 40, got.N("priorityScore"))
		require.Equal(t, before.N("node.version")+1, got.N("version"))

		r := s.requireCode(t, s.AdminToken, q, M{"input": M{"id": task, "title": nil}}, "BAD_USER_INPUT")
		require.Equal(t, "title", r.ext("field"))
	})
}
