package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/testdb"
)

// TestTracing exports the server's and an agent's spans to an in-process
// OTLP/HTTP receiver and checks one query's span tree (HTTP request →
// operation → batched read → statement, joined to the caller's
// traceparent), a mutation's transaction with the events it wrote, and
// one task's trace across `taskgraph agent` and the server.
func TestTracing(t *testing.T) {
	testdb.Run(t, func(t *testing.T, url string) {
		recv := newOTLPReceiver(t)
		t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", recv.URL)
		t.Setenv("OTEL_SERVICE_NAME", "")
		t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "")
		t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "100")
		s, stop := startServerWith(t, url, serverOptions{})
		slug := fmt.Sprintf("tr%04d", planSlugs.Add(1))
		seedChain(t, s, slug, 3)
		e := newExecList(t, s, 1)
		e.add(t, "traced", nil)
		runID := e.start(t)

		// A query and a mutation sent with a traceparent of the test's.
		queryTrace, querySpan, mutTrace := randomHex(16), randomHex(8), randomHex(16)
		post(t, s, queryTrace, querySpan, `query Nested`+strings.TrimPrefix(nestedQuery, "query"), map[string]any{"slug": slug})
		post(t, s, mutTrace, querySpan, `mutation Create($in: CreateTaskInput!) { createTask(input: $in) { task { id } } }`,
			map[string]any{"in": map[string]any{"projectId": e.project, "title": "secret-title-" + slug}})

		// A subscription to the run's events: each event delivered is a span.
		conn := s.dial(t, e.token)
		sub, err := conn.Subscribe(context.Background(),
			`subscription RunFeed($r: ID!) { runEvents(runId: $r) { type run { id status } task { id title } } }`, M{"r": runID})
		require.NoError(t, err)

		// One task executed by the agent: a command that logs a line and
		// lasts a few heartbeats.
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		require.NoError(t, run(ctx, []string{"agent", "--url", s.URL, "--token", e.agent, "--run", runID,
			"--exec", "echo traced output; sleep 0.4", "--heartbeat", "100ms", "--poll", "20ms"}, io.Discard, io.Discard))
		require.Equal(t, "COMPLETED", e.run(t, runID).S("status"))

		// One queue item run by `taskgraph worker`.
		qf := newQueueFixture(t, s)
		fn := fmt.Sprintf("traced%04d", planSlugs.Add(1))
		qf.function(t, fn, 1, 60)
		item := qf.enqueue(t, fn, nil).S("item.id")
		require.NoError(t, run(ctx, []string{"worker", "--function", fn, "--exec", "cat", "--drain",
			"--url", s.URL, "--token", qf.token}, io.Discard, io.Discard))
		require.Equal(t, "COMPLETED", qf.item(t, item).S("status"))
		for range 2 {
			nctx, ncancel := context.WithTimeout(context.Background(), waitLimit)
			r, err := sub.Next(nctx)
			ncancel()
			require.NoError(t, err)
			require.Empty(t, r.Errors)
		}
		require.NoError(t, conn.Close())
		stop() // serve flushes its spans as it exits

		spans, bad := recv.spans()
		require.Empty(t, bad, "requests the receiver could not decode")
		for _, sp := range spans {
			for k, v := range sp.Attrs {
				str := fmt.Sprint(v)
				require.NotContains(t, str, slug, "span %s attribute %s holds an argument", sp.Name, k)
				require.NotContains(t, str, "SELECT ", "span %s attribute %s holds statement text", sp.Name, k)
			}
		}

		// Every statement is named by the store function a use-case called.
		for _, sp := range spans {
			if sp.Attrs["db.operation.name"] != nil {
				require.Regexp(t, `^([A-Z][A-Za-z]*Queries|Q|DB)\.[A-Z][A-Za-z]*$`, sp.Name)
			}
		}

		// The query: HTTP → operation → batched read → statement.
		q := inTrace(spans, queryTrace)
		http := only(t, q, func(sp recvSpan) bool { return sp.Name == "POST /graphql" })
		require.Equal(t, querySpan, http.Parent, "the request's span is the child of the caller's traceparent")
		require.Equal(t, "taskgraph", http.Service)
		require.EqualValues(t, 200, http.Attrs["http.response.status_code"])
		op := only(t, q, func(sp recvSpan) bool { return sp.Name == "query Nested" })
		require.Equal(t, http.SpanID, op.Parent)
		require.Equal(t, "query", op.Attrs["graphql.operation.type"])
		require.Equal(t, "Nested", op.Attrs["graphql.operation.name"])
		require.Greater(t, op.Attrs["graphql.complexity"], int64(0))
		require.Equal(t, []any{"project"}, op.Attrs["graphql.operation.root_fields"])
		batches := all(q, func(sp recvSpan) bool { return sp.Name == "batched read" && sp.Parent == op.SpanID })
		require.NotEmpty(t, batches, "batched reads under the operation")
		underBatch := 0
		for _, b := range batches {
			require.Greater(t, b.Attrs["taskgraph.batch.keys"], int64(0))
			for _, st := range all(q, func(sp recvSpan) bool { return sp.Parent == b.SpanID }) {
				require.Contains(t, []any{"postgresql", "sqlite"}, st.Attrs["db.system.name"], st.Name)
				require.Regexp(t, `^[A-Z][A-Za-z]*\.[A-Z][A-Za-z]*$`, st.Name, "a statement is named by its store function")
				require.Equal(t, "SELECT", st.Attrs["db.operation.name"])
				underBatch++
			}
		}
		require.NotZero(t, underBatch, "statements under the batched reads")
		// The root field's read runs at once (no batch): a statement under the operation.
		require.NotEmpty(t, all(q, func(sp recvSpan) bool { return sp.Parent == op.SpanID && sp.Attrs["db.system.name"] != nil }))

		// The mutation: its transaction, with the events it wrote.
		m := inTrace(spans, mutTrace)
		mop := only(t, m, func(sp recvSpan) bool { return sp.Name == "mutation Create" })
		txs := all(m, func(sp recvSpan) bool { return sp.Name == "transaction" && sp.Parent == mop.SpanID })
		require.NotEmpty(t, txs)
		tx := txs[len(txs)-1]
		require.Equal(t, true, tx.Attrs["db.committed"])
		require.Greater(t, tx.Attrs["taskgraph.events.count"], int64(0))
		require.Contains(t, tx.Attrs["taskgraph.events.types"], "TASK_CREATED")
		require.NotEmpty(t, all(m, func(sp recvSpan) bool { return sp.Parent == tx.SpanID && sp.Attrs["db.transaction"] == true }),
			"the transaction's statements are its children")

		// The agent's task: its root span, and the server's spans of its
		// claim, heartbeats, logs and completion in the same trace.
		root := only(t, spans, func(sp recvSpan) bool {
			return sp.Service == "taskgraph-agent" && strings.HasPrefix(sp.Name, "agent task ") && sp.Attrs["taskgraph.run.id"] == runID
		})
		require.Empty(t, root.Parent, "the task's span is a root")
		task := inTrace(spans, root.TraceID)
		var fields []string
		for _, sp := range task {
			if sp.Service != "taskgraph" || !strings.HasPrefix(sp.Name, "mutation") {
				continue
			}
			parent := only(t, task, func(p recvSpan) bool { return p.SpanID == sp.Parent })
			require.Equal(t, "POST /graphql", parent.Name)
			require.Equal(t, root.SpanID, parent.Parent, "each request of the task is the child of the agent's span")
			for _, f := range sp.Attrs["graphql.operation.root_fields"].([]any) {
				fields = append(fields, f.(string))
			}
		}
		for _, want := range []string{"claimTask", "heartbeat", "appendExecutionLog", "completeTask"} {
			require.Contains(t, fields, want, "the task's trace holds its %s", want)
		}
		// The subscription: its start, then a span per event delivered,
		// with the reads of the event's fields as children.
		subOp := only(t, spans, func(sp recvSpan) bool { return sp.Name == "subscription RunFeed" })
		require.Equal(t, "RunFeed", subOp.Attrs["graphql.operation.name"])
		deliveries := all(spans, func(sp recvSpan) bool { return sp.Name == "subscription delivery RunFeed" })
		require.GreaterOrEqual(t, len(deliveries), 2)
		withReads := 0
		for _, d := range deliveries {
			require.Empty(t, d.Parent, "a delivery is a trace of its own")
			require.Equal(t, []string{subOp.SpanID}, d.Links, "linked to the subscription's span")
			require.Greater(t, d.Attrs["taskgraph.response.bytes"], int64(0))
			if len(all(spans, func(sp recvSpan) bool { return sp.Parent == d.SpanID })) > 0 {
				withReads++
			}
		}
		require.NotZero(t, withReads, "an event's reads are children of its delivery")

		// The worker's item: its root span, and the server's spans of its
		// claim and report in the same trace.
		wroot := only(t, spans, func(sp recvSpan) bool {
			return sp.Service == "taskgraph-worker" && sp.Name == "worker item "+fn
		})
		require.Equal(t, item, wroot.Attrs["taskgraph.queue_item.id"])
		var wfields []string
		for _, sp := range inTrace(spans, wroot.TraceID) {
			if sp.Service == "taskgraph" && strings.HasPrefix(sp.Name, "mutation") {
				wfields = append(wfields, anyStrings(sp.Attrs["graphql.operation.root_fields"])...)
			}
		}
		require.ElementsMatch(t, []string{"claimQueueItems", "completeQueueItem"}, wfields)

		claimTx := all(task, func(sp recvSpan) bool {
			return sp.Name == "transaction" && slices.Contains(anyStrings(sp.Attrs["taskgraph.events.types"]), "TASK_CLAIMED")
		})
		require.NotEmpty(t, claimTx, "the claim's transaction and its TASK_CLAIMED event")
	})
}

// post sends a GraphQL request with a W3C traceparent.
func post(t *testing.T, s *testServer, traceID, parentID, query string, vars map[string]any) {
	t.Helper()
	body, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPost, s.URL+"/graphql", bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+s.AdminToken)
	req.Header.Set("traceparent", "00-"+traceID+"-"+parentID+"-01")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var out gqlResponse
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	require.Empty(t, out.Errors)
}

func inTrace(spans []recvSpan, traceID string) []recvSpan {
	return all(spans, func(sp recvSpan) bool { return sp.TraceID == traceID })
}

func all(spans []recvSpan, keep func(recvSpan) bool) []recvSpan {
	var out []recvSpan
	for _, sp := range spans {
		if keep(sp) {
			out = append(out, sp)
		}
	}
	return out
}

// only is the one span that keep accepts.
func only(t *testing.T, spans []recvSpan, keep func(recvSpan) bool) recvSpan {
	t.Helper()
	got := all(spans, keep)
	if len(got) != 1 {
		var names []string
		for _, sp := range spans {
			names = append(names, sp.Service+": "+sp.Name)
		}
		t.Fatalf("%d matching spans, want 1, among %d:\n%s", len(got), len(spans), strings.Join(names, "\n"))
	}
	return got[0]
}

func anyStrings(v any) []string {
	var out []string
	if l, ok := v.([]any); ok {
		for _, x := range l {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
	}
	return out
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
