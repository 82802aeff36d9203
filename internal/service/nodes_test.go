package service_test

import (
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/auth"
	"github.com/taskgraph/taskgraph/internal/domain"
)

func TestNodesVisibility(t *testing.T) {
	run(t, func(t *testing.T, b *bundle) {
		owner := as(b.owner)
		idea, err := b.svc.Projects.CreateIdea(owner, domain.CreateIdeaInput{ProjectID: b.project.GlobalID(), Name: "Idea", Slug: "idea"})
		require.NoError(t, err)
		list, err := b.svc.Lists.CreateTaskList(owner, domain.CreateTaskListInput{ProjectID: b.project.GlobalID(), Name: "L"})
		require.NoError(t, err)
		task := b.createTask("t", func(in *domain.CreateTaskInput) {
			in.TaskListID = ptr(list.GlobalID())
			in.FileImpacts = []*domain.FileImpactInput{{FilePath: "a.go", Operation: domain.OpUpdate}}
		})
		peer := b.createTask("peer")
		rel := b.mustLink(task, peer, domain.RelRelatedTo)
		blk, _, err := b.svc.Tasks.CreateTaskBlock(owner, domain.CreateTaskBlockInput{TaskID: task.GlobalID(), BlockType: domain.BlockManual, Reason: "r"})
		require.NoError(t, err)
		tpl, err := b.svc.Tasks.CreateTaskTemplate(owner, domain.CreateTaskTemplateInput{Name: "tpl", Category: domain.CategoryTask,
			Scope: domain.ScopeProject, ProjectID: ptr(b.project.GlobalID())})
		require.NoError(t, err)
		_, tok, err := b.svc.Accounts.CreateAPIToken(owner, domain.CreateAPITokenInput{UserID: domain.GlobalID(domain.KindUser, b.owner.UserID),
			Name: "mine", Role: domain.RoleMember})
		require.NoError(t, err)
		item, err := b.svc.Lists.ItemOfTask(owner, task.ID)
		require.NoError(t, err)
		hist, err := b.svc.Tasks.StateHistory(owner, task.ID)
		require.NoError(t, err)
		impacts, err := b.svc.Tasks.FileImpacts(owner, task.ID)
		require.NoError(t, err)

		ownerUser := domain.GlobalID(domain.KindUser, b.owner.UserID)
		projectThings := []string{b.project.GlobalID(), idea.GlobalID(), list.GlobalID(), task.GlobalID(), rel.GlobalID(),
			blk.GlobalID(), tpl.GlobalID(), item.GlobalID(), hist[0].GlobalID(), impacts[0].GlobalID()}
		tests := []struct {
			name    string
			p       *auth.Principal
			visible []string
			hidden  []string
		}{
			{"admin", b.admin, append([]string{ownerUser, tok.GlobalID()}, projectThings...), nil},
			{"owner", b.owner, append([]string{ownerUser, tok.GlobalID()}, projectThings...), nil},
			{"other member", b.other, []string{ownerUser}, append([]string{tok.GlobalID()}, projectThings...)},
			{"agent", b.agent, append([]string{ownerUser, tok.GlobalID()}, projectThings...), []string{domain.GlobalID(domain.KindUser, b.other.UserID)}},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				ids := append(append([]string{}, tc.visible...), tc.hidden...)
				ids = append(ids, domain.GlobalID(domain.KindTask, uuid.NewString()))
				nodes, err := b.svc.Nodes(as(tc.p), ids)
				require.NoError(t, err)
				require.Len(t, nodes, len(ids))
				for i, id := range ids {
					if i < len(tc.visible) {
						require.NotNil(t, nodes[i], "%s sees %s", tc.name, id)
						require.Equal(t, id, nodes[i].GlobalID())
					} else {
						require.Nil(t, nodes[i], "%s does not see %s", tc.name, id)
					}
				}
			})
		}

		_, err = b.svc.Node(owner, "not-an-id")
		requireCode(t, err, domain.CodeBadUserInput, "id")
		many := make([]string, domain.MaxPageSize+1)
		for i := range many {
			many[i] = task.GlobalID()
		}
		_, err = b.svc.Nodes(owner, many)
		requireCode(t, err, domain.CodeLimitExceeded, "ids")
	})
}
