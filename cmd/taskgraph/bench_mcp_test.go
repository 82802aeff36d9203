package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/mcp"
	"github.com/taskgraph/taskgraph/internal/testdb"
)

// BenchmarkMCPToolCall: the server CPU of a tool call over POST /mcp against
// that of the same GraphQL operation over POST /graphql, for a read
// (get_task: the task in full with its impacts, links and lessons) and a
// write (heartbeat of a claimed agent). The server runs in a process of its
// own, whose CPU time (/proc/PID/stat) is read around b.N calls of each; the
// clients run here. One iteration is one call of each kind; it reports the
// server's CPU per GraphQL call, per tool call, and the difference
// (the MCP layer: the transport, JSON-RPC, argument validation, the
// in-process request and the result's re-encoding).
func BenchmarkMCPToolCall(b *testing.B) {
	for _, c := range testdb.Cases(b) {
		b.Run(c.Name, func(b *testing.B) {
			child := startChildServer(b, "127.0.0.1:0", c.URL(b), "bench-admin-token")
			s := &testServer{URL: "http://" + child.addr, AdminToken: "bench-admin-token"}
			project := s.createProject(b, s.AdminToken, "mcpbench")
			list := s.createList(b, s.AdminToken, project, "bench")
			task := s.createTask(b, s.AdminToken, project, "Benchmark the tools", M{"taskListId": list,
				"description": strings.Repeat("Measure it. ", 20), "codebaseTests": []string{"go test ./..."},
				"fileImpacts": []M{{"filePath": "internal/mcp/server.go", "operation": "UPDATE"}}})
			_, agentToken := s.userWithToken(b, "mcp-bench-agent", "AGENT", project)
			run := s.query(b, s.AdminToken, `mutation($l: ID!) { startExecutionRun(input: {taskListId: $l}) { run { id } } }`, M{"l": list}).
				S("startExecutionRun.run.id")
			agent := s.query(b, agentToken, claimMutation, M{"in": M{"runId": run}}).S("claimTask.agent.id")

			hc := fastClient(1)
			session := mcpBenchSession(b, s.URL, agentToken)
			ops := []struct {
				name      string
				graphql   func() error
				tool      string
				arguments map[string]any
			}{
				{"get_task", func() error {
					return s.call(hc, agentToken, `query($id: ID, $d: String) { task(id: $id, displayId: $d) { `+mcp.TaskDetail+` } }`, M{"id": task}, nil)
				}, "get_task", map[string]any{"id": task}},
				{"heartbeat", func() error {
					return s.call(hc, agentToken, `mutation($in: HeartbeatInput!) { heartbeat(input: $in) { directive } }`,
						M{"in": M{"agentId": agent}}, nil)
				}, "heartbeat", map[string]any{"agentId": agent}},
			}
			for _, op := range ops {
				b.Run(op.name, func(b *testing.B) {
					n := b.N
					if raceEnabled {
						n = min(n, 20)
					}
					before := childCPU(b, child)
					for range n {
						if err := op.graphql(); err != nil {
							b.Fatal(err)
						}
					}
					mid := childCPU(b, child)
					for range n {
						r, err := session.CallTool(context.Background(), &sdk.CallToolParams{Name: op.tool, Arguments: op.arguments})
						if err != nil {
							b.Fatal(err)
						}
						if r.IsError {
							b.Fatalf("%s: %v", op.tool, r.Content)
						}
					}
					after := childCPU(b, child)
					perGraphQL := float64((mid - before).Microseconds()) / float64(n)
					perTool := float64((after - mid).Microseconds()) / float64(n)
					b.ReportMetric(perGraphQL, "graphql-cpu-us/call")
					b.ReportMetric(perTool, "tool-cpu-us/call")
					b.ReportMetric(perTool-perGraphQL, "mcp-overhead-cpu-us/call")
				})
			}
		})
	}
}

// mcpBenchSession connects the Go SDK's client to POST /mcp with token.
func mcpBenchSession(b *testing.B, url, token string) *sdk.ClientSession {
	b.Helper()
	hc := &http.Client{Transport: bearer{token: token, next: fastClient(1).Transport}}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil).
		Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: url + "/mcp", HTTPClient: hc, DisableStandaloneSSE: true}, nil)
	require.NoError(b, err)
	b.Cleanup(func() { _ = cs.Close() })
	return cs
}

// bearer adds the Authorization header to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (t bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+t.token)
	return t.next.RoundTrip(r)
}

// childCPU is the child server's CPU time so far (user + system, from
// /proc/PID/stat, in clock ticks of 10 ms).
func childCPU(b *testing.B, child *childServer) time.Duration {
	b.Helper()
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", child.cmd.Process.Pid))
	if err != nil {
		b.Skipf("no /proc: %v", err)
	}
	// Fields after the command's closing parenthesis: state is the 3rd
	// field of the line, utime and stime the 14th and 15th.
	rest := string(raw[strings.LastIndexByte(string(raw), ')')+2:])
	fields := strings.Fields(rest)
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	require.NoError(b, err1)
	require.NoError(b, err2)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}
