package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/testdb"
)

// mcpTools are the tools of the MCP contract.
var mcpTools = []string{"append_log", "ask_human", "claim_task", "complete_task", "create_task", "fail_task", "get_run",
	"get_session_state", "get_task", "heartbeat", "link_tasks", "list_projects", "list_tasks", "plan_waves", "record_lesson",
	"record_test_result", "save_session_state", "search_lessons", "start_run", "update_task"}

var mcpSlugs atomic.Int64

// TestMCPReferenceClient: the official TypeScript SDK client, over stdio
// (spawning `taskgraph mcp`) and over Streamable HTTP (POST /mcp), lists the
// tools, plans and starts a run with a MEMBER-or-better token, takes a task
// claim → heartbeat → log → test → complete with an AGENT token, waits in
// ask_human (progress seen) while a person answers through GraphQL, gets
// LEASE_LOST as a tool error after the run is cancelled, and is refused
// create_task with the AGENT token — on both databases.
func TestMCPReferenceClient(t *testing.T) {
	t.Parallel()
	node := mcpNode(t, "@modelcontextprotocol/sdk")
	eachDB(t, func(t *testing.T, s *testServer) {
		for _, transport := range []string{"stdio", "http"} {
			t.Run(transport, func(t *testing.T) { mcpScenario(t, s, node, transport) })
		}
	})
}

func mcpScenario(t *testing.T, s *testServer, node, transport string) {
	slug := fmt.Sprintf("mcp%s%d", transport, mcpSlugs.Add(1))
	project := s.createProject(t, s.AdminToken, slug)
	list := s.createList(t, s.AdminToken, project, "docs")
	_, agentToken := s.userWithToken(t, slug+"-agent", "AGENT", project)
	lead := startMCPDriver(t, node, s, transport, s.AdminToken)
	agent := startMCPDriver(t, node, s, transport, agentToken)

	// The tools and the loop in the instructions.
	var names []string
	for _, tool := range agent.listTools() {
		names = append(names, tool.Name)
		require.NotEmpty(t, tool.Description)
		require.Equal(t, "object", tool.InputSchema["type"])
	}
	slices.Sort(names)
	require.Equal(t, mcpTools, names)
	for _, step := range []string{"claim_task", "heartbeat", "append_log", "complete_task", "fail_task", "LEASE_LOST"} {
		require.Contains(t, agent.hello.Instructions, step)
	}

	// Planning, by slug and display ids; an AGENT token may not.
	agent.fails("create_task", M{"project": slug, "title": "not mine"}, "FORBIDDEN")
	task := lead.ok("create_task", M{"project": slug, "title": "Write the README", "taskList": list,
		"codebaseTests": []string{"go test ./docs"}, "fileImpacts": []M{{"filePath": "README.md", "operation": "UPDATE"}}}).at("task")
	require.Equal(t, "PENDING", task.S("status"))
	display := task.S("displayId")
	require.Equal(t, 1, lead.ok("plan_waves", M{"taskList": list}).N("totalTasks"))
	run := lead.ok("start_run", M{"taskList": list}).S("run.id")

	// The agent's loop.
	claim := agent.ok("claim_task", M{"taskList": list, "hostname": "laptop", "workingDirectory": "/src"})
	agentID := claim.S("agentId")
	require.Equal(t, display, claim.S("task.displayId"))
	require.Equal(t, []string{"go test ./docs"}, claim.Strs("task.codebaseTests"))
	require.Equal(t, "README.md", claim.S("task.fileImpacts.0.filePath"))
	require.Equal(t, "CONTINUE", agent.ok("heartbeat", M{"agentId": agentID, "progressPercent": 10, "currentStep": "reading"}).S("directive"))
	require.Equal(t, 2, agent.ok("append_log", M{"agentId": agentID, "lines": []string{"editing README.md", "done"}}).N("logLines"))
	agent.ok("record_test_result", M{"agentId": agentID, "level": "CODEBASE", "testIndex": 0, "status": "PASSED", "testName": "go test ./docs"})
	done := agent.ok("complete_task", M{"agentId": agentID, "filesModified": []string{"README.md"}})
	require.Equal(t, "COMPLETED", done.S("task.status"))
	require.Equal(t, "COMPLETED", agent.ok("get_task", M{"displayId": display}).S("task.status"))
	require.Equal(t, 1, lead.ok("get_run", M{"run": run}).N("run.tasksCompleted"))
	// The same events as the GraphQL calls make.
	events := s.query(t, s.AdminToken, `query($r: ID!) { executionRun(id: $r) { events(first: 50) { nodes { type } } } }`, M{"r": run}).
		Col("executionRun.events.nodes", "type")
	for _, e := range []string{"TASK_CLAIMED", "AGENT_HEARTBEAT", "LOG_APPENDED", "TEST_RESULT_RECORDED"} {
		require.Contains(t, events, e)
	}

	// ask_human: waits, with progress, for a person's answer through GraphQL.
	list2 := s.createList(t, s.AdminToken, project, "decisions")
	lead.ok("create_task", M{"project": project, "title": "Pick a colour", "taskList": list2})
	run2 := lead.ok("start_run", M{"taskList": list2}).S("run.id")
	agent2 := agent.ok("claim_task", M{"run": run2}).S("agentId")
	ask := agent.start("ask_human", M{"agentId": agent2, "question": "Blue or green?", "options": []string{"blue", "green"}, "timeoutSeconds": 120})
	p := ask.nextProgress()
	require.EqualValues(t, 120, p["total"])
	require.Contains(t, p["message"], "waiting for a person")
	q := s.query(t, s.AdminToken, `query($p: ID!) { questions(projectId: $p, filter: {status: [PENDING]}) { nodes { id questionText options { value } } } }`,
		M{"p": project}).at("questions.nodes.0")
	require.Equal(t, "Blue or green?", q.S("questionText"))
	s.query(t, s.AdminToken, `mutation($q: ID!) { answerQuestion(input: {id: $q, answer: "green"}) { question { status } } }`, M{"q": q.S("id")})
	answered := ask.result()
	require.False(t, answered.IsError, answered.text())
	require.Equal(t, "ANSWERED", answered.StructuredContent["status"])
	require.Equal(t, "green", answered.StructuredContent["answer"])
	require.NotEmpty(t, ask.progress)

	// LEASE_LOST as a tool error once the run is cancelled.
	s.query(t, s.AdminToken, `mutation($r: ID!) { cancelExecutionRun(input: {runId: $r}) { run { status } } }`, M{"r": run2})
	text := agent.fails("append_log", M{"agentId": agent2, "lines": []string{"still here"}}, "LEASE_LOST")
	require.Contains(t, text, "STOP working on it")
}

// TestMCPStdioKeepsLease: `taskgraph mcp` heartbeats the agent its client
// claimed while the model is silent, across many lease lengths, so the
// model's complete_task still holds the task; afterwards it stops.
func TestMCPStdioKeepsLease(t *testing.T) {
	t.Parallel()
	node := mcpNode(t, "@modelcontextprotocol/sdk")
	// A lease of two heartbeat intervals; the command heartbeats four times
	// an interval. Under the race detector every call is slower: longer.
	interval := 100 * time.Millisecond
	if raceEnabled {
		interval = time.Second
	}
	s := startServer(t, testdb.SQLite(t), fmt.Sprintf("--heartbeat-interval=%s", interval), "--missed-heartbeats=2")
	project := s.createProject(t, s.AdminToken, "kept")
	list := s.createList(t, s.AdminToken, project, "kept")
	s.createTask(t, s.AdminToken, project, "Think for a while", M{"taskListId": list})
	run := s.query(t, s.AdminToken, `mutation($l: ID!) { startExecutionRun(input: {taskListId: $l}) { run { id } } }`, M{"l": list}).
		S("startExecutionRun.run.id")
	_, agentToken := s.userWithToken(t, "kept-agent", "AGENT", project)
	agent := startMCPDriver(t, node, s, "stdio", agentToken, "--keep-leases", (interval / 4).String())
	require.Contains(t, agent.hello.Instructions, "keeps your lease")
	agentID := agent.ok("claim_task", M{"run": run}).S("agentId")
	// Where the agent runs, from `taskgraph mcp` when the client does not say.
	host, _ := os.Hostname()
	require.Equal(t, host, s.query(t, s.AdminToken, `query($a: ID!) { node(id: $a) { ... on BuildAgent { hostname } } }`, M{"a": agentID}).S("node.hostname"))
	beats := func() int {
		return s.query(t, s.AdminToken, `query($a: ID!) { node(id: $a) { ... on BuildAgent { heartbeatCount status } } }`, M{"a": agentID}).N("node.heartbeatCount")
	}
	// Thirty-two heartbeats are four lease lengths at the least.
	require.Eventually(t, func() bool { return beats() >= 32 }, waitLimit, 10*time.Millisecond)
	require.Equal(t, "COMPLETED", agent.ok("complete_task", M{"agentId": agentID}).S("task.status"))
}

// TestMCPHTTPNeedsToken: POST /mcp answers 401 without a valid bearer token,
// before any MCP message is read.
func TestMCPHTTPNeedsToken(t *testing.T) {
	t.Parallel()
	s := startServer(t, testdb.SQLite(t))
	init := []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	for _, auth := range []string{"", "Bearer not-a-token"} {
		req, err := http.NewRequest(http.MethodPost, s.URL+"/mcp", bytes.NewReader(init))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode, "Authorization %q", auth)
		require.Contains(t, resp.Header.Get("WWW-Authenticate"), "Bearer")
	}
}

// TestMCPInspectorListsTools: the MCP Inspector's CLI lists the tools of
// `taskgraph mcp` and calls one.
func TestMCPInspectorListsTools(t *testing.T) {
	t.Parallel()
	node := mcpNode(t, "@modelcontextprotocol/inspector")
	s := startServer(t, testdb.SQLite(t))
	inspect := func(args ...string) []byte {
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		cmd := exec.CommandContext(ctx, node, append([]string{"node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js", "--cli",
			"-e", envExecMain + "=1", "-e", "TASKGRAPH_URL=" + s.URL, "-e", "TASKGRAPH_TOKEN=" + s.AdminToken, selfBinary(t), "mcp"}, args...)...)
		cmd.Dir = mcpClientDir
		cmd.Env = append(os.Environ(), "MCP_CATALOG_PATH="+t.TempDir()+"/mcp.json")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		require.NoError(t, err, stderr.String())
		return out
	}
	var listed struct{ Tools []mcpTool }
	require.NoError(t, json.Unmarshal(inspect("--method", "tools/list", "--strict"), &listed))
	var names []string
	for _, tool := range listed.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	require.Equal(t, mcpTools, names)

	s.createProject(t, s.AdminToken, "inspected")
	var called mcpResult
	require.NoError(t, json.Unmarshal(inspect("--method", "tools/call", "--tool-name", "list_projects", "--tool-arg", "query=inspected"), &called))
	require.False(t, called.IsError, called.text())
	require.True(t, strings.Contains(called.text(), `"slug":"inspected"`), called.text())
}
