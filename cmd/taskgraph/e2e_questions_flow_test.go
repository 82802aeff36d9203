package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/testdb"
)

// TestQuestionBlocking: a PENDING blocking question holds its task back
// from claims while the other tasks of the wave are claimed; when it is the
// only reason nothing is handed out, claims say WAITING_ON_QUESTION; the
// answer releases the task.
func TestQuestionBlocking(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		e := newExecList(t, s, 5)
		e.add(t, "A", nil)
		held := e.add(t, "B", nil)
		e.add(t, "C", nil)
		run := e.start(t)
		q := e.ask(t, e.token, M{"taskId": held, "questionType": "APPROVAL", "questionText": "may B run?", "blocking": true})
		require.True(t, q.B("blocking"))
		require.Equal(t, run, q.S("run.id"))
		// A non-blocking question holds nothing back.
		e.ask(t, e.token, M{"taskId": held, "questionType": "DECISION", "questionText": "just asking"})

		var claimed []string
		for range 2 {
			c := e.claim(t, run)
			require.True(t, c.Null("waitReason"))
			claimed = append(claimed, c.S("task.id"))
		}
		require.NotContains(t, claimed, held)
		require.Equal(t, "WAITING_ON_QUESTION", e.claim(t, run).S("waitReason"))
		require.Equal(t, "PENDING", s.query(t, e.token, `query($id: ID!) { node(id: $id) { ... on Task { status } } }`,
			M{"id": held}).S("node.status"))

		s.query(t, e.token, answerMutation, M{"in": M{"id": q.S("id"), "answer": "yes"}})
		c := e.claim(t, run)
		require.Equal(t, held, c.S("task.id"))
		require.Equal(t, "NO_READY_TASK", e.claim(t, run).S("waitReason"))
	})
}

// TestQuestionRunEnd: cancelling a run, or its completion, skips its
// PENDING questions, one QUESTION_SKIPPED each.
func TestQuestionRunEnd(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		t.Run("cancel", func(t *testing.T) {
			e := newExecList(t, s, 1)
			e.add(t, "A", nil)
			run := e.start(t)
			agent := e.claim(t, run).S("agent.id")
			q := e.ask(t, e.agent, M{"agentId": agent, "questionType": "DECISION", "questionText": "go on?"})
			answered := e.ask(t, e.agent, M{"agentId": agent, "questionType": "DECISION", "questionText": "done?"})
			s.query(t, e.token, answerMutation, M{"in": M{"id": answered.S("id"), "answer": "yes"}})
			require.Equal(t, "CANCELLED", e.action(t, "cancelExecutionRun", run).S("status"))
			got := s.query(t, e.token, questionQuery, M{"id": q.S("id")}).at("question")
			require.Equal(t, "SKIPPED", got.S("status"))
			require.Equal(t, "ANSWERED", s.query(t, e.token, questionQuery, M{"id": answered.S("id")}).S("question.status"))
			var skipped []string
			for _, ev := range e.questionEventsOf(t) {
				if ev.S("type") == "QUESTION_SKIPPED" {
					skipped = append(skipped, ev.S("question.id"))
					require.Contains(t, ev.S("reason"), "CANCELLED")
				}
			}
			require.Equal(t, []string{q.S("id")}, skipped)
			s.requireCode(t, e.token, answerMutation, M{"in": M{"id": q.S("id"), "answer": "late"}}, "CONFLICT")
		})
		t.Run("completion", func(t *testing.T) {
			e := newExecList(t, s, 1)
			a := e.add(t, "A", nil)
			run := e.start(t)
			q := e.ask(t, e.token, M{"taskId": a, "questionType": "VALIDATION", "questionText": "fine?"})
			e.complete(t, e.claim(t, run).S("agent.id"))
			require.Equal(t, "COMPLETED", e.run(t, run).S("status"))
			require.Equal(t, "SKIPPED", s.query(t, e.token, questionQuery, M{"id": q.S("id")}).S("question.status"))
		})
	})
}

// TestQuestionExpiry: the sweep applies each timeout action by the database
// clock — EXPIRE, USE_DEFAULT (answered by timeout, by nobody), FAIL_TASK
// (task FAILED naming the question, its agent's later calls LEASE_LOST) —
// each question exactly once, however many replicas sweep (on PostgreSQL,
// two more server processes sweep the same database).
func TestQuestionExpiry(t *testing.T) {
	t.Parallel()
	testdb.Run(t, func(t *testing.T, url string) {
		s := startServer(t, url, "--question-sweep-interval", "20ms", "--question-min-fail-delay", "1ms")
		if strings.HasPrefix(url, "postgres") {
			for range 2 {
				startChildServer(t, "127.0.0.1:0", url, s.AdminToken, "--question-sweep-interval", "10ms")
			}
		}
		e := newExecList(t, s, 2)
		e.add(t, "A", nil)
		e.add(t, "B", nil)
		run := e.start(t)
		c1, c2 := e.claim(t, run), e.claim(t, run)
		agent1, agent2 := c1.S("agent.id"), c2.S("agent.id")
		failing := c2.S("task.id")

		// Every question expires a second after it is asked (by the clock
		// the database shares with this test).
		ask := func(token string, in M) jv {
			in["expiresAt"] = time.Now().Add(time.Second).UTC().Format(time.RFC3339Nano)
			return e.ask(t, token, in)
		}
		expire := ask(e.token, M{"taskListId": e.list, "questionType": "DECISION", "questionText": "expire?"})
		def := ask(e.agent, M{"agentId": agent1, "questionType": "APPROVAL", "questionText": "default?", "options": []M{
			{"value": "go", "label": "Go"}, {"value": "stop", "label": "Stop"}}, "defaultAnswer": "go",
			"timeoutAction": "USE_DEFAULT"})
		fail := ask(e.agent, M{"agentId": agent2, "questionType": "APPROVAL", "questionText": "fail?",
			"timeoutAction": "FAIL_TASK"})
		var bulk []string
		for i := range 20 {
			bulk = append(bulk, ask(e.token, M{"taskListId": e.list, "questionType": "DECISION",
				"questionText": fmt.Sprintf("bulk %d", i)}).S("id"))
		}
		later := e.ask(t, e.token, M{"taskListId": e.list, "questionType": "DECISION", "questionText": "later",
			"expiresAt": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)})

		pending := func() int {
			return s.query(t, e.token, `query($p: ID!) { questions(projectId: $p, filter: {status: [PENDING]}) { totalCount } }`,
				M{"p": e.project}).N("questions.totalCount")
		}
		eventually(t, "every expired question handled", func() bool { return pending() == 1 })

		got := s.query(t, e.token, questionQuery, M{"id": expire.S("id")}).at("question")
		require.Equal(t, "EXPIRED", got.S("status"))
		require.True(t, got.Null("answer"))

		got = s.query(t, e.token, questionQuery, M{"id": def.S("id")}).at("question")
		require.Equal(t, "ANSWERED", got.S("status"))
		require.Equal(t, "go", got.S("answer"))
		require.True(t, got.B("answeredByTimeout"))
		require.True(t, got.Null("answeredBy"))
		require.False(t, got.Null("answeredAt"))
		defAnsweredAt := got.S("answeredAt")

		got = s.query(t, e.token, questionQuery, M{"id": fail.S("id")}).at("question")
		require.Equal(t, "EXPIRED", got.S("status"))
		require.Equal(t, "FAILED", got.S("task.status"))
		require.Equal(t, failing, got.S("task.id"))
		s.requireCode(t, e.agent, heartbeatMutation, M{"in": M{"agentId": agent2}}, "LEASE_LOST")
		s.requireCode(t, e.agent, completeMutation, M{"in": M{"agentId": agent2}}, "LEASE_LOST")
		reason := s.query(t, e.token, `query($id: ID!) { node(id: $id) { ... on Task { stateHistory { toStatus reason } } } }`,
			M{"id": failing}).L("node.stateHistory")
		var failedReason string
		for _, h := range reason {
			if h.S("toStatus") == "FAILED" {
				failedReason = h.S("reason")
			}
		}
		require.Contains(t, failedReason, fail.S("id"))
		// The other agent carries on.
		require.Equal(t, "CONTINUE", e.heartbeat(t, agent1))
		require.Equal(t, "PENDING", s.query(t, e.token, questionQuery, M{"id": later.S("id")}).S("question.status"))

		// Late answers: CONFLICT, the timeout is never rewritten.
		s.requireCode(t, e.token, answerMutation, M{"in": M{"id": expire.S("id"), "answer": "x"}}, "CONFLICT")
		s.requireCode(t, e.token, answerMutation, M{"in": M{"id": def.S("id"), "answer": "stop"}}, "CONFLICT")
		// The answer the USE_DEFAULT timeout chose, again: the question unchanged.
		same := s.query(t, e.token, answerMutation, M{"in": M{"id": def.S("id"), "answer": "go"}}).at("answerQuestion.question")
		require.Equal(t, "ANSWERED", same.S("status"))
		require.Equal(t, "go", same.S("answer"))
		require.True(t, same.B("answeredByTimeout"))
		require.True(t, same.Null("answeredBy"))
		require.Equal(t, defAnsweredAt, same.S("answeredAt"))

		// Each question was handled exactly once.
		settled := map[string]int{}
		for _, ev := range e.questionEventsOf(t) {
			switch ev.S("type") {
			case "QUESTION_EXPIRED", "QUESTION_ANSWERED":
				settled[ev.S("question.id")]++
				if ev.S("question.id") == def.S("id") {
					require.True(t, ev.B("byTimeout"))
					require.Equal(t, "go", ev.S("answer"))
				}
				if ev.S("question.id") == fail.S("id") {
					require.Equal(t, "FAIL_TASK", ev.S("timeoutAction"))
				}
			}
		}
		for _, id := range append(bulk, expire.S("id"), def.S("id"), fail.S("id")) {
			require.Equal(t, 1, settled[id], "question %s settled %d times", id, settled[id])
		}
		require.Len(t, settled, 23)
	})
}

// TestQuestionAskCommand: `taskgraph agent --exec` runs a script that calls
// `taskgraph ask`; the question is answered over the API and the script
// receives the answer on stdout. A skipped question makes ask exit 3.
func TestQuestionAskCommand(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		for _, c := range []struct {
			name, settle, want string
		}{
			{"answered", "answer", "answer=yes status=0"},
			{"skipped", "skip", "answer= status=3"},
		} {
			t.Run(c.name, func(t *testing.T) {
				e := newExecList(t, s, 1)
				e.add(t, "A", nil)
				runID := e.start(t)
				// This test binary is the taskgraph command (see TestMain).
				script := fmt.Sprintf(`a=$(%s=1 %q ask "Proceed with the migration?" --option yes=Yes --option no=No --blocking); `+
					`echo "answer=$a status=$?"`, envExecMain, os.Args[0])
				done := make(chan error, 1)
				ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
				defer cancel()
				go func() {
					done <- run(ctx, []string{"agent", "--url", s.URL, "--token", e.agent, "--run", runID, "--exec", script,
						"--poll", "20ms", "--heartbeat", "200ms"}, io.Discard, io.Discard)
				}()
				var qid string
				eventually(t, "the script asks", func() bool {
					nodes := s.query(t, e.token, `query($p: ID!) { questions(projectId: $p) { nodes { id status questionText blocking agent { id } options { value } } } }`,
						M{"p": e.project}).L("questions.nodes")
					if len(nodes) == 0 {
						return false
					}
					require.Equal(t, "Proceed with the migration?", nodes[0].S("questionText"))
					require.True(t, nodes[0].B("blocking"))
					require.False(t, nodes[0].Null("agent"))
					require.Equal(t, []string{"yes", "no"}, nodes[0].Col("options", "value"))
					qid = nodes[0].S("id")
					return true
				})
				if c.settle == "answer" {
					s.query(t, e.token, answerMutation, M{"in": M{"id": qid, "answer": "yes"}})
				} else {
					s.query(t, e.token, skipMutation, M{"in": M{"id": qid}})
				}
				require.NoError(t, <-done)
				ex := s.query(t, e.token, `query($id: ID!) { executionRun(id: $id) { status executions { log } } }`,
					M{"id": runID}).at("executionRun")
				require.Equal(t, "COMPLETED", ex.S("status"))
				require.Contains(t, ex.Strs("executions.0.log"), c.want)
			})
		}
	})
}
