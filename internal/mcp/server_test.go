package mcp

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/client"
)

// fakeExec answers every operation with a fixed result and records what it
// was asked.
type fakeExec struct {
	data string
	err  error
	docs []string
	vars []map[string]any
	auth []string
}

func (f *fakeExec) Execute(ctx context.Context, doc string, vars map[string]any, out any) error {
	f.docs = append(f.docs, doc)
	f.vars = append(f.vars, vars)
	f.auth = append(f.auth, authorizationFrom(ctx))
	if f.data != "" && out != nil {
		if err := json.Unmarshal([]byte(f.data), out); err != nil {
			return err
		}
	}
	return f.err
}

func connect(t *testing.T, exec Executor) *sdk.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := sdk.NewInMemoryTransports()
	ss, err := NewServer(exec, Options{}).Connect(ctx, st, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ss.Close() })
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// TestToolsListed: the contract's tools, each with a description and an
// object input schema, and the loop in the server's instructions.
func TestToolsListed(t *testing.T) {
	cs := connect(t, &fakeExec{})
	res, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		require.NotEmpty(t, tool.Description, tool.Name)
		schema, _ := json.Marshal(tool.InputSchema)
		require.Contains(t, string(schema), `"type":"object"`, tool.Name)
	}
	slices.Sort(names)
	require.Equal(t, []string{"append_log", "ask_human", "claim_task", "complete_task", "create_task", "fail_task", "get_run",
		"get_session_state", "get_task", "heartbeat", "link_tasks", "list_projects", "list_tasks", "plan_waves", "record_lesson",
		"record_test_result", "save_session_state", "search_lessons", "start_run", "update_task"}, names)
	instr := cs.InitializeResult().Instructions
	for _, step := range []string{"claim_task", "heartbeat", "append_log", "complete_task", "fail_task", "LEASE_LOST"} {
		require.Contains(t, instr, step)
	}
}

// TestCreateTaskSchema: embedded fields are arguments, enums and bounds are
// in the schema, and the SDK refuses arguments beyond them.
func TestCreateTaskSchema(t *testing.T) {
	exec := &fakeExec{}
	cs := connect(t, exec)
	res, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	var schema map[string]any
	for _, tool := range res.Tools {
		if tool.Name == "create_task" {
			b, _ := json.Marshal(tool.InputSchema)
			require.NoError(t, json.Unmarshal(b, &schema))
		}
	}
	props := schema["properties"].(map[string]any)
	for _, p := range []string{"project", "title", "description", "fileImpacts", "taskList", "codebaseTests"} {
		require.Contains(t, props, p)
	}
	require.ElementsMatch(t, []any{"project", "title"}, schema["required"])
	require.Equal(t, float64(500), props["title"].(map[string]any)["maxLength"])

	r, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "create_task",
		Arguments: map[string]any{"project": "p", "title": strings.Repeat("x", 501)}})
	require.NoError(t, err)
	require.True(t, r.IsError)
	require.Empty(t, exec.docs, "refused before any operation")
}

// TestErrorResult: an API error comes back as an isError result whose text
// starts with the code, with what to do next.
func TestErrorResult(t *testing.T) {
	exec := &fakeExec{err: client.Errors{{Message: "agent no longer holds its task", Extensions: map[string]any{"code": "LEASE_LOST"}}}}
	cs := connect(t, exec)
	r, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "heartbeat", Arguments: map[string]any{"agentId": "a1"}})
	require.NoError(t, err)
	require.True(t, r.IsError)
	text := r.Content[0].(*sdk.TextContent).Text
	require.True(t, strings.HasPrefix(text, "LEASE_LOST: agent no longer holds its task"), text)
	require.Contains(t, text, "STOP working on it")
	require.Equal(t, "a1", exec.vars[0]["in"].(map[string]any)["agentId"])
}

// TestDisplayIDResolved: a display id is resolved through the API first.
func TestDisplayIDResolved(t *testing.T) {
	exec := &fakeExec{data: `{"task": {"id": "VGFzazox"}, "addTaskRelationship": {"relationship": {"id": "r"}}}`}
	cs := connect(t, exec)
	r, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "link_tasks",
		Arguments: map[string]any{"source": "tu-web-fea-001", "target": "VGFzazoy", "type": "DEPENDS_ON"}})
	require.NoError(t, err)
	require.False(t, r.IsError, "%v", r.Content)
	require.Len(t, exec.docs, 2)
	require.Equal(t, "TU-WEB-FEA-001", exec.vars[0]["d"])
	in := exec.vars[1]["in"].(map[string]any)
	require.Equal(t, "VGFzazox", in["sourceTaskId"])
	require.Equal(t, "VGFzazoy", in["targetTaskId"])
	require.JSONEq(t, `{"relationship": {"id": "r"}}`, string(mustJSON(t, r.StructuredContent)))
}

func mustJSON(t *testing.T, v any) []byte {
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}
