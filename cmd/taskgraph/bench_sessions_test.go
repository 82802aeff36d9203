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

// lessonWords is the vocabulary of the generated lessons: 5,000 made-up
// words, drawn with a Zipf distribution as the words of real texts are (a few
// very common, most rare), so that a search matches what it would in a real
// store of lessons.
var lessonWords = func() []string {
	r := rand.New(rand.NewPCG(7, 8))
	const letters = "abcdefghijklmnopqrstuvwxyz"
	seen := map[string]bool{}
	var out []string
	for len(out) < 5000 {
		b := make([]byte, 4+r.IntN(6))
		for i := range b {
			b[i] = letters[r.IntN(len(letters))]
		}
		if w := string(b); !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}()

// lessonWord draws a word of the vocabulary.
func lessonWord(z *rand.Zipf) string { return lessonWords[z.Uint64()] }

// seedLessons inserts n generated lessons into project straight through SQL
// (500 rows a statement); the FTS5 triggers and the GIN index keep up as they
// would with recordLesson.
func seedLessons(tb testing.TB, db *store.DB, project string, n int) {
	tb.Helper()
	r := rand.New(rand.NewPCG(1, 2))
	z := rand.NewZipf(r, 1.1, 2, uint64(len(lessonWords)-1))
	text := func(k int) string {
		w := make([]string, k)
		for i := range w {
			w[i] = lessonWord(z)
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
			// Queries of two or three words, drawn as the texts' words are.
			z := rand.NewZipf(rand.New(rand.NewPCG(3, 4)), 1.1, 2, uint64(len(lessonWords)-1))
			hc := fastClient(1)
			var lat latencies
			b.ResetTimer()
			for i := range b.N {
				words := make([]string, 2+i%2)
				for j := range words {
					words[j] = lessonWord(z)
				}
				t0 := time.Now()
				var out struct{ Lessons struct{ Nodes []any } }
				require.NoError(b, s.call(hc, s.AdminToken, q, M{"p": project, "q": strings.Join(words, " ")}, &out))
				lat.add(time.Since(t0))
			}
			b.StopTimer()
			b.ReportMetric(lat.ms(0.5), "p50-ms")
			b.ReportMetric(lat.ms(0.99), "p99-ms")
		})
	}
}
