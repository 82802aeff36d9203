package main

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// runTreeQuery walks a list's runs down to waves, assignments, agents and
// their heartbeats, executions and test results.
const runTreeQuery = `query($id: ID!) { taskList(id: $id) { runs { id
	waves { waveNumber assignments { taskStatus task { id } } }
	agents { id status execution { attemptNumber testResults { status } }
		heartbeats(first: 2) { totalCount nodes { status progressPercent } } }
	executions { id testResults { status } } } } }`

// TestRunTreeStatements: the nested execution fields of a run cost the same
// number of statements for a one-task run as for a five-task, three-wave run
// with claimed agents.
func TestRunTreeStatements(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		small := newExecList(t, s, 2)
		small.add(t, "only", nil)
		small.heartbeat(t, small.claim(t, small.start(t)).S("agent.id"))

		large := newExecList(t, s, 2)
		large.fiveTasks(t)
		run := large.start(t)
		for range 2 {
			agent := large.claim(t, run).S("agent.id")
			for range 3 {
				large.heartbeat(t, agent)
			}
		}

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

// conflictsTreeQuery reads every task's current conflicts with both tasks of
// each pair, and the list's analysis connection with its total.
const conflictsTreeQuery = `query($id: ID!) { taskList(id: $id) {
	tasks { nodes { displayId conflicts { conflictType files { filePath } taskA { displayId } taskB { displayId } } } }
	parallelismAnalysis { totalCount nodes { taskA { displayId } taskB { displayId } } } } }`

// TestConflictsStatements: Task.conflicts and TaskList.parallelismAnalysis
// batch through the request's loaders: a list with one conflicting pair costs
// no more statements than the query's reads, as one whose every task
// conflicts with several others: the token, the list, the analysis page,
// the list's task page, the analysis's tasks by id, the tasks' conflicts
// and the analysis's total. The analysis's tasks are the page's: when the
// page is in first, they come from the task loader it primed, and that read
// is not sent — which comes first varies from run to run.
func TestConflictsStatements(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		shared := func(n int) []M {
			out := []M{}
			for i := 0; i < n; i++ {
				out = append(out, M{"filePath": fmt.Sprintf("f%d.go", i), "operation": "UPDATE"})
			}
			return out
		}
		small := newExecList(t, s, 2)
		small.add(t, "A", M{"fileImpacts": shared(1)})
		small.add(t, "B", M{"fileImpacts": shared(1)})
		small.start(t)

		large := newExecList(t, s, 2)
		for i := 0; i < 8; i++ {
			large.add(t, fmt.Sprintf("T%d", i), M{"fileImpacts": shared(2)})
		}
		large.link(t, "T1", "T0", "DEPENDS_ON")
		large.link(t, "T2", "T3", "CONFLICTS_WITH")
		large.start(t)

		count := func(list string) (int64, jv) {
			s.query(t, s.AdminToken, conflictsTreeQuery, M{"id": list}) // warm the token's last-used mark
			before := s.DB.Statements()
			d := s.query(t, s.AdminToken, conflictsTreeQuery, M{"id": list})
			return s.DB.Statements() - before, d
		}
		nSmall, dSmall := count(small.list)
		nLarge, dLarge := count(large.list)
		require.Equal(t, 1, dSmall.N("taskList.parallelismAnalysis.totalCount"))
		require.Equal(t, 28, dLarge.N("taskList.parallelismAnalysis.totalCount")) // every pair of 8 tasks
		require.Len(t, dLarge.L("taskList.tasks.nodes.0.conflicts"), 7)
		const reads = 7
		require.LessOrEqual(t, nSmall, int64(reads), "statements for 1 conflicting pair")
		require.LessOrEqual(t, nLarge, int64(reads), "statements for 28 conflicting pairs")
		require.GreaterOrEqual(t, nLarge, int64(reads-1), "statements for 28 conflicting pairs")
		t.Logf("conflicts tree: %d and %d statements", nSmall, nLarge)
	})
}
