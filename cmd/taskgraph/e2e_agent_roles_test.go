package main

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAgentMutationsByRole: the API gives the agent mutations to AGENT tokens
// of the project, to admins (everything) and to a MEMBER in the projects it
// owns; anyone else does not learn that the run or agent exists.
func TestAgentMutationsByRole(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		n := planSlugs.Add(1)
		_, owner := s.member(t, fmt.Sprintf("owner%04d", n))
		_, stranger := s.member(t, fmt.Sprintf("stranger%04d", n))
		e := newExecList(t, s, 2)
		e.token = owner
		e.project = s.createProject(t, owner, fmt.Sprintf("own%04d", n))
		e.list = s.createList(t, owner, e.project, "mine")
		e.add(t, "T1", nil)
		run := e.start(t)

		claim := M{"in": M{"runId": run, "hostname": "h"}}
		s.requireCode(t, stranger, claimMutation, claim, "NOT_FOUND")
		c := s.query(t, owner, claimMutation, claim).at("claimTask")
		require.Equal(t, "IN_PROGRESS", c.S("task.status"))
		agent := c.S("agent.id")

		beat := `mutation($in: HeartbeatInput!) { heartbeat(input: $in) { directive agent { heartbeatCount } } }`
		s.requireCode(t, stranger, beat, M{"in": M{"agentId": agent}}, "NOT_FOUND")
		h := s.query(t, owner, beat, M{"in": M{"agentId": agent, "progressPercent": 50}}).at("heartbeat")
		require.Equal(t, "CONTINUE", h.S("directive"))
		require.Equal(t, 1, h.N("agent.heartbeatCount"))

		s.requireCode(t, stranger, completeMutation, M{"in": M{"agentId": agent}}, "NOT_FOUND")
		done := s.query(t, owner, completeMutation, M{"in": M{"agentId": agent, "filesModified": []string{}}}).at("completeTask")
		require.Equal(t, "COMPLETED", done.S("task.status"))
		require.Equal(t, "COMPLETED", e.run(t, run).S("status"))
	})
}
