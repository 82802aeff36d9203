package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/loader"
	"github.com/taskgraph/taskgraph/internal/store"
	"github.com/taskgraph/taskgraph/internal/testdb"
)

// BenchmarkReActSteps: recordReActStep through the real server, 16 callers
// at once, into one session (every step queues on that session's row lock)
// and spread over 100 sessions. One iteration is one step; it reports
// steps/s and the call latency (p50, p99).
func BenchmarkReActSteps(b *testing.B) {
	for _, c := range testdb.Cases(b) {
		for _, sessions := range []int{1, 100} {
			b.Run(fmt.Sprintf("%s/sessions=%d", c.Name, sessions), func(b *testing.B) {
				s := startServerWait(b, c.URL(b), loader.DefaultTiming)
				project := s.createProject(b, s.AdminToken, "steps")
				_, agent := s.userWithToken(b, "bench-agent", "AGENT", project)
				ids := make([]string, sessions)
				for i := range ids {
					ids[i] = s.query(b, agent, createSessionMutation, M{"in": M{"projectId": project, "mission": "bench"}}).
						S("createAgentSession.session.id")
				}
				const callers = 16
				hc := fastClient(callers)
				var next atomic.Int64
				var lat latencies
				b.ResetTimer()
				start := time.Now()
				var wg sync.WaitGroup
				for range callers {
					wg.Go(func() {
						for {
							i := next.Add(1) - 1
							if i >= int64(b.N) {
								return
							}
							t0 := time.Now()
							err := s.call(hc, agent, recordStepMutation, M{"in": M{"sessionId": ids[i%int64(sessions)],
								"thought": "look at the failing test", "action": "run_tests", "actionType": "TOOL_CALL",
								"observation": M{"passed": 41, "failed": 1}, "success": false}}, nil)
							if err != nil {
								b.Error(err)
								return
							}
							lat.add(time.Since(t0))
						}
					})
				}
				wg.Wait()
				elapsed := time.Since(start)
				b.StopTimer()
				b.ReportMetric(float64(b.N)/elapsed.Seconds(), "steps/s")
				b.ReportMetric(lat.ms(0.5), "p50-ms")
				b.ReportMetric(lat.ms(0.99), "p99-ms")
			})
		}
	}
}

// lessonWords is the vocabulary of the generated lessons.
var lessonWords = strings.Fields(`migration database index query cache timeout retry deadlock lock
	transaction schema table column constraint foreign key unique backup restore replica primary
	deploy rollout canary rollback container image kubernetes pod node cluster service ingress
	test unit integration flaky fixture mock stub coverage benchmark profile memory leak goroutine
	channel mutex race condition context cancel deadline http request response header cookie session
	token auth permission role user project task list wave agent heartbeat sweep lease claim
	parser lexer grammar syntax error message stack trace panic recover log metric alert dashboard
	queue worker job batch stream event cursor subscription websocket reconnect resume replay
	file directory path permission symlink archive compress encode decode json yaml csv protobuf
	build compile link module dependency version upgrade vendor cache proxy mirror registry`)

// seedLessons inserts n generated lessons into project straight through SQL
// (500 rows a statement); the FTS5 triggers and the GIN index keep up as they
// would with recordLesson.
func seedLessons(tb testing.TB, db *store.DB, project string, n int) {
	tb.Helper()
	r := rand.New(rand.NewPCG(1, 2))
	text := func(k int) string {
		w := make([]string, k)
		for i := range w {
			w[i] = lessonWords[r.IntN(len(lessonWords))]
		}
		return strings.Join(w, " ")
	}
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Microsecond)
	const chunk = 500
	for done := 0; done < n; done += chunk {
		var sb strings.Builder
		sb.WriteString(`INSERT INTO lessons (id, project_id, context, what_failed, what_worked, lesson, tool_name, confidence, dedupe_key, created_at) VALUES `)
		var args []any
		for i := done; i < min(done+chunk, n); i++ {
			if i > done {
				sb.WriteString(", ")
			}
			p := len(args)
			if db.Dialect() == store.Postgres {
				ph := make([]string, 10)
				for j := range ph {
					ph[j] = fmt.Sprintf("$%d", p+j+1)
				}
				sb.WriteString("(" + strings.Join(ph, ", ") + ")")
			} else {
				sb.WriteString("(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
			}
			args = append(args, uuid.NewString(), project, text(12), text(6), text(8), text(10),
				lessonWords[r.IntN(20)], r.Float64(), fmt.Sprintf("bench-%d", i), now.Add(time.Duration(i)*time.Microsecond))
		}
		_, err := db.SQL().ExecContext(ctx, sb.String(), args...)
		require.NoError(tb, err)
	}
}

// BenchmarkLessonSearch: lessons(projectId, query, first: 10) over 100,000
// lessons, through the real server; one iteration is one search of two or
// three words. It reports the latency (p50, p99).
func BenchmarkLessonSearch(b *testing.B) {
	for _, c := range testdb.Cases(b) {
		b.Run(c.Name, func(b *testing.B) {
			s := startServerWait(b, c.URL(b), loader.DefaultTiming)
			project := s.createProject(b, s.AdminToken, "lessons")
			_, pid, ok := domain.ParseGlobalID(project)
			require.True(b, ok)
			seedLessons(b, s.DB, pid, 100_000)
			q := `query($p: ID!, $q: String!) { lessons(projectId: $p, query: $q, first: 10) { nodes { id confidence } } }`
			r := rand.New(rand.NewPCG(3, 4))
			hc := fastClient(1)
			var lat latencies
			b.ResetTimer()
			for range b.N {
				words := make([]string, 2+r.IntN(2))
				for i := range words {
					words[i] = lessonWords[r.IntN(len(lessonWords))]
				}
				t0 := time.Now()
				var out struct{ Lessons struct{ Nodes []any } }
				require.NoError(b, s.call(hc, s.AdminToken, q, M{"p": project, "q": strings.Join(words, " ")}, &out))
				lat.add(time.Since(t0))
				require.NotEmpty(b, out.Lessons.Nodes)
			}
			b.StopTimer()
			b.ReportMetric(lat.ms(0.5), "p50-ms")
			b.ReportMetric(lat.ms(0.99), "p99-ms")
		})
	}
}
