package main

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// End-to-end tests of the writes that finished things and other agents'
// tokens may not make: a build agent's session is written only with the
// token that claimed the agent (LEASE_LOST otherwise, as the agent calls); a
// COMPLETED or FAILED session takes no steps, state, todo lists or lessons;
// a FAILED planner's workers are not retried and its failures are not
// counted past failedTaskLimit; an ARCHIVED router takes no planners and
// keeps its messages; a telegramChatId has one user.

const (
	setSessionStatusMutation = `mutation($in: SetAgentSessionStatusInput!) { setAgentSessionStatus(input: $in) { session { id status } } }`
	pruneStatesMutation      = `mutation($in: PruneAgentSessionStatesInput!) { pruneAgentSessionStates(input: $in) { deleted } }`
)

// sessionWrites are the writes to a session (and a todo list of it) that
// are fenced, each with the input it is sent.
func sessionWrites(session, todoList string) []struct {
	name, query string
	in          M
} {
	return []struct {
		name, query string
		in          M
	}{
		{"saveAgentSessionState", saveStateMutation, M{"sessionId": session, "expectedVersion": 1, "state": M{"x": "overwritten"}}},
		{"saveAgentSessionState patch", saveStateMutation, M{"sessionId": session, "expectedVersion": 1, "patch": M{"x": "patched"}}},
		{"recordReActStep", recordStepMutation, M{"sessionId": session, "thought": "injected", "actionType": "TOOL_CALL"}},
		{"createTodoList", createTodoListMutation, M{"sessionId": session, "items": []M{{"description": "injected"}}}},
		{"updateTodoItem", updateTodoItemMutation, M{"todoListId": todoList, "position": 0, "status": "SKIPPED"}},
		{"recordLesson", recordLessonMutation, M{"sessionId": session, "context": "c", "whatWorked": "w", "lesson": "injected",
			"confidence": 0.9}},
	}
}

// sessionSnapshot is what the fenced writes could change of a session.
func sessionSnapshot(t *testing.T, s *testServer, token, session string) jv {
	t.Helper()
	return s.query(t, token, `query($id: ID!) { agentSession(id: $id) { status stateVersion state
		states(first: 10) { totalCount } steps(first: 10) { totalCount }
		todoLists { id status version items { status } } lessons(first: 10) { totalCount } } }`, M{"id": session}).at("agentSession")
}

// TestSessionWritesFencedToClaimer: another AGENT token of the project
// cannot write a build agent's session — state, pruning, status, steps,
// todo lists, lessons, nor a new session on the agent — and gets LEASE_LOST
// (field agentId) having changed nothing; the claiming token and an admin can.
func TestSessionWritesFencedToClaimer(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		e := newExecList(t, s, 1)
		e.add(t, "A", nil)
		run := e.start(t)
		agent := e.claim(t, run).S("agent.id")
		_, other := s.userWithToken(t, fmt.Sprintf("rogue%04d", planSlugs.Add(1)), "AGENT", e.project)

		session := s.query(t, e.agent, createSessionMutation, M{"in": M{"projectId": e.project, "mission": "build A",
			"agentId": agent, "state": M{"x": "mine"}}}).S("createAgentSession.session.id")
		list := s.query(t, e.agent, createTodoListMutation, M{"in": M{"sessionId": session,
			"items": []M{{"description": "one"}, {"description": "two"}}}}).S("createTodoList.todoList.id")
		before := sessionSnapshot(t, s, e.token, session)

		writes := append(sessionWrites(session, list), []struct {
			name, query string
			in          M
		}{
			{"pruneAgentSessionStates", pruneStatesMutation, M{"sessionId": session, "keepLast": 1}},
			{"setAgentSessionStatus", setSessionStatusMutation, M{"id": session, "status": "IN_PROGRESS"}},
			{"createAgentSession", createSessionMutation, M{"projectId": e.project, "mission": "hijack", "agentId": agent}},
		}...)
		for _, w := range writes {
			r := s.requireCode(t, other, w.query, M{"in": w.in}, "LEASE_LOST")
			require.Equal(t, "agentId", r.ext("field"), w.name)
		}
		require.Equal(t, before.v, sessionSnapshot(t, s, e.token, session).v, "the refused writes changed nothing")
		require.Len(t, s.query(t, e.token, `query($id: ID!) { node(id: $id) { ... on BuildAgent { sessions { id } } } }`,
			M{"id": agent}).L("node.sessions"), 1)

		// The claiming token, and an admin, still write.
		s.query(t, e.agent, saveStateMutation, M{"in": M{"sessionId": session, "expectedVersion": 1, "state": M{"x": "v2"}}})
		s.query(t, e.agent, recordStepMutation, M{"in": M{"sessionId": session, "thought": "mine", "actionType": "TOOL_CALL"}})
		s.query(t, s.AdminToken, setSessionStatusMutation, M{"in": M{"id": session, "status": "IN_PROGRESS"}})
		s.query(t, e.agent, pruneStatesMutation, M{"in": M{"sessionId": session, "keepLast": 1}})
		after := sessionSnapshot(t, s, e.token, session)
		require.Equal(t, 2, after.N("stateVersion"))
		require.Equal(t, 1, after.N("steps.totalCount"))
		require.Equal(t, "IN_PROGRESS", after.S("status"))

		// A session without an agent stays open to the project's tokens.
		loose := s.query(t, e.agent, createSessionMutation, M{"in": M{"projectId": e.project, "mission": "shared"}}).
			S("createAgentSession.session.id")
		s.query(t, other, recordStepMutation, M{"in": M{"sessionId": loose, "thought": "ok", "actionType": "TOOL_CALL"}})
	})
}

// TestFinishedSessionsTakeNoWrites: a COMPLETED or FAILED session refuses
// state, steps, todo lists, todo items and lessons with CONFLICT (field
// sessionId, or todoListId) and changes nothing; reads and pruning stay.
func TestFinishedSessionsTakeNoWrites(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		for _, end := range []string{"COMPLETED", "FAILED"} {
			f := newSessionFixture(t, s, M{"x": 1})
			list := s.query(t, f.agent, createTodoListMutation, M{"in": M{"sessionId": f.session,
				"items": []M{{"description": "one"}}}}).S("createTodoList.todoList.id")
			s.query(t, f.agent, setSessionStatusMutation, M{"in": M{"id": f.session, "status": "IN_PROGRESS"}})
			s.query(t, f.agent, setSessionStatusMutation, M{"in": M{"id": f.session, "status": end}})
			before := sessionSnapshot(t, s, f.agent, f.session)
			for _, w := range sessionWrites(f.session, list) {
				r := s.requireCode(t, f.agent, w.query, M{"in": w.in}, "CONFLICT")
				field := "sessionId"
				if w.name == "updateTodoItem" {
					field = "todoListId"
				}
				require.Equal(t, field, r.ext("field"), "%s on a %s session", w.name, end)
				require.Equal(t, end, r.ext("status"), w.name)
			}
			// An admin is held to it too.
			s.requireCode(t, s.AdminToken, recordStepMutation, M{"in": M{"sessionId": f.session, "thought": "late", "actionType": "TOOL_CALL"}}, "CONFLICT")
			require.Equal(t, before.v, sessionSnapshot(t, s, f.agent, f.session).v, "a %s session changed", end)
			s.requireCode(t, f.agent, setSessionStatusMutation, M{"in": M{"id": f.session, "status": "IN_PROGRESS"}},
				"INVALID_TRANSITION")
		}
	})
}

// TestFailedPlannerAndArchivedRouter: concurrent worker failures never count
// past the planner's failedTaskLimit, a FAILED planner's workers are not
// retried (CONFLICT); an ARCHIVED router refuses createPlanner(routerId),
// linkPlanner and clearAgentMessages (CONFLICT, field routerId) and keeps
// its messages.
func TestFailedPlannerAndArchivedRouter(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		f := newRoutingFixture(t, s)
		planner := f.planner(t, M{"failedTaskLimit": 2}).S("id")
		require.Empty(t, f.updatePlanner(t, M{"id": planner, "status": "EXECUTING"}).Errors)
		const n = 6
		workers := make([]string, n)
		for i := range workers {
			workers[i] = f.worker(t, planner, nil).S("id")
			f.moveWorker(t, workers[i], "IN_PROGRESS")
		}
		var wg sync.WaitGroup
		codes := make([]string, n)
		for i, w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r, err := s.post(f.token, `mutation($in: UpdateWorkerInput!) { updateWorker(input: $in) { worker { taskStatus } } }`,
					M{"in": M{"id": w, "taskStatus": "FAILED_VALIDATION"}})
				if err != nil {
					codes[i] = err.Error()
					return
				}
				codes[i] = r.code()
			}()
		}
		wg.Wait()
		for i, c := range codes {
			require.Empty(t, c, "worker %d", i)
		}
		p := s.query(t, f.token, `query($id: ID!) { planner(id: $id) { status failedTaskCount failedTaskLimit } }`,
			M{"id": planner}).at("planner")
		require.Equal(t, "FAILED", p.S("status"))
		require.Equal(t, 2, p.N("failedTaskCount"), "failures are never counted past the limit")
		for _, w := range workers {
			r := f.updateWorker(t, M{"id": w, "taskStatus": "PENDING"})
			require.Equal(t, "CONFLICT", r.code(), "a FAILED planner's worker is not retried")
			require.Equal(t, "id", r.ext("field"))
		}
		p = s.query(t, f.token, `query($id: ID!) { planner(id: $id) { failedTaskCount workers { taskStatus currentAttempt } } }`,
			M{"id": planner}).at("planner")
		require.Equal(t, 2, p.N("failedTaskCount"))
		for _, w := range p.L("workers") {
			require.Equal(t, "FAILED_VALIDATION", w.S("taskStatus"))
			require.Equal(t, 1, w.N("currentAttempt"))
		}

		// An ARCHIVED router.
		msg := s.query(t, f.token, `mutation($r: ID!) { addRouterMessage(input: {routerId: $r, role: USER, content: "hi"}) { message { id } } }`,
			M{"r": f.router}).S("addRouterMessage.message.id")
		loose := f.planner(t, nil).S("id")
		s.query(t, f.token, `mutation($id: ID!) { setRouterStatus(input: {id: $id, status: ARCHIVED}) { router { status } } }`, M{"id": f.router})
		for _, in := range []M{{"routerId": f.router}, {"routerId": f.router, "messageId": msg}} {
			in["projectId"], in["userQuestion"], in["model"] = f.project, "late", "gpt"
			r := s.requireCode(t, f.token, `mutation($in: CreatePlannerInput!) { createPlanner(input: $in) { planner { id } } }`,
				M{"in": in}, "CONFLICT")
			require.Equal(t, "routerId", r.ext("field"))
		}
		r := s.requireCode(t, f.token, `mutation($r: ID!, $p: ID!) { linkPlanner(input: {routerId: $r, plannerId: $p, relationshipType: CONTINUED}) {
			link { relationshipType } } }`, M{"r": f.router, "p": loose}, "CONFLICT")
		require.Equal(t, "routerId", r.ext("field"))
		r = s.requireCode(t, f.token, `mutation($id: ID!) { clearAgentMessages(input: {routerId: $id}) { deleted } }`,
			M{"id": f.router}, "CONFLICT")
		require.Equal(t, "routerId", r.ext("field"))
		got := s.query(t, f.token, `query($id: ID!) { router(id: $id) { status messages(first: 10) { totalCount } planners { planner { id } } } }`,
			M{"id": f.router}).at("router")
		require.Equal(t, "ARCHIVED", got.S("status"))
		require.Equal(t, 1, got.N("messages.totalCount"))
		require.Empty(t, got.L("planners"), "no planner was linked")
	})
}

// TestCreateUserTelegramChatIDTaken: a telegramChatId another user holds is
// CONFLICT (field telegramChatId), and no user is created.
func TestCreateUserTelegramChatIDTaken(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		const create = `mutation($in: CreateUserInput!) { createUser(input: $in) { user { id telegramChatId } } }`
		n := planSlugs.Add(1)
		chat := fmt.Sprintf("77%06d", n)
		in := func(slug, chat string) M {
			return M{"in": M{"name": slug, "slug": slug, "email": slug + "@example.com", "telegramChatId": chat}}
		}
		first := s.query(t, s.AdminToken, create, in(fmt.Sprintf("tgone%04d", n), chat)).at("createUser.user")
		require.Equal(t, chat, first.S("telegramChatId"))
		dup := fmt.Sprintf("tgtwo%04d", n)
		r := s.requireCode(t, s.AdminToken, create, in(dup, chat), "CONFLICT")
		require.Equal(t, "telegramChatId", r.ext("field"))
		// The refused user was not created: its slug is free.
		s.query(t, s.AdminToken, create, in(dup, chat+"1"))
		// Users without a chat id are many.
		for i := range 2 {
			slug := fmt.Sprintf("tgnone%d%04d", i, n)
			s.query(t, s.AdminToken, `mutation($in: CreateUserInput!) { createUser(input: $in) { user { id } } }`,
				M{"in": M{"name": slug, "slug": slug, "email": slug + "@example.com"}})
		}
	})
}
