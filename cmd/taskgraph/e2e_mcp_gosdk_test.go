package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os/exec"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// TestMCPGoSDKClient: the Go SDK's client, over stdio (spawning `taskgraph
// mcp`) and POST /mcp, takes a task claim → heartbeat → log → test →
// complete, and gets LEASE_LOST as a tool error afterwards — on both
// databases.
func TestMCPGoSDKClient(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("the MCP client tests: left out by -short")
	}
	eachDB(t, func(t *testing.T, s *testServer) {
		for _, transport := range []string{"stdio", "http"} {
			t.Run(transport, func(t *testing.T) {
				slug := "gosdk" + transport
				project := s.createProject(t, s.AdminToken, slug)
				list := s.createList(t, s.AdminToken, project, "go")
				s.createTask(t, s.AdminToken, project, "Port the client", M{"taskListId": list, "apiTests": []string{"POST /mcp lists tools"}})
				run := s.query(t, s.AdminToken, `mutation($l: ID!) { startExecutionRun(input: {taskListId: $l}) { run { id } } }`, M{"l": list}).
					S("startExecutionRun.run.id")
				_, token := s.userWithToken(t, slug+"-agent", "AGENT", project)

				var tr sdk.Transport
				if transport == "stdio" {
					cmd := exec.Command(selfBinary(t), "mcp")
					cmd.Env = []string{envExecMain + "=1", "TASKGRAPH_URL=" + s.URL, "TASKGRAPH_TOKEN=" + token}
					tr = &sdk.CommandTransport{Command: cmd}
				} else {
					tr = &sdk.StreamableClientTransport{Endpoint: s.URL + "/mcp", DisableStandaloneSSE: true,
						HTTPClient: &http.Client{Transport: bearer{token: token, next: http.DefaultTransport}}}
				}
				ctx := context.Background()
				cs, err := sdk.NewClient(&sdk.Implementation{Name: "go-e2e", Version: "1"}, nil).Connect(ctx, tr, nil)
				require.NoError(t, err)
				defer cs.Close()
				require.Contains(t, cs.InitializeResult().Instructions, "claim_task")

				call := func(name string, args M) (map[string]any, *sdk.CallToolResult) {
					t.Helper()
					r, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
					require.NoError(t, err)
					out := map[string]any{}
					if r.StructuredContent != nil {
						b, err := json.Marshal(r.StructuredContent)
						require.NoError(t, err)
						require.NoError(t, json.Unmarshal(b, &out))
					}
					return out, r
				}
				claim, r := call("claim_task", M{"run": run})
				require.False(t, r.IsError)
				agent := claim["agentId"].(string)
				for _, step := range []struct {
					name string
					args M
				}{
					{"heartbeat", M{"agentId": agent, "progressPercent": 50}},
					{"append_log", M{"agentId": agent, "lines": []string{"ported"}}},
					{"record_test_result", M{"agentId": agent, "level": "API", "testIndex": 0, "status": "PASSED"}},
				} {
					_, r := call(step.name, step.args)
					require.False(t, r.IsError, "%s: %v", step.name, r.Content)
				}
				done, r := call("complete_task", M{"agentId": agent})
				require.False(t, r.IsError)
				require.Equal(t, "COMPLETED", done["task"].(map[string]any)["status"])
				_, r = call("append_log", M{"agentId": agent, "lines": []string{"late"}})
				require.True(t, r.IsError)
				require.True(t, strings.HasPrefix(r.Content[0].(*sdk.TextContent).Text, "LEASE_LOST: "))
			})
		}
	})
}
