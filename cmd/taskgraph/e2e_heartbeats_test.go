package main

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAgentHeartbeatHistory: every heartbeat is recorded and pages through
// BuildAgent.heartbeats, newest first; heartbeats, wave assignments and test
// results resolve through node() for those who see their project only.
func TestAgentHeartbeatHistory(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		e := newExecList(t, s, 1)
		e.add(t, "A", M{"codebaseTests": []string{"go test"}})
		run := e.start(t)
		agent := e.claim(t, run).S("agent.id")
		for _, p := range []int{10, 20, 30} {
			s.query(t, e.agent, heartbeatMutation, M{"in": M{"agentId": agent, "progressPercent": p, "currentStep": "same"}})
		}
		result := s.query(t, e.agent, `mutation($in: RecordTestResultInput!) { recordTestResult(input: $in) { testResult { id } } }`,
			M{"in": M{"agentId": agent, "level": "CODEBASE", "testIndex": 0, "status": "PASSED"}}).S("recordTestResult.testResult.id")

		const page = `query($id: ID!, $after: String) { node(id: $id) { ... on BuildAgent { heartbeats(first: 2, after: $after) {
			totalCount pageInfo { hasNextPage endCursor } nodes { id status progressPercent currentStep recordedAt
			agent { id } run { id } task { title } } } } } }`
		first := s.query(t, e.token, page, M{"id": agent}).at("node.heartbeats")
		require.Equal(t, 3, first.N("totalCount"))
		require.True(t, first.B("pageInfo.hasNextPage"))
		nodes := first.L("nodes")
		require.Len(t, nodes, 2)
		require.Equal(t, 30, nodes[0].N("progressPercent"))
		require.Equal(t, 20, nodes[1].N("progressPercent"))
		require.Equal(t, "RUNNING", nodes[0].S("status"))
		require.Equal(t, "same", nodes[0].S("currentStep"))
		require.Equal(t, agent, nodes[0].S("agent.id"))
		require.Equal(t, run, nodes[0].S("run.id"))
		require.Equal(t, "A", nodes[0].S("task.title"))
		rest := s.query(t, e.token, page, M{"id": agent, "after": first.S("pageInfo.endCursor")}).at("node.heartbeats")
		require.False(t, rest.B("pageInfo.hasNextPage"))
		require.Equal(t, 10, rest.N("nodes.0.progressPercent"))
		s.requireCode(t, e.token, `query($id: ID!) { node(id: $id) { ... on BuildAgent { heartbeats(first: 101) { totalCount } } } }`,
			M{"id": agent}, "LIMIT_EXCEEDED")

		assignment := s.query(t, e.token, `query($id: ID!) { executionRun(id: $id) { waves { assignments { id } } } }`,
			M{"id": run}).S("executionRun.waves.0.assignments.0.id")
		_, stranger := s.member(t, fmt.Sprintf("hbstranger%04d", planSlugs.Add(1)))
		for typ, id := range map[string]string{"HeartbeatRecord": nodes[0].S("id"), "WaveTaskAssignment": assignment,
			"TaskTestResult": result} {
			n := s.query(t, e.agent, `query($id: ID!) { node(id: $id) { __typename id } }`, M{"id": id})
			require.Equal(t, typ, n.S("node.__typename"))
			require.Equal(t, id, n.S("node.id"))
			require.True(t, s.query(t, stranger, `query($id: ID!) { node(id: $id) { id } }`, M{"id": id}).Null("node"), typ)
		}
	})
}
