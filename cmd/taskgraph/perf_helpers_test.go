package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// bulkTasks creates tasks (each input a CreateTaskInput without projectId)
// in batches of aliased createTask mutations, a few batches in parallel, and
// returns their ids in input order. Each task is still its own transaction.
func bulkTasks(t testing.TB, s *testServer, token, projectID string, inputs []M) []string {
	t.Helper()
	const batch, workers = 25, 4
	ids := make([]string, len(inputs))
	errs := make(chan error, len(inputs)/batch+1)
	sem := make(chan struct{}, workers)
	var wg sync.WaitGroup
	for start := 0; start < len(inputs); start += batch {
		end := min(start+batch, len(inputs))
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			var q strings.Builder
			vars := M{}
			q.WriteString("mutation(")
			for i := start; i < end; i++ {
				fmt.Fprintf(&q, "$i%d: CreateTaskInput! ", i)
				in := M{"projectId": projectID}
				for k, v := range inputs[i] {
					in[k] = v
				}
				vars[fmt.Sprintf("i%d", i)] = in
			}
			q.WriteString(") {")
			for i := start; i < end; i++ {
				fmt.Fprintf(&q, " t%d: createTask(input: $i%d) { task { id } }", i, i)
			}
			q.WriteString(" }")
			r, err := s.post(token, q.String(), vars)
			if err == nil && len(r.Errors) > 0 {
				err = fmt.Errorf("createTask: %v", r.Errors)
			}
			if err != nil {
				errs <- err
				return
			}
			var d map[string]struct{ Task struct{ ID string } }
			if err := json.Unmarshal(r.Data, &d); err != nil {
				errs <- err
				return
			}
			for i := start; i < end; i++ {
				ids[i] = d[fmt.Sprintf("t%d", i)].Task.ID
			}
		}()
	}
	wg.Wait()
	close(errs)
	require.NoError(t, <-errs)
	return ids
}

// bulkLinks adds relationships [source, target, type] in batches of aliased
// mutations, one batch at a time (cycle checks serialise per project anyway).
func bulkLinks(t testing.TB, s *testServer, token string, links [][3]string) {
	t.Helper()
	const batch = 25
	for start := 0; start < len(links); start += batch {
		end := min(start+batch, len(links))
		var q strings.Builder
		q.WriteString("mutation {")
		for i := start; i < end; i++ {
			l := links[i]
			fmt.Fprintf(&q, " l%d: addTaskRelationship(input: {sourceTaskId: %q, targetTaskId: %q, type: %s}) { relationship { id } }",
				i, l[0], l[1], l[2])
		}
		q.WriteString(" }")
		s.mustDo(t, token, q.String(), nil, nil)
	}
}

// fastClient is an HTTP client that keeps many connections to one server
// open, for load generators with hundreds of concurrent callers (the default
// client keeps 2 idle connections per host and would open, and leave in
// TIME_WAIT, a new one for nearly every request).
func fastClient(conns int) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns = conns
	tr.MaxIdleConnsPerHost = conns
	tr.MaxConnsPerHost = conns
	return &http.Client{Transport: tr, Timeout: 60 * time.Second}
}

// call posts a GraphQL request with client c and decodes its data into dst;
// GraphQL errors come back as the error.
func (s *testServer) call(c *http.Client, token, query string, vars M, dst any) error {
	body, err := json.Marshal(M{"query": query, "variables": vars})
	if err != nil {
		return err
	}
	return s.callBody(c, token, body, dst)
}

// callBody posts a JSON request body encoded already, as call does.
func (s *testServer) callBody(c *http.Client, token string, body []byte, dst any) error {
	req, err := http.NewRequest(http.MethodPost, s.URL+"/graphql", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var out struct {
		Data   json.RawMessage `json:"data"`
		Errors []gqlError      `json:"errors"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return fmt.Errorf("decode response (HTTP %d): %w", resp.StatusCode, err)
	}
	if len(out.Errors) > 0 {
		return gqlErrors(out.Errors)
	}
	if dst != nil {
		return json.Unmarshal(out.Data, dst)
	}
	return nil
}

// gqlErrors are the errors of a GraphQL response: an answer of the server,
// unlike a transport error.
type gqlErrors []gqlError

func (es gqlErrors) Error() string {
	msgs := make([]string, len(es))
	for i, e := range es {
		msgs[i] = fmt.Sprintf("%v: %s", e.Extensions["code"], e.Message)
	}
	return strings.Join(msgs, "; ")
}

// code is the first error's extensions.code.
func (es gqlErrors) code() string {
	if len(es) == 0 {
		return ""
	}
	c, _ := es[0].Extensions["code"].(string)
	return c
}

// errCode is err's GraphQL error code, "" when err is not a GraphQL answer.
func errCode(err error) string {
	var es gqlErrors
	if errors.As(err, &es) {
		return es.code()
	}
	return ""
}

// closedLoop runs b.N calls of do from clients goroutines, each starting its
// next call when the last one answered, and returns the time they took and
// their latencies; the benchmark's timer runs for them alone. do gets the
// client's number, 0 … clients-1, and the call's, 1 … b.N. The first error
// fails the benchmark.
func closedLoop(b *testing.B, clients int, do func(client int, n int64) error) (time.Duration, *latencies) {
	var (
		next    atomic.Int64
		lat     latencies
		wg      sync.WaitGroup
		errOnce sync.Once
		failure error
	)
	b.ResetTimer()
	start := time.Now()
	for c := range clients {
		wg.Go(func() {
			for n := next.Add(1); n <= int64(b.N); n = next.Add(1) {
				t0 := time.Now()
				if err := do(c, n); err != nil {
					errOnce.Do(func() { failure = err })
					return
				}
				lat.add(time.Since(t0))
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	require.NoError(b, failure)
	return elapsed, &lat
}

// reportRequests reports a closed loop of requests: their rate, latencies,
// this process's CPU per request since cpu0 and stmts statements each.
func reportRequests(b *testing.B, elapsed time.Duration, lat *latencies, cpu0 time.Duration, stmts int64) {
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "req/s")
	b.ReportMetric(lat.ms(0.5), "p50-ms")
	b.ReportMetric(lat.ms(0.99), "p99-ms")
	b.ReportMetric(float64((processCPU(b)-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/req")
	b.ReportMetric(float64(stmts), "stmts/req")
}

// latencies collects durations from many goroutines.
type latencies struct {
	mu sync.Mutex
	d  []time.Duration
}

func (l *latencies) add(d time.Duration) {
	l.mu.Lock()
	l.d = append(l.d, d)
	l.mu.Unlock()
}

// ms returns the q-quantile (0..1) in milliseconds.
func (l *latencies) ms(q float64) float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.d) == 0 {
		return 0
	}
	s := slices.Clone(l.d)
	slices.Sort(s)
	i := min(int(float64(len(s))*q), len(s)-1)
	return float64(s[i].Microseconds()) / 1000
}

func (l *latencies) reset() {
	l.mu.Lock()
	l.d = l.d[:0]
	l.mu.Unlock()
}

func (l *latencies) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.d)
}
