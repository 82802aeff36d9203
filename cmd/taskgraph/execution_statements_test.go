package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// runTreeQuery walks a list's runs down to waves, assignments, agents,
// executions and test results.
const runTreeQuery = `query($id: ID!) { taskList(id: $id) { runs { id
	waves { waveNumber assignments { taskStatus task { id } } }
	agents { id status execution { attemptNumber testResults { status } } }
	executions { id testResults { status } } } } }`

// TestRunTreeStatements: the nested execution fields of a run cost the same
// number of statements for a one-task run as for a five-task, three-wave run
// with claimed agents.
func TestRunTreeStatements(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		small := newExecList(t, s, 2)
		small.add(t, "only", nil)
		small.claim(t, small.start(t))

		large := newExecList(t, s, 2)
		large.fiveTasks(t)
		run := large.start(t)
		large.claim(t, run)
		large.claim(t, run)

		count := func(list string) int64 {
			s.query(t, s.AdminToken, runTreeQuery, M{"id": list}) // warm the token's last-used mark
			before := s.DB.Statements()
			s.query(t, s.AdminToken, runTreeQuery, M{"id": list})
			return s.DB.Statements() - before
		}
		nSmall, nLarge := count(small.list), count(large.list)
		require.Equal(t, nSmall, nLarge, "statements for a 1-task run vs a 5-task run")
		t.Logf("run tree: %d statements", nLarge)
	})
}
