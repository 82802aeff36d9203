package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// mcpClientDir holds the Node script that drives the official TypeScript MCP
// SDK client and the MCP Inspector; .ci/run installs them with npm ci.
const mcpClientDir = "../../test/mcp-client"

// mcpNode returns the path of node, skipping the test when node or the
// client's packages are missing — except under CI=true, where that fails.
func mcpNode(t *testing.T, pkg string) string {
	t.Helper()
	return nodeWith(t, "the MCP client tests", mcpClientDir, pkg)
}

// selfBinary is this test binary, which runs as the taskgraph command when
// envExecMain is set (main_test.go): the stdio transport spawns it as
// `taskgraph mcp`.
func selfBinary(t *testing.T) string {
	t.Helper()
	bin, err := filepath.Abs(os.Args[0])
	require.NoError(t, err)
	return bin
}

// mcpLine is one line the driver prints.
type mcpLine struct {
	ID           int            `json:"id"`
	Connected    bool           `json:"connected"`
	ConnectError string         `json:"connectError"`
	Instructions string         `json:"instructions"`
	Tools        []mcpTool      `json:"tools"`
	Result       *mcpResult     `json:"result"`
	Progress     map[string]any `json:"progress"`
	Error        string         `json:"error"`
}

type mcpTool struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	InputSchema map[string]any `json:"inputSchema"`
}

// mcpResult is a tools/call result as the TypeScript client returned it.
type mcpResult struct {
	IsError bool `json:"isError"`
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent map[string]any `json:"structuredContent"`
}

// text is the result's first text content.
func (r *mcpResult) text() string {
	for _, c := range r.Content {
		if c.Type == "text" {
			return c.Text
		}
	}
	return ""
}

// mcpDriver is one TypeScript SDK client connected to Taskgraph.
type mcpDriver struct {
	t     *testing.T
	stdin io.WriteCloser
	wmu   sync.Mutex

	mu     sync.Mutex
	calls  map[int]chan mcpLine
	nextID int
	hello  mcpLine
}

// startMCPDriver connects a TypeScript SDK client to s with token over
// transport "stdio" (spawning `taskgraph mcp` with flags, default
// --ask-poll-interval 200ms) or "http" (POST /mcp).
func startMCPDriver(t *testing.T, node string, s *testServer, transport, token string, flags ...string) *mcpDriver {
	t.Helper()
	if flags == nil {
		flags = []string{"--ask-poll-interval", "200ms"}
	}
	binArgs, err := json.Marshal(append([]string{"mcp"}, flags...))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 3*waitLimit)
	cmd := exec.CommandContext(ctx, node, "drive.mjs")
	cmd.Dir = mcpClientDir
	cmd.Env = append(os.Environ(), "MCP_TRANSPORT="+transport, "TASKGRAPH_URL="+s.URL, "TASKGRAPH_TOKEN="+token,
		"TASKGRAPH_BIN="+selfBinary(t), "TASKGRAPH_BIN_ARGS="+string(binArgs),
		"TASKGRAPH_BIN_ENV="+strings.Join([]string{envExecMain + "=1", "TASKGRAPH_URL=" + s.URL, "TASKGRAPH_TOKEN=" + token}, "\n"))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	d := &mcpDriver{t: t, stdin: stdin, calls: map[int]chan mcpLine{0: make(chan mcpLine, 1)}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			var l mcpLine
			if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
				l = mcpLine{Error: "undecodable line: " + sc.Text()}
			}
			d.mu.Lock()
			ch := d.calls[l.ID]
			d.mu.Unlock()
			if ch != nil {
				ch <- l
			}
		}
	}()
	t.Cleanup(func() {
		_ = stdin.Close()
		werr := cmd.Wait()
		<-done
		cancel()
		if werr != nil {
			t.Logf("MCP client: %v: %s", werr, stderr.String())
		}
	})
	select {
	case d.hello = <-d.calls[0]:
	case <-time.After(waitLimit):
		t.Fatalf("the MCP client did not connect: %s", stderr.String())
	}
	return d
}

// send writes one command and returns the channel of its lines.
func (d *mcpDriver) send(cmd map[string]any) chan mcpLine {
	d.mu.Lock()
	d.nextID++
	id := d.nextID
	ch := make(chan mcpLine, 256)
	d.calls[id] = ch
	d.mu.Unlock()
	cmd["id"] = id
	b, err := json.Marshal(cmd)
	require.NoError(d.t, err)
	d.wmu.Lock()
	defer d.wmu.Unlock()
	_, err = d.stdin.Write(append(b, '\n'))
	require.NoError(d.t, err)
	return ch
}

// next returns the command's next line.
func (d *mcpDriver) next(ch chan mcpLine) mcpLine {
	d.t.Helper()
	select {
	case l := <-ch:
		require.Empty(d.t, l.Error, "MCP client error")
		return l
	case <-time.After(waitLimit):
		d.t.Fatal("no answer from the MCP client")
		return mcpLine{}
	}
}

// listTools lists the server's tools.
func (d *mcpDriver) listTools() []mcpTool {
	d.t.Helper()
	return d.next(d.send(map[string]any{"op": "list"})).Tools
}

// mcpCall is a tools/call in flight.
type mcpCall struct {
	d        *mcpDriver
	ch       chan mcpLine
	progress []map[string]any
}

// start calls a tool without waiting for its result.
func (d *mcpDriver) start(name string, args M) *mcpCall {
	return &mcpCall{d: d, ch: d.send(map[string]any{"op": "call", "name": name, "args": args})}
}

// nextProgress waits for the call's next progress notification.
func (c *mcpCall) nextProgress() map[string]any {
	c.d.t.Helper()
	l := c.d.next(c.ch)
	require.NotNil(c.d.t, l.Progress, "expected a progress notification, got %+v", l)
	c.progress = append(c.progress, l.Progress)
	return l.Progress
}

// result waits for the call's result, collecting progress on the way.
func (c *mcpCall) result() *mcpResult {
	c.d.t.Helper()
	for {
		l := c.d.next(c.ch)
		if l.Progress != nil {
			c.progress = append(c.progress, l.Progress)
			continue
		}
		require.NotNil(c.d.t, l.Result, "%+v", l)
		return l.Result
	}
}

// call calls a tool and returns its result.
func (d *mcpDriver) call(name string, args M) *mcpResult {
	d.t.Helper()
	return d.start(name, args).result()
}

// ok calls a tool that must succeed and returns its structured content.
func (d *mcpDriver) ok(name string, args M) jv {
	d.t.Helper()
	r := d.call(name, args)
	require.False(d.t, r.IsError, "%s: %s", name, r.text())
	// The text content is the same JSON as the structured content.
	var fromText map[string]any
	require.NoError(d.t, json.Unmarshal([]byte(r.text()), &fromText), r.text())
	require.Equal(d.t, fromText, r.StructuredContent)
	return jv{t: d.t, v: r.StructuredContent}
}

// fails calls a tool that must fail with code and returns its text.
func (d *mcpDriver) fails(name string, args M, code string) string {
	d.t.Helper()
	r := d.call(name, args)
	require.True(d.t, r.IsError, "%s should fail with %s: %s", name, code, r.text())
	require.True(d.t, strings.HasPrefix(r.text(), code+": "), "%s: want %s, got %s", name, code, r.text())
	return r.text()
}
