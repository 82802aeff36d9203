package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPlannerAndWorkerRecords: a planner's workings and request validation,
// a worker's failures with their criteria and message (three alike are
// flagged), a message's owner, and the shapes of taskContext and tables.
func TestPlannerAndWorkerRecords(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		f := newRoutingFixture(t, s)
		pl := f.planner(t, M{"failedTaskLimit": 10}).S("id")
		ctx := M{"userRequest": "top products", "context": "Q3", "previousOutputs": "none"}
		tables := []any{M{"tableName": "sales", "rowCount": 120, "top10Md": "| a |", "columns": []any{
			M{"columnName": "sku", "pctDistinct": 98.5, "min": "A1", "max": "Z9", "top3Values": []any{"A1", "B2", 3}}}}}
		w := f.worker(t, pl, M{"taskContext": ctx, "tables": tables, "acceptanceCriteria": []string{"has totals", "sorted"}}).S("id")
		other := f.worker(t, f.planner(t, nil).S("id"), nil).S("id")

		// Shapes.
		bad := func(in M, field string) {
			t.Helper()
			r := s.requireCode(t, f.token, `mutation($in: CreateWorkerInput!) { createWorker(input: $in) { worker { id } } }`,
				M{"in": in}, "BAD_USER_INPUT")
			require.Equal(t, field, r.ext("field"))
		}
		bad(M{"plannerId": pl, "taskDescription": "x", "taskContext": M{"userRequest": 3}}, "taskContext.userRequest")
		bad(M{"plannerId": pl, "taskDescription": "x", "taskContext": M{"goal": "x"}}, "taskContext.goal")
		bad(M{"plannerId": pl, "taskDescription": "x", "taskContext": []any{"x"}}, "taskContext")
		bad(M{"plannerId": pl, "taskDescription": "x", "tables": []any{M{"rowCount": 1}}}, "tables[0].tableName")
		bad(M{"plannerId": pl, "taskDescription": "x", "tables": []any{M{"tableName": "t", "rowCount": -1}}}, "tables[0].rowCount")
		bad(M{"plannerId": pl, "taskDescription": "x", "tables": []any{M{"tableName": "t", "columns": []any{
			M{"columnName": "c", "pctDistinct": 101}}}}}, "tables[0].columns[0].pctDistinct")
		bad(M{"plannerId": pl, "taskDescription": "x", "tables": []any{M{"tableName": "t", "columns": []any{
			M{"columnName": "c", "top3Values": []any{1, 2, 3, 4}}}}}}, "tables[0].columns[0].top3Values")

		// Failures: criteria and message only with FAILED_VALIDATION.
		r := f.updateWorker(t, M{"id": w, "taskStatus": "IN_PROGRESS", "failedCriteria": []string{"x"}})
		require.Equal(t, "BAD_USER_INPUT", r.code())
		require.Equal(t, "failedCriteria", r.ext("field"))
		f.moveWorker(t, w, "IN_PROGRESS")
		failQ := `mutation($in: UpdateWorkerInput!) { updateWorker(input: $in) { worker { currentAttempt threeIdenticalFailures
			failures { attempt failedCriteria message at } } } }`
		fail := func(criteria []string, msg string) jv {
			t.Helper()
			got := s.query(t, f.token, failQ, M{"in": M{"id": w, "taskStatus": "FAILED_VALIDATION", "failedCriteria": criteria, "message": msg}}).
				at("updateWorker.worker")
			f.moveWorker(t, w, "PENDING", "IN_PROGRESS")
			return got
		}
		fail([]string{"sorted"}, "not sorted")
		fail([]string{"has totals", "sorted"}, "no totals")
		got := fail([]string{"sorted", "has totals"}, "no totals")
		require.False(t, got.B("threeIdenticalFailures"), "the first differs")
		got = fail([]string{"has totals", "sorted"}, "no totals")
		require.True(t, got.B("threeIdenticalFailures"), "the last three alike, criteria in any order")
		fs := got.L("failures")
		require.Len(t, fs, 4)
		require.Equal(t, []int{1, 2, 3, 4}, []int{fs[0].N("attempt"), fs[1].N("attempt"), fs[2].N("attempt"), fs[3].N("attempt")})
		require.Equal(t, []string{"sorted"}, fs[0].Strs("failedCriteria"))
		require.Equal(t, "not sorted", fs[0].S("message"))

		// Workings and the request validation.
		upd := `mutation($in: UpdatePlannerInput!) { updatePlanner(input: $in) { planner {
			workings { worker { id } title description outcome } requestValidation { userRequestFulfilled progressSummary } } } }`
		r = s.requireCode(t, f.token, upd, M{"in": M{"id": pl, "workings": []any{M{"title": "x", "workerId": other}}}}, "NOT_FOUND")
		require.Equal(t, "workings[0].workerId", r.ext("field"))
		r = s.requireCode(t, f.token, upd, M{"in": M{"id": pl, "workings": []any{M{"title": " "}}}}, "BAD_USER_INPUT")
		require.Equal(t, "workings[0].title", r.ext("field"))
		r = s.requireCode(t, f.token, upd, M{"in": M{"id": pl, "requestValidation": M{"userRequestFulfilled": true, "progressSummary": ""}}}, "BAD_USER_INPUT")
		require.Equal(t, "requestValidation.progressSummary", r.ext("field"))
		p := s.query(t, f.token, upd, M{"in": M{"id": pl,
			"workings":          []any{M{"workerId": w, "title": "Load sales", "outcome": "failed 4 times"}, M{"title": "Plan", "description": "split"}},
			"requestValidation": M{"userRequestFulfilled": false, "progressSummary": "sales not loaded"}}}).at("updatePlanner.planner")
		require.Equal(t, w, p.S("workings.0.worker.id"))
		require.Equal(t, "failed 4 times", p.S("workings.0.outcome"))
		require.True(t, p.Null("workings.1.worker"))
		require.Equal(t, "split", p.S("workings.1.description"))
		require.False(t, p.B("requestValidation.userRequestFulfilled"))
		require.Equal(t, "sales not loaded", p.S("requestValidation.progressSummary"))

		// A message's owner.
		addQ := `mutation($in: AddAgentMessageInput!) { addAgentMessage(input: $in) { message { id owner { __typename ... on Worker { id } ... on Planner { id } } } } }`
		m := s.query(t, f.token, addQ, M{"in": M{"workerId": w, "role": "USER", "content": M{"text": "hi"}}}).at("addAgentMessage.message")
		require.Equal(t, "Worker", m.S("owner.__typename"))
		require.Equal(t, w, m.S("owner.id"))
		s.query(t, f.token, addQ, M{"in": M{"plannerId": pl, "role": "ASSISTANT", "content": M{"text": "ok"}}})
		msgs := s.query(t, f.token, `query($id: ID!) { planner(id: $id) { messages { nodes { owner { ... on Planner { id } } } } } }`,
			M{"id": pl}).L("planner.messages.nodes")
		require.Len(t, msgs, 1)
		require.Equal(t, pl, msgs[0].S("owner.id"))
	})
}
