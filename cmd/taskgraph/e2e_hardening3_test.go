package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestQuestionFailTaskFence: a FAIL_TASK question fails a task and takes its
// agent's lease, so only the task's holder (agentId, or the taskId of a task
// the caller's own agent holds) or a caller who may change the task asks
// one, and never with less than --question-min-fail-delay to answer. Before
// the fence a second AGENT token failed another agent's task with
// expiresAt now+1s.
func TestQuestionFailTaskFence(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		e := newExecList(t, s, 2)
		e.add(t, "A", nil)
		e.add(t, "B", nil)
		run := e.start(t)
		c := e.claim(t, run)
		held, agent := c.S("task.id"), c.S("agent.id")
		pending := e.ids["B"]
		if held == pending {
			pending = e.ids["A"]
		}
		_, intruder := s.userWithToken(t, fmt.Sprintf("intruder%04d", planSlugs.Add(1)), "AGENT", e.project)
		in := func(extra M, after time.Duration) M {
			m := M{"questionType": "APPROVAL", "questionText": "go on?", "timeoutAction": "FAIL_TASK",
				"expiresAt": time.Now().Add(after).UTC().Format(time.RFC3339Nano)}
			for k, v := range extra {
				m[k] = v
			}
			return M{"in": m}
		}

		// Another AGENT token of the project: FORBIDDEN, on the held task and
		// on a PENDING task of the running list alike.
		for _, task := range []string{held, pending} {
			r := s.requireCode(t, intruder, askMutation, in(M{"taskId": task}, time.Hour), "FORBIDDEN")
			require.Equal(t, "timeoutAction", r.ext("field"))
		}
		// It may still ask about the task with another timeout action.
		q := s.query(t, intruder, askMutation, in(M{"taskId": held, "timeoutAction": "EXPIRE"}, time.Second)).at("askQuestion.question")
		require.Equal(t, "PENDING", q.S("status"))

		// Too little time to answer: BAD_USER_INPUT on expiresAt, for the
		// holder and for an admin.
		r := s.requireCode(t, e.agent, askMutation, in(M{"agentId": agent}, time.Second), "BAD_USER_INPUT")
		require.Equal(t, "expiresAt", r.ext("field"))
		r = s.requireCode(t, e.token, askMutation, in(M{"taskId": pending}, 30*time.Second), "BAD_USER_INPUT")
		require.Equal(t, "expiresAt", r.ext("field"))

		// The holder (by agentId, or its token by taskId) and an admin may.
		for _, ok := range []struct {
			token string
			in    M
		}{{e.agent, M{"agentId": agent}}, {e.agent, M{"taskId": held}}, {e.token, M{"taskId": pending}}} {
			q := s.query(t, ok.token, askMutation, in(ok.in, 2*time.Minute)).at("askQuestion.question")
			require.Equal(t, "FAIL_TASK", q.S("timeoutAction"))
		}
		// Without expiresAt, FAIL_TASK never fires early.
		s.query(t, e.token, askMutation, M{"in": M{"taskId": pending, "questionType": "APPROVAL", "questionText": "x",
			"timeoutAction": "FAIL_TASK"}})

		require.Equal(t, "CONTINUE", e.heartbeat(t, agent))
	})
}
