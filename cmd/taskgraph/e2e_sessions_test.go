package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/client"
)

// End-to-end tests of agent sessions: the real server on every test
// database, over HTTP and websockets.

const (
	createSessionMutation = `mutation($in: CreateAgentSessionInput!) { createAgentSession(input: $in) {
		session { id status stateVersion state profile mission task { id } agent { id } user { id } } } }`
	saveStateMutation = `mutation($in: SaveAgentSessionStateInput!) { saveAgentSessionState(input: $in) {
		session { id stateVersion state } snapshot { id version state session { id } } } }`
	recordStepMutation = `mutation($in: RecordReActStepInput!) { recordReActStep(input: $in) {
		step { id stepId thought action actionType actionData observation success error timestamp session { id } } } }`
	createTodoListMutation = `mutation($in: CreateTodoListInput!) { createTodoList(input: $in) {
		todoList { id status version mission items { position description acceptanceCriteria dependencies status } } } }`
	updateTodoItemMutation = `mutation($in: UpdateTodoItemInput!) { updateTodoItem(input: $in) {
		todoList { id status version items { position status chosenTool executionResult { success output error durationMs } } } } }`
	recordLessonMutation = `mutation($in: RecordLessonInput!) { recordLesson(input: $in) {
		lesson { id confidence toolName project { id } session { id } } } }`
)

// sessionFixture is a project with an AGENT token and a session in it.
type sessionFixture struct {
	s       *testServer
	project string
	agent   string // AGENT token of the project
	session string
}

func newSessionFixture(t *testing.T, s *testServer, state any) *sessionFixture {
	t.Helper()
	f := &sessionFixture{s: s}
	f.project = s.createProject(t, s.AdminToken, fmt.Sprintf("se%04d", planSlugs.Add(1)))
	_, f.agent = s.userWithToken(t, fmt.Sprintf("sagent%04d", planSlugs.Add(1)), "AGENT", f.project)
	in := M{"projectId": f.project, "mission": "refactor the billing module"}
	if state != nil {
		in["state"] = state
	}
	d := s.query(t, f.agent, createSessionMutation, M{"in": in})
	f.session = d.S("createAgentSession.session.id")
	require.Equal(t, "PENDING", d.S("createAgentSession.session.status"))
	require.Equal(t, 1, d.N("createAgentSession.session.stateVersion"))
	require.Equal(t, "dev", d.S("createAgentSession.session.profile"))
	return f
}

func (f *sessionFixture) save(expected int, kind string, v any) (gqlResponse, error) {
	return f.s.post(f.agent, saveStateMutation, M{"in": M{"sessionId": f.session, "expectedVersion": expected, kind: v}})
}

func (f *sessionFixture) states(t *testing.T) jv {
	t.Helper()
	return f.s.query(t, f.agent, `query($id: ID!) { agentSession(id: $id) { stateVersion state
		states(first: 100) { totalCount nodes { version state } } } }`, M{"id": f.session}).at("agentSession")
}

// TestSessionsStateCompareAndSwap: saves with the same expectedVersion — one
// wins, the others are VERSION_CONFLICT with currentVersion and store
// nothing; merge patches; the size limit; pruning.
func TestSessionsStateCompareAndSwap(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		f := newSessionFixture(t, s, M{"plan": "v1", "nested": M{"keep": 1, "drop": 2}})

		const n = 6
		rs := make([]gqlResponse, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r, err := f.save(1, "state", M{"writer": i})
				require.NoError(t, err)
				rs[i] = r
			}()
		}
		wg.Wait()
		wins := 0
		for _, r := range rs {
			if len(r.Errors) == 0 {
				wins++
				continue
			}
			require.Equal(t, "VERSION_CONFLICT", r.code(), "%+v", r.Errors)
			require.EqualValues(t, 2, r.ext("currentVersion"))
			require.Equal(t, "expectedVersion", r.ext("field"))
		}
		require.Equal(t, 1, wins)
		st := f.states(t)
		require.Equal(t, 2, st.N("stateVersion"))
		require.Equal(t, 2, st.N("states.totalCount"), "one snapshot added")

		// Merge patch (RFC 7396): null removes a key, objects merge, arrays replace.
		s.query(t, f.agent, saveStateMutation, M{"in": M{"sessionId": f.session, "expectedVersion": 2,
			"state": M{"plan": "v1", "nested": M{"keep": 1, "drop": 2}, "list": []int{1, 2}}}})
		d := s.query(t, f.agent, saveStateMutation, M{"in": M{"sessionId": f.session, "expectedVersion": 3,
			"patch": M{"plan": nil, "nested": M{"drop": nil, "new": true}, "list": []int{3}}}})
		require.Equal(t, 4, d.N("saveAgentSessionState.session.stateVersion"))
		require.Equal(t, 4, d.N("saveAgentSessionState.snapshot.version"))
		got, _ := json.Marshal(d.at("saveAgentSessionState.snapshot.state").v)
		require.JSONEq(t, `{"nested":{"keep":1,"new":true},"list":[3]}`, string(got))

		r := s.requireCode(t, f.agent, saveStateMutation, M{"in": M{"sessionId": f.session, "expectedVersion": 4}}, "BAD_USER_INPUT")
		require.Equal(t, "state", r.ext("field"))

		// Size limit: a state over 1 MiB is LIMIT_EXCEEDED, whether sent whole
		// (the request body is refused) or grown by patches.
		big := strings.Repeat("x", 1<<20)
		r, err := f.save(4, "state", M{"blob": big})
		require.NoError(t, err)
		require.Equal(t, "LIMIT_EXCEEDED", r.code())
		half := strings.Repeat("y", 600_000)
		s.query(t, f.agent, saveStateMutation, M{"in": M{"sessionId": f.session, "expectedVersion": 4, "patch": M{"a": half}}})
		r = s.requireCode(t, f.agent, saveStateMutation, M{"in": M{"sessionId": f.session, "expectedVersion": 5, "patch": M{"b": half}}}, "LIMIT_EXCEEDED")
		require.Equal(t, "patch", r.ext("field"))
		require.Equal(t, 5, f.states(t).N("stateVersion"), "nothing stored")

		// Pruning keeps the newest keepLast snapshots.
		prune := `mutation($in: PruneAgentSessionStatesInput!) { pruneAgentSessionStates(input: $in) { deleted } }`
		s.requireCode(t, f.agent, prune, M{"in": M{"sessionId": f.session, "keepLast": 0}}, "BAD_USER_INPUT")
		require.Equal(t, 3, s.query(t, f.agent, prune, M{"in": M{"sessionId": f.session, "keepLast": 2}}).N("pruneAgentSessionStates.deleted"))
		require.Equal(t, 0, s.query(t, f.agent, prune, M{"in": M{"sessionId": f.session, "keepLast": 2}}).N("pruneAgentSessionStates.deleted"))
		st = f.states(t)
		require.Equal(t, 2, st.N("states.totalCount"))
		require.Equal(t, []int{5, 4}, []int{st.N("states.nodes.0.version"), st.N("states.nodes.1.version")})

		// Visibility: another project's agent and another member see nothing.
		otherProject := s.createProject(t, s.AdminToken, fmt.Sprintf("se%04d", planSlugs.Add(1)))
		_, otherAgent := s.userWithToken(t, fmt.Sprintf("sagent%04d", planSlugs.Add(1)), "AGENT", otherProject)
		r = s.requireCode(t, otherAgent, saveStateMutation, M{"in": M{"sessionId": f.session, "expectedVersion": 5, "state": M{}}}, "NOT_FOUND")
		require.Equal(t, "sessionId", r.ext("field"))
		_, member := s.member(t, fmt.Sprintf("smember%04d", planSlugs.Add(1)))
		require.True(t, s.query(t, member, `query($id: ID!) { agentSession(id: $id) { id } }`, M{"id": f.session}).Null("agentSession"))
		require.True(t, s.query(t, member, `query($id: ID!) { node(id: $id) { id } }`, M{"id": f.session}).Null("node"))
		require.Equal(t, f.session, s.query(t, s.AdminToken, `query($id: ID!) { node(id: $id) { id ... on AgentSession { stateVersion } } }`,
			M{"id": f.session}).S("node.id"))
	})
}

// TestSessionsStepsGapless: 50 concurrent recordReActStep calls, with state
// saves running beside them, get step ids 1..50 and never conflict.
func TestSessionsStepsGapless(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		f := newSessionFixture(t, s, nil)
		const n = 50
		saved := make(chan int)
		go func() {
			// A writer saving state version after version while the steps append.
			v := 1
			for i := range 10 {
				r, err := f.save(v, "patch", M{fmt.Sprintf("k%d", i): i})
				if err != nil || len(r.Errors) > 0 {
					break
				}
				v++
			}
			saved <- v
		}()
		rs := concurrently(t, n, func(i int) (gqlResponse, error) {
			return s.post(f.agent, recordStepMutation, M{"in": M{"sessionId": f.session, "thought": fmt.Sprintf("t%d", i),
				"action": "grep", "actionType": "TOOL_CALL", "actionData": M{"pattern": "TODO"},
				"observation": M{"matches": i}, "success": true}})
		})
		require.Equal(t, 11, <-saved, "every state save succeeded beside the steps")
		var ids []int
		for _, r := range rs {
			var d struct {
				RecordReActStep struct{ Step struct{ StepID int } }
			}
			require.NoError(t, json.Unmarshal(r.Data, &d))
			ids = append(ids, d.RecordReActStep.Step.StepID)
		}
		slices.Sort(ids)
		for i, id := range ids {
			require.Equal(t, i+1, id)
		}
		d := s.query(t, f.agent, `query($id: ID!) { agentSession(id: $id) { stateVersion
			steps(first: 100) { totalCount nodes { stepId thought actionType actionData observation success } }
			last: steps(last: 2) { nodes { stepId } pageInfo { hasPreviousPage } } } }`, M{"id": f.session}).at("agentSession")
		require.Equal(t, 11, d.N("stateVersion"))
		require.Equal(t, n, d.N("steps.totalCount"))
		for i, st := range d.L("steps.nodes") {
			require.Equal(t, i+1, st.N("stepId"))
			require.Equal(t, "TOOL_CALL", st.S("actionType"))
			require.Equal(t, "TODO", st.S("actionData.pattern"))
		}
		require.Equal(t, 49, d.N("last.nodes.0.stepId"))
		require.Equal(t, 50, d.N("last.nodes.1.stepId"))
		require.True(t, d.B("last.pageInfo.hasPreviousPage"))
	})
}

// TestSessionsTodoLists: dependency validation, cycles, waitingOn, item
// moves, completion, and a new list abandoning the old.
func TestSessionsTodoLists(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		f := newSessionFixture(t, s, nil)
		item := func(desc string, deps ...int) M {
			if deps == nil {
				deps = []int{}
			}
			return M{"description": desc, "acceptanceCriteria": []string{desc + " works"}, "dependencies": deps}
		}
		create := func(items ...M) gqlResponse {
			return s.do(t, f.agent, createTodoListMutation, M{"in": M{"sessionId": f.session, "items": items}})
		}
		r := create(item("a"), item("b", 7))
		require.Equal(t, "BAD_USER_INPUT", r.code())
		require.Equal(t, "items[1].dependencies", r.ext("field"))
		r = create(item("a", 0))
		require.Equal(t, "BAD_USER_INPUT", r.code())
		r = create(item("a", 2), item("b", 0), item("c", 1), item("d"))
		require.Equal(t, "CYCLE_DETECTED", r.code())
		cycle, _ := r.ext("cycle").([]any)
		require.ElementsMatch(t, []any{0.0, 1.0, 2.0}, cycle)

		r = create(item("old"))
		require.Empty(t, r.Errors)
		var old struct {
			CreateTodoList struct{ TodoList struct{ ID string } }
		}
		require.NoError(t, json.Unmarshal(r.Data, &old))
		d := s.query(t, f.agent, createTodoListMutation, M{"in": M{"sessionId": f.session, "mission": "plan B",
			"items": []M{item("design"), item("build", 0), item("docs")}}}).at("createTodoList.todoList")
		list := d.S("id")
		require.Equal(t, "ACTIVE", d.S("status"))
		require.Equal(t, "plan B", d.S("mission"))
		require.Equal(t, []any{0.0}, d.at("items.1.dependencies").v)

		sess := s.query(t, f.agent, `query($id: ID!) { agentSession(id: $id) { todoLists { id status } activeTodoList { id } } }`,
			M{"id": f.session}).at("agentSession")
		require.Equal(t, []string{old.CreateTodoList.TodoList.ID, list}, sess.Col("todoLists", "id"))
		require.Equal(t, []string{"ABANDONED", "ACTIVE"}, sess.Col("todoLists", "status"))
		require.Equal(t, list, sess.S("activeTodoList.id"))

		move := func(pos int, to string, extra M) gqlResponse {
			in := M{"todoListId": list, "position": pos, "status": to}
			for k, v := range extra {
				in[k] = v
			}
			return s.do(t, f.agent, updateTodoItemMutation, M{"in": in})
		}
		r = move(1, "IN_PROGRESS", nil)
		require.Equal(t, "INVALID_TRANSITION", r.code())
		require.Equal(t, []any{0.0}, r.ext("waitingOn"))
		r = move(0, "COMPLETED", nil)
		require.Equal(t, "INVALID_TRANSITION", r.code())
		require.Equal(t, "PENDING", r.ext("from"))
		require.Equal(t, "COMPLETED", r.ext("to"))
		require.Empty(t, move(0, "IN_PROGRESS", M{"expectedVersion": 1, "chosenTool": "editor"}).Errors)
		r = move(0, "COMPLETED", M{"expectedVersion": 1})
		require.Equal(t, "VERSION_CONFLICT", r.code())
		require.EqualValues(t, 2, r.ext("currentVersion"))
		r = move(0, "COMPLETED", M{"expectedVersion": 2, "executionResult": M{"success": true, "output": M{"files": 2}, "durationMs": 12.5}})
		require.Empty(t, r.Errors)
		require.Empty(t, move(1, "IN_PROGRESS", nil).Errors)
		require.Empty(t, move(1, "FAILED", nil).Errors)
		require.Empty(t, move(1, "PENDING", nil).Errors)
		require.Empty(t, move(1, "IN_PROGRESS", nil).Errors)
		require.Empty(t, move(1, "COMPLETED", nil).Errors)
		r = move(2, "SKIPPED", nil)
		require.Empty(t, r.Errors)
		var done struct {
			UpdateTodoItem struct {
				TodoList struct {
					Status  string
					Version int
					Items   []struct {
						Status          string
						ChosenTool      *string
						ExecutionResult *struct {
							Success    bool
							DurationMs float64
						}
					}
				}
			}
		}
		require.NoError(t, json.Unmarshal(r.Data, &done))
		tl := done.UpdateTodoItem.TodoList
		require.Equal(t, "COMPLETED", tl.Status)
		require.Equal(t, 9, tl.Version)
		require.Equal(t, "editor", *tl.Items[0].ChosenTool)
		require.True(t, tl.Items[0].ExecutionResult.Success)
		require.InDelta(t, 12.5, tl.Items[0].ExecutionResult.DurationMs, 1e-9)
		require.Equal(t, []string{"COMPLETED", "COMPLETED", "SKIPPED"}, []string{tl.Items[0].Status, tl.Items[1].Status, tl.Items[2].Status})
		require.True(t, s.query(t, f.agent, `query($id: ID!) { agentSession(id: $id) { activeTodoList { id } } }`,
			M{"id": f.session}).Null("agentSession.activeTodoList"))

		// The session lifecycle.
		status := `mutation($in: SetAgentSessionStatusInput!) { setAgentSessionStatus(input: $in) { session { status } } }`
		r = s.requireCode(t, f.agent, status, M{"in": M{"id": f.session, "status": "COMPLETED"}}, "INVALID_TRANSITION")
		require.Equal(t, "PENDING", r.ext("from"))
		s.query(t, f.agent, status, M{"in": M{"id": f.session, "status": "IN_PROGRESS"}})
		require.Equal(t, "FAILED", s.query(t, f.agent, status, M{"in": M{"id": f.session, "status": "FAILED"}}).S("setAgentSessionStatus.session.status"))
		d = s.query(t, f.agent, `query($p: ID!) { agentSessions(projectId: $p, status: [FAILED]) { totalCount nodes { id } } }`, M{"p": f.project})
		require.Equal(t, 1, d.N("agentSessions.totalCount"))
	})
}

// lessonFixture records 30 lessons in project: 27 about formatting, and three
// more, of which the psql one matches "database migration locks" best.
func lessonFixture(t *testing.T, s *testServer, token, project string) {
	t.Helper()
	rec := func(context, worked, lesson, tool string, conf float64) {
		s.query(t, token, recordLessonMutation, M{"in": M{"projectId": project, "context": context, "whatWorked": worked,
			"lesson": lesson, "toolName": tool, "confidence": conf}})
	}
	for i := range 27 {
		rec(fmt.Sprintf("Formatting source file number %d before review", i), "running the formatter",
			fmt.Sprintf("format early, case %d", i), "gofmt", 0.3+float64(i%5)/10)
	}
	rec("A schema migration failed on a locked table", "retrying the migration after the lock cleared",
		"Run database migrations outside peak hours; migrations lock tables", "psql", 0.9)
	rec("Slow test suite", "caching the database between tests", "Reuse the database fixture", "go test", 0.8)
	rec("Deploying the service", "a canary release", "Watch error rates after a migration of traffic", "kubectl", 0.95)
}

// TestSessionsLessons: for the same 30 lessons, the best match is first on
// both databases, minConfidence filters, and Task.relevantLessons ranks the
// project's and the global lessons against the task.
func TestSessionsLessons(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		f := newSessionFixture(t, s, nil)
		lessonFixture(t, s, f.agent, f.project)
		q := `query($p: ID, $q: String, $min: Float, $tool: String, $first: Int, $after: String) {
			lessons(projectId: $p, query: $q, minConfidence: $min, toolName: $tool, first: $first, after: $after) {
			totalCount nodes { id toolName confidence lesson project { id } } edges { cursor } pageInfo { hasNextPage endCursor } } }`
		d := s.query(t, f.agent, q, M{"p": f.project, "q": "database migration locks a table"}).at("lessons")
		require.Equal(t, "psql", d.S("nodes.0.toolName"))
		require.NotContains(t, d.Col("nodes", "toolName"), "gofmt")

		// Stopwords are dropped in Go, the same on both databases: "the" (in
		// several lessons' texts) alone matches nothing, and "the migration"
		// ranks as "migration".
		d = s.query(t, f.agent, q, M{"p": f.project, "q": "the"}).at("lessons")
		require.Equal(t, 0, d.N("totalCount"))
		require.Empty(t, d.L("nodes"))
		require.Equal(t, s.query(t, f.agent, q, M{"p": f.project, "q": "migration"}).Col("lessons.nodes", "id"),
			s.query(t, f.agent, q, M{"p": f.project, "q": "The migration"}).Col("lessons.nodes", "id"))

		d = s.query(t, f.agent, q, M{"p": f.project, "min": 0.85}).at("lessons")
		require.Equal(t, 2, d.N("totalCount"))
		require.Equal(t, []string{"kubectl", "psql"}, d.Col("nodes", "toolName"))
		d = s.query(t, f.agent, q, M{"p": f.project, "q": "migration", "min": 0.92}).at("lessons")
		require.Equal(t, []string{"kubectl"}, d.Col("nodes", "toolName"))

		// Paging by position in the ranking.
		d = s.query(t, f.agent, q, M{"p": f.project, "first": 20}).at("lessons")
		require.Equal(t, 30, d.N("totalCount"))
		require.True(t, d.B("pageInfo.hasNextPage"))
		rest := s.query(t, f.agent, q, M{"p": f.project, "first": 20, "after": d.S("pageInfo.endCursor")}).at("lessons")
		require.Len(t, rest.L("nodes"), 10)
		require.False(t, rest.B("pageInfo.hasNextPage"))
		s.requireCode(t, f.agent, q, M{"p": f.project, "first": 101}, "LIMIT_EXCEEDED")
		r := s.requireCode(t, f.agent, recordLessonMutation, M{"in": M{"projectId": f.project, "context": "c", "whatWorked": "w",
			"lesson": "l", "confidence": 1.2}}, "BAD_USER_INPUT")
		require.Equal(t, "confidence", r.ext("field"))

		// A global lesson (recorded without a project, by an admin only: a
		// member is FORBIDDEN) is seen by everyone; recording it again stores
		// nothing new.
		_, member := s.member(t, fmt.Sprintf("lmember%04d", planSlugs.Add(1)))
		global := M{"in": M{"context": "Migrations in any project", "whatWorked": "a dry run first",
			"lesson": "Dry-run every migration", "toolName": "any", "confidence": 0.6}}
		s.requireCode(t, member, recordLessonMutation, global, "FORBIDDEN")
		g1 := s.query(t, s.AdminToken, recordLessonMutation, global).S("recordLesson.lesson.id")
		require.Equal(t, g1, s.query(t, s.AdminToken, recordLessonMutation, global).S("recordLesson.lesson.id"))
		d = s.query(t, member, q, M{"q": "migration"}).at("lessons")
		require.Equal(t, []string{g1}, d.Col("nodes", "id"), "the member sees only the global lesson")

		task := s.createTask(t, s.AdminToken, f.project, "Add a migration for the orders table",
			M{"affectedFiles": []string{"db/migrations/0010_orders.sql"}})
		d = s.query(t, f.agent, `query($id: ID!) { task(id: $id) { relevantLessons(first: 3) { id toolName } } }`, M{"id": task})
		got := d.Col("task.relevantLessons", "toolName")
		require.NotEmpty(t, got)
		require.Equal(t, "psql", got[0])
		require.Contains(t, d.Col("task.relevantLessons", "id"), g1, "global lessons count")

		// Under a list of tasks, one statement reads every task's lessons.
		relevant := `query($id: ID!) { node(id: $id) { ... on Project { tasks(first: 50) { nodes { id relevantLessons(first: 2) { id toolName } } } } } }`
		statements := func() (int64, int) {
			before := s.DB.Statements()
			d := s.query(t, s.AdminToken, relevant, M{"id": f.project})
			nodes := d.L("node.tasks.nodes")
			for _, n := range nodes {
				require.LessOrEqual(t, len(n.L("relevantLessons")), 2)
			}
			return s.DB.Statements() - before, len(nodes)
		}
		statements() // warm the token's last-used mark
		one, n1 := statements()
		for i := range 9 {
			s.createTask(t, s.AdminToken, f.project, fmt.Sprintf("Format file %d before the database migration", i), nil)
		}
		ten, n10 := statements()
		require.Equal(t, []int{1, 10}, []int{n1, n10})
		require.Equal(t, one, ten, "statements for 1 task vs 10")
		d = s.query(t, s.AdminToken, relevant, M{"id": f.project})
		for _, n := range d.L("node.tasks.nodes") {
			require.Len(t, n.L("relevantLessons"), 2)
		}
	})
}

// sessionEvent is an event of a session's stream as the tests read it.
type sessionEvent struct {
	Cursor  string
	Type    string
	Session *struct{ ID string }
	Run     *struct{ ID string }
	Agent   *struct{ ID string }
	StepID  int
	Version int
}

const sessionEventSelection = `cursor type run { id } agent { id }
	... on SessionStateSaved { session { id } version }
	... on SessionStatusChanged { session { id } sessionFrom: from sessionTo: to }
	... on TodoListCreated { session { id } todoList { id } itemCount }
	... on TodoItemChanged { session { id } position from to }
	... on ReActStepRecorded { session { id } stepId thought action actionType success }
	... on LessonRecorded { session { id } lesson { id } confidence }`

func (e sessionEvent) String() string {
	switch e.Type {
	case "REACT_STEP_RECORDED":
		return fmt.Sprintf("%s %d", e.Type, e.StepID)
	case "SESSION_STATE_SAVED":
		return fmt.Sprintf("%s %d", e.Type, e.Version)
	}
	return e.Type
}

func subscribeSession(t *testing.T, conn *client.Conn, session, after string) *client.Subscription {
	t.Helper()
	vars := M{"s": session}
	if after != "" {
		vars["after"] = after
	}
	sub, err := conn.Subscribe(context.Background(), `subscription($s: ID!, $after: String) {
		sessionEvents(sessionId: $s, after: $after) { `+sessionEventSelection+` } }`, vars)
	require.NoError(t, err)
	return sub
}

// nextStreamEvent reads the next event of a subscription whose field is field.
func nextStreamEvent(t *testing.T, sub *client.Subscription, field string) sessionEvent {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	r, err := sub.Next(ctx)
	require.NoError(t, err)
	require.Empty(t, r.Errors)
	var d map[string]sessionEvent
	require.NoError(t, json.Unmarshal(r.Data, &d))
	return d[field]
}

// TestSessionsEventsResume: sessionEvents replays from a cursor and resumes
// after a reconnect from any cursor with nothing skipped or repeated; it
// carries only the session's events; without a cursor, only new ones.
func TestSessionsEventsResume(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		f := newSessionFixture(t, s, nil)
		other := s.query(t, f.agent, createSessionMutation, M{"in": M{"projectId": f.project, "mission": "other"}}).
			S("createAgentSession.session.id")
		start := s.eventCursor(t, s.AdminToken, f.project)

		live := subscribeSession(t, s.dial(t, f.agent), f.session, start)
		var want []string
		step := func(sess string) {
			s.query(t, f.agent, recordStepMutation, M{"in": M{"sessionId": sess, "thought": "hmm"}})
		}
		for i := range 4 {
			step(f.session)
			step(other)
			want = append(want, fmt.Sprintf("REACT_STEP_RECORDED %d", i+1))
		}
		s.query(t, f.agent, saveStateMutation, M{"in": M{"sessionId": f.session, "expectedVersion": 1, "patch": M{"x": 1}}})
		want = append(want, "SESSION_STATE_SAVED 2")
		s.query(t, f.agent, createTodoListMutation, M{"in": M{"sessionId": f.session, "items": []M{{"description": "x"}}}})
		want = append(want, "TODO_LIST_CREATED")
		s.query(t, f.agent, recordLessonMutation, M{"in": M{"sessionId": f.session, "context": "c", "whatWorked": "w",
			"lesson": "l", "confidence": 0.5}})
		want = append(want, "LESSON_RECORDED")

		var all []sessionEvent
		for range want {
			all = append(all, nextStreamEvent(t, live, "sessionEvents"))
		}
		var names []string
		for _, e := range all {
			names = append(names, e.String())
			require.Equal(t, f.session, e.Session.ID)
		}
		require.Equal(t, want, names, "only the session's events, in commit order")

		// Reconnect from every cursor: the rest, in order, once.
		for i := range all {
			sub := subscribeSession(t, s.dial(t, f.agent), f.session, all[i].Cursor)
			for _, w := range all[i+1:] {
				require.Equal(t, w.Cursor, nextStreamEvent(t, sub, "sessionEvents").Cursor)
			}
			require.NoError(t, sub.Close())
		}
		// What commits after a reconnect follows without a gap.
		resumed := subscribeSession(t, s.dial(t, f.agent), f.session, all[len(all)-1].Cursor)
		step(other)
		step(f.session)
		require.Equal(t, "REACT_STEP_RECORDED 5", nextStreamEvent(t, resumed, "sessionEvents").String())

		// Without a cursor: only what commits after the subscription started
		// (which it does at some point after the request: step until it shows).
		now := subscribeSession(t, s.dial(t, f.agent), f.session, "")
		first := make(chan sessionEvent, 1)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
			defer cancel()
			if r, err := now.Next(ctx); err == nil && len(r.Errors) == 0 {
				var d struct{ SessionEvents sessionEvent }
				if json.Unmarshal(r.Data, &d) == nil {
					first <- d.SessionEvents
				}
			}
			close(first)
		}()
		for n := 6; ; n++ {
			step(f.session)
			select {
			case e, ok := <-first:
				require.True(t, ok, "subscription failed")
				require.Equal(t, "REACT_STEP_RECORDED", e.Type)
				require.Greater(t, e.StepID, 5, "no replay without a cursor")
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	})
}

func cursorsOf(evs []sessionEvent) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.Cursor
	}
	return out
}

// TestSessionsOnRunStream: a session opened for a build agent puts its events
// on the run's stream: runEvents shows run → wave → task → agent → ReAct step
// in one order, and a reconnect from any cursor loses and repeats nothing.
func TestSessionsOnRunStream(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		e := newExecList(t, s, 1)
		e.add(t, "A", nil)
		run := e.start(t)
		sub, err := s.dial(t, e.token).Subscribe(context.Background(), `subscription($r: ID!) {
			runEvents(runId: $r) { `+sessionEventSelection+` } }`, M{"r": run})
		require.NoError(t, err)

		c := e.claim(t, run)
		agent, task := c.S("agent.id"), c.S("task.id")
		d := s.query(t, e.agent, createSessionMutation, M{"in": M{"projectId": e.project, "mission": "build A", "agentId": agent}}).
			at("createAgentSession.session")
		session := d.S("id")
		require.Equal(t, task, d.S("task.id"))
		require.Equal(t, agent, d.S("agent.id"))
		for i := range 3 {
			s.query(t, e.agent, recordStepMutation, M{"in": M{"sessionId": session, "thought": fmt.Sprintf("step %d", i),
				"action": "edit", "actionType": "TOOL_CALL", "observation": "ok", "success": true}})
		}
		e.complete(t, agent)
		require.Equal(t, []string{session}, s.query(t, e.token, `query($id: ID!) { node(id: $id) { ... on BuildAgent { sessions { id } } } }`,
			M{"id": agent}).Col("node.sessions", "id"))

		var evs []sessionEvent
		for {
			ev := nextStreamEvent(t, sub, "runEvents")
			evs = append(evs, ev)
			if ev.Type == "RUN_COMPLETED" {
				break
			}
		}
		var kinds []string
		for _, ev := range evs {
			if ev.Type == "TASK_STATUS_CHANGED" || ev.Type == "TASK_UPDATED" {
				continue
			}
			kinds = append(kinds, ev.String())
			require.Equal(t, run, ev.Run.ID)
			if strings.HasPrefix(ev.Type, "REACT") || strings.HasPrefix(ev.Type, "SESSION") {
				require.Equal(t, session, ev.Session.ID)
				require.Equal(t, agent, ev.Agent.ID)
			}
		}
		require.Equal(t, []string{"RUN_STARTED", "WAVE_STARTED", "TASK_CLAIMED", "SESSION_STATE_SAVED 1",
			"REACT_STEP_RECORDED 1", "REACT_STEP_RECORDED 2", "REACT_STEP_RECORDED 3", "WAVE_COMPLETED", "RUN_COMPLETED"}, kinds)

		for i := range evs {
			sub, err := s.dial(t, e.token).Subscribe(context.Background(), `subscription($r: ID!, $after: String) {
				runEvents(runId: $r, after: $after) { cursor type } }`, M{"r": run, "after": evs[i].Cursor})
			require.NoError(t, err)
			for _, w := range evs[i+1:] {
				require.Equal(t, w.Cursor, nextStreamEvent(t, sub, "runEvents").Cursor)
			}
			require.NoError(t, sub.Close())
		}
	})
}

// sessionsStatementsQuery reads a project's sessions with their states, todo
// lists, steps and lessons.
const sessionsStatementsQuery = `query($p: ID!) { agentSessions(projectId: $p, first: 50) { totalCount nodes {
	id stateVersion state project { id }
	states(first: 5) { totalCount nodes { version session { id } } }
	todoLists { id status items { position status dependencies } }
	activeTodoList { id version }
	steps(first: 10) { totalCount nodes { stepId thought } }
	lessons(first: 5) { totalCount nodes { lesson session { id } } }
} } }`

// TestSessionsNestedStatements: states, todo lists, steps and lessons under a
// list of 50 sessions cost the same statements as under 1.
func TestSessionsNestedStatements(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		seed := func(n int) string {
			f := newSessionFixture(t, s, M{"n": 0})
			sessions := []string{f.session}
			for len(sessions) < n {
				sessions = append(sessions, s.query(t, f.agent, createSessionMutation,
					M{"in": M{"projectId": f.project, "mission": "m"}}).S("createAgentSession.session.id"))
			}
			for i, sess := range sessions {
				s.query(t, f.agent, recordLessonMutation, M{"in": M{"sessionId": sess, "context": "c", "whatWorked": "w",
					"lesson": fmt.Sprintf("lesson %d", i), "confidence": 0.5}})
				s.query(t, f.agent, saveStateMutation, M{"in": M{"sessionId": sess, "expectedVersion": 1, "state": M{"n": 1}}})
				s.query(t, f.agent, createTodoListMutation, M{"in": M{"sessionId": sess, "items": []M{{"description": "x"}, {"description": "y", "dependencies": []int{0}}}}})
				s.query(t, f.agent, recordStepMutation, M{"in": M{"sessionId": sess, "thought": "a"}})
				s.query(t, f.agent, recordStepMutation, M{"in": M{"sessionId": sess, "thought": "b"}})
			}
			return f.project
		}
		one, fifty := seed(1), seed(50)
		count := func(project string) (int64, int) {
			var out struct{ AgentSessions struct{ Nodes []any } }
			before := s.DB.Statements()
			s.mustDo(t, s.AdminToken, sessionsStatementsQuery, M{"p": project}, &out)
			return s.DB.Statements() - before, len(out.AgentSessions.Nodes)
		}
		count(one) // warm the token's last-used mark
		small, n1 := count(one)
		large, n50 := count(fifty)
		require.Equal(t, 1, n1)
		require.Equal(t, 50, n50)
		require.Equal(t, small, large, "statements for 1 session vs 50")
		t.Logf("sessions query: %d statements for 1 session, %d for 50", small, large)
	})
}

// TestSessionsReferenceAgent: `taskgraph agent` opens a session for its
// task, hands its id to the command (TASKGRAPH_SESSION_ID), records the
// command's ::step lines as ReAct steps and its ::lesson lines as lessons,
// and ends the session with the task.
func TestSessionsReferenceAgent(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		e := newExecList(t, s, 1)
		e.add(t, "A", nil)
		runID := e.start(t)
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		script := `test -n "$TASKGRAPH_SESSION_ID" || exit 3
echo '::step {"thought": "read the task", "action": "cat", "actionType": "TOOL_CALL", "actionData": {"file": "task.json"}, "observation": "ok", "success": true}'
echo '::step {"thought": "done", "actionType": "COMPLETE"}'
echo '::step not json'
echo '::lesson {"context": "reference agent", "whatWorked": "printing steps", "lesson": "steps are cheap", "toolName": "sh", "confidence": 0.7}'`
		require.NoError(t, run(ctx, []string{"agent", "--url", s.URL, "--token", e.agent, "--run", runID,
			"--heartbeat", "50ms", "--poll", "20ms", "--exec", script}, io.Discard, io.Discard))
		d := s.query(t, e.token, `query($id: ID!) { executionRun(id: $id) { status agents { sessions {
			id status mission steps { nodes { stepId thought action actionType actionData observation success } } } } } }`,
			M{"id": runID}).at("executionRun")
		require.Equal(t, "COMPLETED", d.S("status"))
		sess := d.at("agents.0.sessions.0")
		require.Equal(t, "COMPLETED", sess.S("status"))
		steps := sess.L("steps.nodes")
		require.Len(t, steps, 2)
		require.Equal(t, "read the task", steps[0].S("thought"))
		require.Equal(t, "task.json", steps[0].S("actionData.file"))
		require.Equal(t, "ok", steps[0].S("observation"))
		require.Equal(t, 2, steps[1].N("stepId"))
		require.Equal(t, "COMPLETE", steps[1].S("actionType"))
		l := s.query(t, e.token, `query($p: ID!) { lessons(projectId: $p) { nodes { lesson session { id } } } }`, M{"p": e.project})
		require.Equal(t, "steps are cheap", l.S("lessons.nodes.0.lesson"))
		require.Equal(t, sess.S("id"), l.S("lessons.nodes.0.session.id"))
	})
}

// TestSessionsWatchLines: taskgraph watch prints the session kinds.
func TestSessionsWatchLines(t *testing.T) {
	for _, c := range []struct{ raw, want string }{
		{`{"type":"REACT_STEP_RECORDED","stepId":3,"thought":"look","action":"grep","success":false}`, `step 3: "look" -> grep (failed)`},
		{`{"type":"SESSION_STATE_SAVED","version":4}`, "state v4"},
		{`{"type":"TODO_ITEM_CHANGED","position":1,"itemFrom":"PENDING","itemTo":"IN_PROGRESS"}`, "item 1 PENDING -> IN_PROGRESS"},
		{`{"type":"SESSION_STATUS_CHANGED","sessionFrom":"PENDING","sessionTo":"IN_PROGRESS"}`, "session PENDING -> IN_PROGRESS"},
		{`{"type":"LESSON_RECORDED","toolName":"psql","confidence":0.9}`, "psql, confidence 0.90"},
	} {
		var e watchEvent
		require.NoError(t, json.Unmarshal([]byte(c.raw), &e))
		require.Equal(t, c.want, e.detail())
	}
}
