package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/testdb"
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

// TestGroupingCostBoundedByText: with 300 tasks of ~99 KB descriptions in a
// project, one small createTask costs the background grouping a bounded
// amount of CPU: it compares the tasks' stored text signatures (64 words
// each), not their descriptions, and clusters on a snapshot outside the
// write transaction. Before, each such create cost 6-7 s of CPU (tokenising
// 30 MB) inside the writer. CPU is this process's (the server runs in it),
// read with getrusage, never wall time.
func TestGroupingCostBoundedByText(t *testing.T) {
	testdb.Run(t, func(t *testing.T, url string) {
		s := startServer(t, url)
		project := s.createProject(t, s.AdminToken, fmt.Sprintf("big%04d", planSlugs.Add(1)))
		rng := rand.New(rand.NewPCG(7, 25))
		vocab := make([]string, 5000)
		for i := range vocab {
			vocab[i] = fmt.Sprintf("w%dx%d", i, rng.IntN(1000))
		}
		describe := func() string {
			var b strings.Builder
			for b.Len() < 99_000 {
				b.WriteString(vocab[rng.IntN(len(vocab))])
				b.WriteByte(' ')
			}
			return b.String()
		}
		// 300 big tasks, 8 to a request (the body limit is 1 MiB), in
		// categories and files of their own so that they form no group.
		cats := []string{"FEATURE", "BUG", "DOCS", "REFACTOR", "TEST", "INFRA"}
		// Under the race detector (make test) 100 of them: the
		// descriptions' size is the point, and the figure comes from a run
		// without it.
		n := 300
		if raceEnabled {
			n = 100
		}
		for start := 0; start < n; start += 8 {
			var q strings.Builder
			vars := M{}
			q.WriteString("mutation(")
			for i := start; i < min(start+8, n); i++ {
				fmt.Fprintf(&q, "$i%d: CreateTaskInput! ", i)
			}
			q.WriteString(") {")
			for i := start; i < min(start+8, n); i++ {
				vars[fmt.Sprintf("i%d", i)] = M{"projectId": project, "title": fmt.Sprintf("Big task %d", i),
					"description": describe(), "category": cats[i%len(cats)],
					"affectedFiles": []string{fmt.Sprintf("big/d%d/f%d.go", i, i)}}
				fmt.Fprintf(&q, " t%d: createTask(input: $i%d) { task { id } }", i, i)
			}
			q.WriteString(" }")
			r, err := s.post(s.AdminToken, q.String(), vars)
			require.NoError(t, err)
			require.Empty(t, r.Errors)
		}
		// suggested waits for a PENDING suggestion triggered by one of tasks.
		// After handling a project's triggers the background grouping lets
		// the project rest four times as long as the handling took; the big
		// tasks' handling under the race detector on a loaded machine (a
		// cold make test) is slow, so the wait is longer than waitLimit.
		suggested := func(tasks ...string) {
			eventuallyWithin(t, 4*waitLimit, "a suggestion triggered by the new task", func() bool {
				var d struct {
					Node struct {
						GroupingSuggestions struct {
							Nodes []struct{ TriggerTask *struct{ ID string } }
						}
					}
				}
				r := s.do(t, s.AdminToken, `query($p: ID!) { node(id: $p) { ... on Project {
					groupingSuggestions(status: [PENDING], first: 100) { nodes { triggerTask { id } } } } } }`, M{"p": project})
				require.Empty(t, r.Errors)
				require.NoError(t, json.Unmarshal(r.Data, &d))
				for _, n := range d.Node.GroupingSuggestions.Nodes {
					if n.TriggerTask != nil && slices.Contains(tasks, n.TriggerTask.ID) {
						return true
					}
				}
				time.Sleep(50 * time.Millisecond)
				return false
			})
		}
		small := func(title string) string {
			return s.createTask(t, s.AdminToken, project, title, M{"category": "FEATURE",
				"affectedFiles": []string{"probe/login.go", "probe/session.go"}})
		}
		// Two probes that group: once their suggestion is made (attributed to
		// the first of them the background saw), it has caught up with the
		// big tasks; the third probe is then handled on its own.
		suggested(small("Probe login one"), small("Probe login two"))

		cpu0 := processCPU(t)
		suggested(small("Probe login three"))
		used := processCPU(t) - cpu0
		t.Logf("one small createTask among %d tasks of 99 KB: %s of CPU (request, clustering, polling)", n, used)
		// Before: 6-7 s without the race detector (tokenising 30 MB per
		// clustering), over ten times that with it.
		limit := 1500 * time.Millisecond
		if raceEnabled {
			limit = 15 * time.Second
		}
		require.Less(t, used, limit, "grouping's cost must not grow with the descriptions' size")
	})
}
