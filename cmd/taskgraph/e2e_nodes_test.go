package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNodes covers node and nodes for every Node type, and viewer.
func TestNodes(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		admin := s.AdminToken
		userID, member := s.member(t, "nodes-member")
		f := newRoleFixture(t, s, member, "nodes")
		ids := f.ids()
		ids["User"] = userID

		t.Run("node", func(t *testing.T) {
			for kind, id := range ids {
				typename, _, _ := strings.Cut(kind, "(")
				for _, tok := range []string{admin, member} {
					d := s.query(t, tok, `query($id: ID!) { node(id: $id) { __typename id
						... on User { slug } ... on ApiToken { name role }
						... on Project { slug } ... on Idea { slug } ... on Task { displayId }
						... on TaskList { name } ... on TaskListItem { position task { id } }
						... on TaskRelationship { type } ... on TaskStateChange { toStatus task { id } }
						... on TaskBlock { reason task { id } } ... on TaskTemplate { scope }
						... on TaskFileImpact { filePath task { id } } } }`, M{"id": id})
					require.Equal(t, typename, d.S("node.__typename"), kind)
					require.Equal(t, id, d.S("node.id"), kind)
					switch typename {
					case "TaskListItem", "TaskStateChange", "TaskFileImpact":
						require.Equal(t, f.task, d.S("node.task.id"))
					case "TaskBlock":
						require.Equal(t, f.task2, d.S("node.task.id"))
					case "Task":
						require.Equal(t, f.displayID, d.S("node.displayId"))
					case "Project":
						require.Equal(t, "nodes", d.S("node.slug"))
					}
				}
			}
			// The id is type-tagged: the right uuid with another type names nothing.
			d := s.query(t, admin, `query($id: ID!) { node(id: $id) { id } }`, M{"id": missingID("Task")})
			require.True(t, d.Null("node"))
			d = s.query(t, admin, `query($id: ID!) { taskList(id: $id) { id } }`, M{"id": f.task})
			require.True(t, d.Null("taskList"))
			for _, bad := range []string{"", "not-base64!", "VGFzazpub3QtYS11dWlk" /* Task:not-a-uuid */} {
				r := s.requireCode(t, admin, `query($id: ID!) { node(id: $id) { id } }`, M{"id": bad}, "BAD_USER_INPUT")
				require.Equal(t, "id", r.ext("field"))
			}
		})

		t.Run("nodes", func(t *testing.T) {
			order := []string{f.task, missingID("Project"), f.project, userID, f.task, f.list}
			d := s.query(t, member, `query($ids: [ID!]!) { nodes(ids: $ids) { __typename id } }`, M{"ids": order})
			nodes := d.L("nodes")
			require.Len(t, nodes, len(order))
			for i, id := range order {
				if i == 1 {
					require.True(t, nodes[i].Null(""))
					continue
				}
				require.Equal(t, id, nodes[i].S("id"), "nodes keep the order asked")
			}
			require.Equal(t, "Task", nodes[0].S("__typename"))
			require.Equal(t, "User", nodes[3].S("__typename"))
			require.Empty(t, s.query(t, member, `{ nodes(ids: []) { id } }`, nil).L("nodes"))
			many := make([]string, 101)
			for i := range many {
				many[i] = f.task
			}
			s.requireCode(t, member, `query($ids: [ID!]!) { nodes(ids: $ids) { id } }`, M{"ids": many}, "LIMIT_EXCEEDED")
			r := s.requireCode(t, member, `query($ids: [ID!]!) { nodes(ids: $ids) { id } }`, M{"ids": []string{f.task, "junk"}}, "BAD_USER_INPUT")
			require.Equal(t, "ids", r.ext("field"))
		})

		t.Run("viewer", func(t *testing.T) {
			d := s.query(t, member, `{ viewer { id slug name email settings createdAt updatedAt apiTokens { id role user { id } } projects { nodes { slug } } } }`, nil)
			require.Equal(t, userID, d.S("viewer.id"))
			require.Equal(t, "nodes-member", d.S("viewer.slug"))
			require.Equal(t, "nodes-member@example.com", d.S("viewer.email"))
			require.Equal(t, "MEMBER", d.S("viewer.apiTokens.0.role"))
			require.Equal(t, userID, d.S("viewer.apiTokens.0.user.id"))
			require.Equal(t, []string{"nodes"}, d.Col("viewer.projects.nodes", "slug"))
		})
	})
}
