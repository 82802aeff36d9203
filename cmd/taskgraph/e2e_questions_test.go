package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/loader"
	"github.com/taskgraph/taskgraph/internal/testdb"
)

const (
	questionFields = `id status questionType priority questionText blocking callbackData answer answeredAt
		answeredBy { id } answeredByTimeout timeoutAction expiresAt defaultAnswer createdAt
		options { value label description } project { id } taskList { id } task { id status } run { id } agent { id }`
	askMutation    = `mutation($in: AskQuestionInput!) { askQuestion(input: $in) { question { ` + questionFields + ` } } }`
	answerMutation = `mutation($in: AnswerQuestionInput!) { answerQuestion(input: $in) { question { ` + questionFields + ` } } }`
	skipMutation   = `mutation($in: SkipQuestionInput!) { skipQuestion(input: $in) { question { ` + questionFields + ` } } }`
	questionQuery  = `query($id: ID!) { question(id: $id) { ` + questionFields + ` } }`
	questionEvents = `query($id: ID!) { node(id: $id) { ... on Project {
		events(first: 100, types: [QUESTION_ASKED QUESTION_ANSWERED QUESTION_EXPIRED QUESTION_SKIPPED]) { nodes {
		type task { id } run { id } agent { id }
		... on QuestionAsked { question { id } }
		... on QuestionAnswered { question { id } answer byTimeout }
		... on QuestionExpired { question { id } timeoutAction }
		... on QuestionSkipped { question { id } reason } } } } } }`
)

// ask asks a question as token and returns it.
func (e *execList) ask(t *testing.T, token string, in M) jv {
	t.Helper()
	return e.s.query(t, token, askMutation, M{"in": in}).at("askQuestion.question")
}

// questionEventsOf lists the project's question events as "TYPE question detail".
func (e *execList) questionEventsOf(t *testing.T) []jv {
	t.Helper()
	return e.s.query(t, e.token, questionEvents, M{"id": e.project}).L("node.events.nodes")
}

func yesNo() []M {
	return []M{{"value": "yes", "label": "Yes"}, {"value": "no", "label": "No", "description": "do not"}}
}

// TestQuestions: an agent asks about its task under lease fencing; people
// answer (first answer wins, replays are idempotent) or skip; agents may not;
// every input rule names its field; the question shows on its task, run,
// agent and project, and each change is one event.
func TestQuestions(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		e := newExecList(t, s, 2)
		a := e.add(t, "A", nil)
		e.add(t, "B", nil)
		run := e.start(t)
		c := e.claim(t, run)
		agent := c.S("agent.id")
		task := c.S("task.id")

		q := e.ask(t, e.agent, M{"agentId": agent, "questionType": "DECISION", "questionText": "  Ship it?  ",
			"options": yesNo(), "defaultAnswer": "no", "timeoutAction": "USE_DEFAULT",
			"expiresAt": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)})
		qid := q.S("id")
		require.Equal(t, "PENDING", q.S("status"))
		require.Equal(t, "MEDIUM", q.S("priority"))
		require.Equal(t, "Ship it?", q.S("questionText"))
		require.Equal(t, task, q.S("task.id"))
		require.Equal(t, run, q.S("run.id"))
		require.Equal(t, agent, q.S("agent.id"))
		require.Equal(t, e.list, q.S("taskList.id"))
		require.Equal(t, e.project, q.S("project.id"))
		require.False(t, q.B("blocking"))
		require.False(t, q.B("answeredByTimeout"))
		require.Equal(t, "do not", q.S("options.1.description"))
		require.True(t, q.Null("options.0.description"))
		require.NotEmpty(t, q.S("callbackData"))
		require.LessOrEqual(t, len(q.S("callbackData")), 64)

		// Reads: the agent waits on it; task, run, list and project show it.
		d := s.query(t, e.token, `query($a: ID!, $t: ID!, $r: ID!, $p: ID!) {
			a: node(id: $a) { ... on BuildAgent { waitingOn { id } } }
			t: node(id: $t) { ... on Task { questions { id } } }
			r: executionRun(id: $r) { questions { id } }
			p: node(id: $p) { ... on Project { pendingQuestionCount } } }`,
			M{"a": agent, "t": task, "r": run, "p": e.project})
		require.Equal(t, qid, d.S("a.waitingOn.id"))
		require.Equal(t, []string{qid}, d.Col("t.questions", "id"))
		require.Equal(t, []string{qid}, d.Col("r.questions", "id"))
		require.Equal(t, 1, d.N("p.pendingQuestionCount"))
		require.Equal(t, qid, s.query(t, e.agent, `query($id: ID!) { node(id: $id) { id } }`, M{"id": qid}).S("node.id"))

		// Agents neither answer nor skip.
		s.requireCode(t, e.agent, answerMutation, M{"in": M{"id": qid, "answer": "yes"}}, "FORBIDDEN")
		s.requireCode(t, e.agent, skipMutation, M{"in": M{"id": qid}}, "FORBIDDEN")
		// Another member sees nothing.
		_, other := s.member(t, fmt.Sprintf("qother%04d", planSlugs.Add(1)))
		s.requireCode(t, other, answerMutation, M{"in": M{"id": qid, "answer": "yes"}}, "NOT_FOUND")
		require.True(t, s.query(t, other, questionQuery, M{"id": qid}).Null("question"))
		// With options, the answer is one of their values.
		r := s.requireCode(t, e.token, answerMutation, M{"in": M{"id": qid, "answer": "maybe"}}, "BAD_USER_INPUT")
		require.Equal(t, "answer", r.ext("field"))
		r = s.requireCode(t, e.token, answerMutation, M{"in": M{"answer": "yes"}}, "BAD_USER_INPUT")
		require.Equal(t, "id", r.ext("field"))

		ans := s.query(t, e.token, answerMutation, M{"in": M{"id": qid, "answer": "yes"}}).at("answerQuestion.question")
		require.Equal(t, "ANSWERED", ans.S("status"))
		require.Equal(t, "yes", ans.S("answer"))
		require.False(t, ans.Null("answeredBy"))
		require.False(t, ans.Null("answeredAt"))
		// The same answer again: unchanged, no event; another: CONFLICT.
		again := s.query(t, e.token, answerMutation, M{"in": M{"id": qid, "answer": "yes"}}).at("answerQuestion.question")
		require.Equal(t, ans.S("answeredAt"), again.S("answeredAt"))
		s.requireCode(t, e.token, answerMutation, M{"in": M{"id": qid, "answer": "no"}}, "CONFLICT")
		s.requireCode(t, e.token, skipMutation, M{"in": M{"id": qid}}, "CONFLICT")
		require.True(t, s.query(t, e.token, `query($a: ID!) { node(id: $a) { ... on BuildAgent { waitingOn { id } } } }`,
			M{"a": agent}).Null("node.waitingOn"))

		// A question about a list, answered by callbackData; one about a task, skipped.
		lq := e.ask(t, e.token, M{"taskListId": e.list, "questionType": "APPROVAL", "questionText": "free form?", "priority": "HIGH"})
		require.True(t, lq.Null("task"))
		require.True(t, lq.Null("run"))
		la := s.query(t, e.token, answerMutation, M{"in": M{"callbackData": lq.S("callbackData"), "answer": "anything goes"}}).
			at("answerQuestion.question")
		require.Equal(t, lq.S("id"), la.S("id"))
		require.Equal(t, "anything goes", la.S("answer"))
		tq := e.ask(t, e.token, M{"taskId": a, "questionType": "VALIDATION", "questionText": "valid?"})
		require.Equal(t, a, tq.S("task.id"))
		sk := s.query(t, e.token, skipMutation, M{"in": M{"id": tq.S("id"), "reason": "not now"}}).at("skipQuestion.question")
		require.Equal(t, "SKIPPED", sk.S("status"))
		require.Equal(t, "SKIPPED", s.query(t, e.token, skipMutation, M{"in": M{"id": tq.S("id")}}).S("skipQuestion.question.status"))
		s.requireCode(t, e.token, answerMutation, M{"in": M{"id": tq.S("id"), "answer": "late"}}, "CONFLICT")

		// The connection and its filter.
		conn := s.query(t, e.token, `query($p: ID!, $f: QuestionFilter) { questions(projectId: $p, filter: $f, first: 2) {
			totalCount nodes { id } pageInfo { hasNextPage endCursor } } }`, M{"p": e.project}).at("questions")
		require.Equal(t, 3, conn.N("totalCount"))
		require.Equal(t, []string{tq.S("id"), lq.S("id")}, conn.Col("nodes", "id"), "newest first")
		require.True(t, conn.B("pageInfo.hasNextPage"))
		more := s.query(t, e.token, `query($p: ID!, $after: String) { questions(projectId: $p, first: 2, after: $after) { nodes { id } } }`,
			M{"p": e.project, "after": conn.S("pageInfo.endCursor")}).Col("questions.nodes", "id")
		require.Equal(t, []string{qid}, more)
		aQuestions := []string{tq.S("id")}
		if task == a {
			aQuestions = append(aQuestions, qid) // the agent claimed A
		}
		for _, f := range []struct {
			filter M
			want   []string
		}{
			{M{"status": []string{"SKIPPED"}}, []string{tq.S("id")}},
			{M{"priority": []string{"HIGH"}}, []string{lq.S("id")}},
			{M{"questionType": []string{"DECISION", "VALIDATION"}}, []string{tq.S("id"), qid}},
			{M{"runId": run}, []string{tq.S("id"), qid}}, // a task's question belongs to the list's active run
			{M{"taskId": a}, aQuestions},
			{M{"taskListId": e.list}, []string{tq.S("id"), lq.S("id"), qid}},
		} {
			got := s.query(t, e.token, `query($p: ID!, $f: QuestionFilter) { questions(projectId: $p, filter: $f) { nodes { id } } }`,
				M{"p": e.project, "f": f.filter}).Col("questions.nodes", "id")
			require.Equal(t, f.want, got, "filter %v", f.filter)
		}
		s.requireCode(t, e.token, `query($p: ID!) { questions(projectId: $p, first: 101) { totalCount } }`, M{"p": e.project}, "LIMIT_EXCEEDED")

		// Events: one per change, none for the replays.
		var kinds []string
		for _, ev := range e.questionEventsOf(t) {
			kinds = append(kinds, ev.S("type")+" "+ev.S("question.id"))
		}
		require.Equal(t, []string{"QUESTION_ASKED " + qid, "QUESTION_ANSWERED " + qid, "QUESTION_ASKED " + lq.S("id"),
			"QUESTION_ANSWERED " + lq.S("id"), "QUESTION_ASKED " + tq.S("id"), "QUESTION_SKIPPED " + tq.S("id")}, kinds)
		evs := e.questionEventsOf(t)
		require.Equal(t, agent, evs[0].S("agent.id"))
		require.Equal(t, run, evs[0].S("run.id"))
		require.Equal(t, "yes", evs[1].S("answer"))
		require.False(t, evs[1].B("byTimeout"))
		require.Equal(t, "not now", evs[5].S("reason"))

		// Once its task is done, the agent's questions are LEASE_LOST.
		e.complete(t, agent)
		r = s.requireCode(t, e.agent, askMutation, M{"in": M{"agentId": agent, "questionType": "DECISION", "questionText": "late?"}}, "LEASE_LOST")
		require.Equal(t, "agentId", r.ext("field"))
	})
}

// TestQuestionInputRules: every rule of askQuestion's input is BAD_USER_INPUT
// naming its field.
func TestQuestionInputRules(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		e := newExecList(t, s, 1)
		a := e.add(t, "A", nil)
		past := time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)
		for _, c := range []struct {
			name  string
			in    M
			field string
		}{
			{"no target", M{}, "agentId"},
			{"two targets", M{"taskId": a, "taskListId": e.list}, "agentId"},
			{"empty text", M{"taskId": a, "questionText": "  "}, "questionText"},
			{"duplicate option values", M{"taskId": a, "options": []M{{"value": "x", "label": "X"}, {"value": "x", "label": "Y"}}}, "options.1.value"},
			{"empty option label", M{"taskId": a, "options": []M{{"value": "x", "label": ""}}}, "options.0.label"},
			{"USE_DEFAULT without default", M{"taskId": a, "timeoutAction": "USE_DEFAULT"}, "defaultAnswer"},
			{"default not an option", M{"taskId": a, "options": yesNo(), "defaultAnswer": "maybe"}, "defaultAnswer"},
			{"FAIL_TASK without a task", M{"taskListId": e.list, "timeoutAction": "FAIL_TASK"}, "timeoutAction"},
			{"expiresAt in the past", M{"taskId": a, "expiresAt": past}, "expiresAt"},
		} {
			in := M{"questionType": "DECISION", "questionText": "why?"}
			for k, v := range c.in {
				in[k] = v
			}
			r := s.requireCode(t, e.token, askMutation, M{"in": in}, "BAD_USER_INPUT")
			require.Equal(t, c.field, r.ext("field"), c.name)
		}
		s.requireCode(t, e.token, askMutation, M{"in": M{"taskId": missingID("Task"), "questionType": "DECISION", "questionText": "x"}}, "NOT_FOUND")
		s.requireCode(t, e.token, askMutation, M{"in": M{"agentId": missingID("BuildAgent"), "questionType": "DECISION", "questionText": "x"}}, "NOT_FOUND")
	})
}

// TestQuestionConcurrentAnswers: 20 different answers at once — exactly one
// wins, the others are CONFLICT, and one QUESTION_ANSWERED event exists.
func TestQuestionConcurrentAnswers(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		e := newExecList(t, s, 1)
		a := e.add(t, "A", nil)
		var opts []M
		for i := range 20 {
			opts = append(opts, M{"value": fmt.Sprintf("v%d", i), "label": fmt.Sprintf("V%d", i)})
		}
		q := e.ask(t, e.token, M{"taskId": a, "questionType": "DECISION", "questionText": "which?", "options": opts})
		out := make([]gqlResponse, 20)
		errs := make([]error, 20)
		done := make(chan int)
		start := make(chan struct{})
		for i := range 20 {
			go func() {
				<-start
				out[i], errs[i] = s.post(e.token, answerMutation, M{"in": M{"id": q.S("id"), "answer": fmt.Sprintf("v%d", i)}})
				done <- i
			}()
		}
		close(start)
		for range 20 {
			<-done
		}
		winner := ""
		for i, r := range out {
			require.NoError(t, errs[i])
			if len(r.Errors) == 0 {
				require.Empty(t, winner, "two answers won")
				winner = fmt.Sprintf("v%d", i)
				continue
			}
			require.Equal(t, "CONFLICT", r.code(), "%+v", r.Errors)
		}
		require.NotEmpty(t, winner)
		require.Equal(t, winner, s.query(t, e.token, questionQuery, M{"id": q.S("id")}).S("question.answer"))
		n := 0
		for _, ev := range e.questionEventsOf(t) {
			if ev.S("type") == "QUESTION_ANSWERED" {
				n++
				require.Equal(t, winner, ev.S("answer"))
			}
		}
		require.Equal(t, 1, n)
	})
}

// TestQuestionStatements: questions nested under a list of tasks cost the
// same statements for 1 task and for 50.
func TestQuestionStatements(t *testing.T) {
	t.Parallel()
	testdb.Run(t, func(t *testing.T, url string) {
		// Batches that stay open long enough not to split on a loaded machine
		// (-race), so that the counts are exact.
		s := startServerWait(t, url, loader.Timing{Idle: 200 * time.Millisecond, MaxWait: 10 * time.Second})
		measure := func(n int) int64 {
			e := newExecList(t, s, 1)
			for i := range n {
				id := e.add(t, fmt.Sprintf("T%d", i), nil)
				e.ask(t, e.token, M{"taskId": id, "questionType": "DECISION", "questionText": "q?"})
			}
			query := `query($p: ID!) { node(id: $p) { ... on Project { pendingQuestionCount
				tasks(first: 100) { nodes { id questions { id status task { id questions { id } } } } } } }
				questions(projectId: $p, first: 100) { totalCount nodes { id taskList { id questions { id } } task { id } } } }`
			s.query(t, e.token, query, M{"p": e.project}) // warm the token's last-used mark
			// Work the asks left in the background (events, grouping) counts
			// its statements too and only ever adds: the fewest of three
			// reads is the query's own.
			var fewest int64 = -1
			for range 3 {
				before := s.DB.Statements()
				d := s.query(t, e.token, query, M{"p": e.project})
				require.Len(t, d.L("node.tasks.nodes"), n)
				require.Len(t, d.L("questions.nodes"), n)
				if c := s.DB.Statements() - before; fewest < 0 || c < fewest {
					fewest = c
				}
			}
			return fewest
		}
		one, fifty := measure(1), measure(50)
		require.Equal(t, one, fifty, "statements for 1 task vs 50 tasks")
		t.Logf("questions under tasks: %d statements for 1 task, %d for 50", one, fifty)
	})
}
