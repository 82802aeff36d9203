package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/domain"
)

// TestAgentTextLimits: what an agent sends is bounded — a long log line is
// cut (and marked), a call of too many lines or bytes is LIMIT_EXCEEDED, a
// long currentStep is BAD_USER_INPUT — and a LOG_APPENDED event carries a
// summary (its first lines, cut short, and the count) while the log keeps
// every line.
func TestAgentTextLimits(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		e := newExecList(t, s, 1)
		e.add(t, "T1", nil)
		run := e.start(t)
		agent := e.claim(t, run).S("agent.id")
		appendLog := `mutation($in: AppendExecutionLogInput!) { appendExecutionLog(input: $in) { execution { logLines } } }`

		long := strings.Repeat("x", 100_000)
		lines := []string{long, "two", "three", "four", "five", "six", "seven"}
		require.Equal(t, 7, s.query(t, e.agent, appendLog, M{"in": M{"agentId": agent, "lines": lines}}).N("appendExecutionLog.execution.logLines"))

		tooMany := make([]string, domain.MaxLogLinesPerCall+1)
		for i := range tooMany {
			tooMany[i] = "l"
		}
		r := s.requireCode(t, e.agent, appendLog, M{"in": M{"agentId": agent, "lines": tooMany}}, "LIMIT_EXCEEDED")
		require.Equal(t, "lines", r.ext("field"))
		r = s.requireCode(t, e.agent, `mutation($in: HeartbeatInput!) { heartbeat(input: $in) { directive } }`,
			M{"in": M{"agentId": agent, "currentStep": strings.Repeat("s", domain.MaxCurrentStep+1)}}, "BAD_USER_INPUT")
		require.Equal(t, "currentStep", r.ext("field"))

		log := s.query(t, e.token, `query($id: ID!) { node(id: $id) { ... on BuildAgent { execution { log(tail: 10) } } } }`,
			M{"id": agent}).Strs("node.execution.log")
		require.Len(t, log, 7, "the refused calls added nothing")
		first := log[0]
		require.LessOrEqual(t, len(first), domain.MaxLogLineBytes)
		require.Contains(t, first, "bytes cut]")

		ev := s.query(t, e.token, `query($id: ID!) { executionRun(id: $id) { events(first: 100, types: [LOG_APPENDED]) {
			nodes { ... on LogAppended { lines firstLine lineCount droppedLines } } } } }`, M{"id": run}).L("executionRun.events.nodes")
		require.Len(t, ev, 1)
		require.Equal(t, 7, ev[0].N("lineCount"))
		require.Zero(t, ev[0].N("droppedLines"))
		summary := ev[0].Strs("lines")
		require.Len(t, summary, domain.LogEventLines)
		require.LessOrEqual(t, len(summary[0]), domain.LogEventLineBytes)
		require.Equal(t, "two", summary[1])
	})
}

// TestResponseSizeLimit: a response whose data would exceed
// --max-response-size is answered LIMIT_EXCEEDED instead.
func TestResponseSizeLimit(t *testing.T) {
	t.Parallel()
	s := startServer(t, "sqlite:"+t.TempDir()+"/db.sqlite", "--max-response-size=4KiB")
	p := s.createProject(t, s.AdminToken, "big")
	for i := range 20 {
		s.createTask(t, s.AdminToken, p, strings.Repeat("t", 200)+string(rune('a'+i)), nil)
	}
	r := s.requireCode(t, s.AdminToken, `{ tasks(first: 50) { nodes { title description } } }`, nil, "LIMIT_EXCEEDED")
	// Either limit may stop it first: the response's (max) or the read
	// budget of twice that (maxRead).
	if r.ext("max") != nil {
		require.EqualValues(t, 4096, r.ext("max"))
	} else {
		require.EqualValues(t, 8192, r.ext("maxRead"))
	}
	require.NotEmpty(t, s.query(t, s.AdminToken, `{ tasks(first: 1) { nodes { id } } }`, nil).L("tasks.nodes")[0].S("id"), "small answers pass")
}

// TestSmallInputFindings: a deadline outside 1970–9999 (year 1 read back as
// none yet scored as overdue) is BAD_USER_INPUT; a duplicate slug is "taken",
// with no word of the other project; a slug whose display-id prefix another
// project holds is accepted with a prefix of its own.
func TestSmallInputFindings(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		p := s.createProject(t, s.AdminToken, "deadline-a")
		r := s.requireCode(t, s.AdminToken, `mutation($in: CreateTaskInput!) { createTask(input: $in) { task { id } } }`,
			M{"in": M{"projectId": p, "title": "old", "deadline": "0001-01-01T00:00:00Z"}}, "BAD_USER_INPUT")
		require.Equal(t, "deadline", r.ext("field"))

		_, member := s.member(t, "slugger")
		create := `mutation($slug: String!) { createProject(input: {name: "x", slug: $slug}) { project { id } } }`
		dup := s.requireCode(t, member, create, M{"slug": "deadline-a"}, "CONFLICT")
		require.Equal(t, "slug", dup.ext("field"))
		require.Equal(t, "slug deadline-a is taken", dup.Errors[0].Message)
		s.query(t, member, create, M{"slug": "deadline-a-2"})
	})
}
