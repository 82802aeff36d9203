package main

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// historyTreeQuery reads each task of a list down its execution history:
// its live agent and that agent's wave with the wave's agents and
// executions, its executions with their waves and agents, its test results
// with their task, run, agent and execution, and its transitions' agents.
const historyTreeQuery = `query($id: ID!) { taskList(id: $id) { tasks { nodes { id
	assignedAgent { id status wave { waveNumber agents { id } executions { id } } }
	executions(first: 5) { totalCount nodes { id wave { waveNumber } agent { id endReason } } }
	testResults(first: 5) { totalCount nodes { executedBy task { id } run { id } agent { id } execution { id } } }
	stateHistory { changedBy changedByAgent { id status } } } } } }`

// TestTaskHistoryStatements: the history fields of a list's tasks cost the
// same number of statements for one task with one agent as for five tasks
// with five agents that recorded test results.
func TestTaskHistoryStatements(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		tested := M{"codebaseTests": []string{"go test"}}
		record := func(e *execList, agent string) {
			s.query(t, e.agent, `mutation($in: RecordTestResultInput!) { recordTestResult(input: $in) { testResult { id } } }`,
				M{"in": M{"agentId": agent, "level": "CODEBASE", "testIndex": 0, "status": "PASSED"}})
			e.heartbeat(t, agent)
		}
		small := newExecList(t, s, 2)
		small.add(t, "only", tested)
		record(small, small.claim(t, small.start(t)).S("agent.id"))

		large := newExecList(t, s, 5)
		for i := 1; i <= 5; i++ {
			large.add(t, fmt.Sprintf("T%d", i), tested)
		}
		run := large.start(t)
		for range 5 {
			record(large, large.claim(t, run).S("agent.id"))
		}

		count := func(list string) (int64, jv) {
			s.query(t, s.AdminToken, historyTreeQuery, M{"id": list}) // warm the token's last-used mark
			before := s.DB.Statements()
			d := s.query(t, s.AdminToken, historyTreeQuery, M{"id": list})
			return s.DB.Statements() - before, d
		}
		nSmall, _ := count(small.list)
		nLarge, d := count(large.list)
		held := 0
		for _, n := range d.L("taskList.tasks.nodes") {
			if !n.Null("assignedAgent") {
				held++
				require.Len(t, n.L("assignedAgent.wave.agents"), 5)
				require.Equal(t, 1, n.N("executions.totalCount"))
				require.Equal(t, 1, n.N("testResults.totalCount"))
			}
		}
		require.Equal(t, 5, held)
		require.Equal(t, nSmall, nLarge, "statements for one task vs five tasks")
		t.Logf("task history tree: %d statements", nLarge)
	})
}
