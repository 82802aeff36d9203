package main

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/testdb"
)

const (
	setListStatus = `mutation($in: SetTaskListStatusInput!) { setTaskListStatus(input: $in) {
		taskList { id status startedAt completedAt } } }`
	listState = `query($id: ID!) { taskList(id: $id) { status startedAt completedAt runSchedule nextScheduledRunAt
		telegramChatId autoExecute runs { id status triggeredBy } } }`
)

func (s *testServer) setListStatus(t testing.TB, token, list, status string) jv {
	t.Helper()
	return s.query(t, token, setListStatus, M{"in": M{"id": list, "status": status, "reason": "test"}}).
		at("setTaskListStatus.taskList")
}

func (s *testServer) listState(t testing.TB, token, list string) jv {
	t.Helper()
	return s.query(t, token, listState, M{"id": list}).at("taskList")
}

// listMoves lists the project's TASK_LIST_STATUS_CHANGED events as "FROM>TO",
// with "@run" after those a run caused.
func (s *testServer) listMoves(t testing.TB, token, project, list string) []string {
	t.Helper()
	d := s.query(t, token, `query($id: ID!) { node(id: $id) { ... on Project {
		events(first: 100, types: [TASK_LIST_STATUS_CHANGED]) { nodes { type ... on TaskListStatusChanged {
		from to reason taskList { id } run { id } } } } } } }`, M{"id": project})
	var out []string
	for _, n := range d.L("node.events.nodes") {
		require.Equal(t, list, n.S("taskList.id"))
		m := n.S("from") + ">" + n.S("to")
		if !n.Null("run") {
			m += "@run"
		}
		out = append(out, m)
	}
	return out
}

// TestTaskListLifecycle: a list walks DRAFT → READY → IN_PROGRESS → PAUSED →
// IN_PROGRESS → COMPLETED → ARCHIVED through a real run, refuses the moves
// its lifecycle forbids, and once archived takes no tasks and no runs.
func TestTaskListLifecycle(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		e := newExecList(t, s, 1)
		e.add(t, "T1", nil)
		e.add(t, "T2", nil)
		tok := e.token
		require.Equal(t, "DRAFT", s.listState(t, tok, e.list).S("status"))

		require.Equal(t, "READY", s.setListStatus(t, tok, e.list, "READY").S("status"))
		require.Equal(t, "DRAFT", s.setListStatus(t, tok, e.list, "DRAFT").S("status"))
		require.Equal(t, "READY", s.setListStatus(t, tok, e.list, "READY").S("status"))
		for _, to := range []string{"IN_PROGRESS", "PAUSED", "COMPLETED", "READY"} {
			r := s.requireCode(t, tok, setListStatus, M{"in": M{"id": e.list, "status": to}}, "INVALID_TRANSITION")
			require.Equal(t, "status", r.Errors[0].Extensions["field"], to)
		}
		s.requireCode(t, e.agent, setListStatus, M{"in": M{"id": e.list, "status": "DRAFT"}}, "FORBIDDEN")

		run := e.start(t)
		l := s.listState(t, tok, e.list)
		require.Equal(t, "IN_PROGRESS", l.S("status"))
		started := l.S("startedAt")
		require.NotEmpty(t, started)
		require.True(t, l.Null("completedAt"))
		for _, to := range []string{"DRAFT", "READY"} {
			s.requireCode(t, tok, setListStatus, M{"in": M{"id": e.list, "status": to}}, "INVALID_TRANSITION")
		}
		s.requireCode(t, tok, setListStatus, M{"in": M{"id": e.list, "status": "ARCHIVED"}}, "CONFLICT")

		s.query(t, tok, `mutation($id: ID!) { pauseExecutionRun(input: {runId: $id}) { run { status } } }`, M{"id": run})
		require.Equal(t, "PAUSED", s.listState(t, tok, e.list).S("status"))
		s.requireCode(t, tok, setListStatus, M{"in": M{"id": e.list, "status": "ARCHIVED"}}, "CONFLICT")
		s.query(t, tok, `mutation($id: ID!) { resumeExecutionRun(input: {runId: $id}) { run { status } } }`, M{"id": run})
		require.Equal(t, "IN_PROGRESS", s.listState(t, tok, e.list).S("status"))

		for done := 0; done < 2; {
			c := e.claim(t, run)
			require.True(t, c.Null("waitReason"), "one slot, free: %v", c)
			e.complete(t, c.S("agent.id"))
			done++
		}
		require.Equal(t, "COMPLETED", e.run(t, run).S("status"))
		l = s.listState(t, tok, e.list)
		require.Equal(t, "COMPLETED", l.S("status"))
		require.Equal(t, started, l.S("startedAt"), "startedAt is set once")
		require.NotEmpty(t, l.S("completedAt"))
		s.requireCode(t, tok, setListStatus, M{"in": M{"id": e.list, "status": "READY"}}, "INVALID_TRANSITION")

		require.Equal(t, "ARCHIVED", s.setListStatus(t, tok, e.list, "ARCHIVED").S("status"))
		s.requireCode(t, tok, setListStatus, M{"in": M{"id": e.list, "status": "DRAFT"}}, "INVALID_TRANSITION")
		r := s.requireCode(t, tok, `mutation($in: StartExecutionRunInput!) { startExecutionRun(input: $in) { run { id } } }`,
			M{"in": M{"taskListId": e.list}}, "CONFLICT")
		require.Equal(t, "taskListId", r.Errors[0].Extensions["field"])
		r = s.requireCode(t, tok, `mutation($in: CreateTaskInput!) { createTask(input: $in) { task { id } } }`,
			M{"in": M{"projectId": e.project, "title": "late", "taskListId": e.list}}, "CONFLICT")
		loose := s.createTask(t, tok, e.project, "loose", nil)
		s.requireCode(t, tok, `mutation($in: AddTasksToListInput!) { addTasksToList(input: $in) { taskList { id } } }`,
			M{"in": M{"taskListId": e.list, "taskIds": []string{loose}}}, "CONFLICT")
		require.Len(t, s.listState(t, tok, e.list).L("runs"), 1, "no run started on the archived list")

		require.Equal(t, []string{"DRAFT>READY", "READY>DRAFT", "DRAFT>READY", "READY>IN_PROGRESS@run", "IN_PROGRESS>PAUSED@run",
			"PAUSED>IN_PROGRESS@run", "IN_PROGRESS>COMPLETED@run", "COMPLETED>ARCHIVED"}, s.listMoves(t, tok, e.project, e.list))

		t.Run("a run that does not complete takes the list back to READY", func(t *testing.T) {
			e := newExecList(t, s, 1)
			e.add(t, "T1", nil)
			run := e.start(t)
			require.Equal(t, "IN_PROGRESS", s.listState(t, e.token, e.list).S("status"), "a DRAFT list starts too")
			s.query(t, e.token, `mutation($id: ID!) { cancelExecutionRun(input: {runId: $id}) { run { status } } }`, M{"id": run})
			l := s.listState(t, e.token, e.list)
			require.Equal(t, "READY", l.S("status"))
			require.True(t, l.Null("completedAt"))
		})
	})
}

// TestTaskListSettingsInput: runSchedule is a 5-field cron expression,
// telegramChatId is settable and removable.
func TestTaskListSettingsInput(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		tok := s.AdminToken
		project := s.createProject(t, tok, "listsettings")
		create := `mutation($in: CreateTaskListInput!) { createTaskList(input: $in) { taskList { id runSchedule
			nextScheduledRunAt telegramChatId } } }`
		for _, bad := range []string{"every minute", "@every 1s", "* * * *", "0 0 0 * * *", "61 * * * *", strings.Repeat("1", 300)} {
			r := s.requireCode(t, tok, create, M{"in": M{"projectId": project, "name": "x", "runSchedule": bad}}, "BAD_USER_INPUT")
			require.Equal(t, "runSchedule", r.Errors[0].Extensions["field"], bad)
		}
		l := s.query(t, tok, create, M{"in": M{"projectId": project, "name": "nightly", "runSchedule": "30 2 * * *",
			"telegramChatId": "-1001"}}).at("createTaskList.taskList")
		require.Equal(t, "30 2 * * *", l.S("runSchedule"))
		require.Equal(t, "-1001", l.S("telegramChatId"))
		next, err := time.Parse(time.RFC3339Nano, l.S("nextScheduledRunAt"))
		require.NoError(t, err)
		require.Equal(t, 2, next.UTC().Hour())
		require.Equal(t, 30, next.UTC().Minute())
		require.True(t, next.After(time.Now().Add(-time.Minute)) && next.Before(time.Now().Add(25*time.Hour)), next)

		update := `mutation($in: UpdateTaskListInput!) { updateTaskList(input: $in) { taskList { runSchedule
			nextScheduledRunAt telegramChatId } } }`
		r := s.requireCode(t, tok, update, M{"in": M{"id": l.S("id"), "runSchedule": "nope"}}, "BAD_USER_INPUT")
		require.Equal(t, "runSchedule", r.Errors[0].Extensions["field"])
		u := s.query(t, tok, update, M{"in": M{"id": l.S("id"), "telegramChatId": "42"}}).at("updateTaskList.taskList")
		require.Equal(t, "42", u.S("telegramChatId"))
		require.Equal(t, "30 2 * * *", u.S("runSchedule"), "left out: kept")
		u = s.query(t, tok, update, M{"in": M{"id": l.S("id"), "runSchedule": "", "telegramChatId": ""}}).at("updateTaskList.taskList")
		require.True(t, u.Null("runSchedule"))
		require.True(t, u.Null("nextScheduledRunAt"))
		require.True(t, u.Null("telegramChatId"))
	})
}

// TestAutoAndScheduledRunsOnce: an autoExecute list made READY from three
// replicas at once gets one AUTO run, and a list with runSchedule "* * * * *"
// gets one SCHEDULE run when the minute comes, with three replicas sweeping
// (PostgreSQL; one server on SQLite).
func TestAutoAndScheduledRunsOnce(t *testing.T) {
	t.Parallel()
	testdb.Run(t, func(t *testing.T, url string) {
		args := []string{"--schedule-sweep-interval", "100ms"}
		servers := []*testServer{startServer(t, url, args...)}
		if strings.HasPrefix(url, "postgres") {
			servers = append(servers, startServer(t, url, args...), startServer(t, url, args...))
		}
		s := servers[0]
		tok := s.AdminToken
		project := s.createProject(t, tok, fmt.Sprintf("auto%d", planSlugs.Add(1)))

		t1 := s.createTask(t, tok, project, "auto task", nil)
		auto := s.query(t, tok, `mutation($in: CreateTaskListInput!) { createTaskList(input: $in) { taskList { id } } }`,
			M{"in": M{"projectId": project, "name": "auto", "autoExecute": true, "taskIds": []string{t1}}}).S("createTaskList.taskList.id")
		var wg sync.WaitGroup
		codes := make([]string, len(servers)*2)
		for i := range codes {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				r, err := servers[i%len(servers)].post(tok, setListStatus, M{"in": M{"id": auto, "status": "READY"}})
				if err == nil {
					codes[i] = r.code()
				}
			}(i)
		}
		wg.Wait()
		ok := 0
		for _, c := range codes {
			if c == "" {
				ok++
			} else {
				require.Equal(t, "INVALID_TRANSITION", c, "the list left READY with its run")
			}
		}
		require.Equal(t, 1, ok, "one caller moved the list: %v", codes)
		l := s.listState(t, tok, auto)
		require.Equal(t, "IN_PROGRESS", l.S("status"))
		require.Len(t, l.L("runs"), 1)
		require.Equal(t, "AUTO", l.L("runs")[0].S("triggeredBy"))

		t2 := s.createTask(t, tok, project, "scheduled task", nil)
		sched := s.query(t, tok, `mutation($in: CreateTaskListInput!) { createTaskList(input: $in) { taskList { id } } }`,
			M{"in": M{"projectId": project, "name": "every minute", "runSchedule": "* * * * *", "taskIds": []string{t2}}}).
			S("createTaskList.taskList.id")
		require.False(t, s.listState(t, tok, sched).Null("nextScheduledRunAt"))
		// The tick comes: rather than wait up to a minute for it, the test
		// moves the list's next run a minute back, as time passing would.
		upd := `UPDATE task_lists SET next_scheduled_run_at = ? WHERE name = 'every minute'`
		if s.DB.Dialect() == "postgres" {
			upd = strings.Replace(upd, "?", "$1", 1)
		}
		_, err := s.DB.SQL().Exec(upd, time.Now().UTC().Add(-time.Minute).Truncate(time.Minute))
		require.NoError(t, err)
		deadline := time.Now().Add(waitLimit)
		for len(s.listState(t, tok, sched).L("runs")) == 0 {
			require.True(t, time.Now().Before(deadline), "no scheduled run by the deadline")
			time.Sleep(200 * time.Millisecond)
		}
		// Let every replica sweep the same tick a few more times.
		for _, srv := range servers {
			srv.listState(t, tok, sched)
		}
		time.Sleep(time.Second)
		l = s.listState(t, tok, sched)
		require.Len(t, l.L("runs"), 1, "one run for the tick")
		require.Equal(t, "SCHEDULE", l.L("runs")[0].S("triggeredBy"))
		require.Equal(t, "IN_PROGRESS", l.S("status"))
		next, err := time.Parse(time.RFC3339, l.S("nextScheduledRunAt"))
		require.NoError(t, err)
		require.True(t, next.After(time.Now()), "the tick moved on to the next minute: %v", next)
	})
}

// TestUpdateUser: a user changes itself, an admin anyone; a MEMBER changing
// another is FORBIDDEN, an AGENT token sees no other user; a Telegram chat
// another user holds is CONFLICT.
func TestUpdateUser(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		const upd = `mutation($in: UpdateUserInput!) { updateUser(input: $in) { user { id name email telegramChatId settings } } }`
		alice, aliceTok := s.member(t, "alice")
		bob, bobTok := s.member(t, "bob")
		u := s.query(t, aliceTok, upd, M{"in": M{"id": alice, "name": "Alice A.", "telegramChatId": "1001",
			"settings": M{"theme": "dark"}}}).at("updateUser.user")
		require.Equal(t, "Alice A.", u.S("name"))
		require.Equal(t, "1001", u.S("telegramChatId"))
		require.Equal(t, "dark", u.at("settings").S("theme"))

		s.requireCode(t, bobTok, upd, M{"in": M{"id": alice, "name": "x"}}, "FORBIDDEN")
		r := s.requireCode(t, bobTok, upd, M{"in": M{"id": bob, "telegramChatId": "1001"}}, "CONFLICT")
		require.Equal(t, "telegramChatId", r.Errors[0].Extensions["field"])
		s.requireCode(t, bobTok, upd, M{"in": M{"id": bob, "email": "not an email"}}, "BAD_USER_INPUT")
		s.requireCode(t, bobTok, upd, M{"in": M{"id": bob, "name": ""}}, "BAD_USER_INPUT")

		u = s.query(t, s.AdminToken, upd, M{"in": M{"id": bob, "email": "bob@example.com"}}).at("updateUser.user")
		require.Equal(t, "bob@example.com", u.S("email"))
		require.Equal(t, "bob", u.S("name"), "left out: kept")

		u = s.query(t, aliceTok, upd, M{"in": M{"id": alice, "telegramChatId": ""}}).at("updateUser.user")
		require.True(t, u.Null("telegramChatId"))
		u = s.query(t, bobTok, upd, M{"in": M{"id": bob, "telegramChatId": "1001"}}).at("updateUser.user")
		require.Equal(t, "1001", u.S("telegramChatId"), "free again")

		project := s.createProject(t, s.AdminToken, "upduser")
		agentUser, agentTok := s.userWithToken(t, "agentu", "AGENT", project)
		s.requireCode(t, agentTok, upd, M{"in": M{"id": alice, "name": "x"}}, "NOT_FOUND")
		s.requireCode(t, agentTok, upd, M{"in": M{"id": agentUser, "name": "x"}}, "FORBIDDEN")
	})
}
