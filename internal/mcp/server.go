// Package mcp serves Taskgraph as Model Context Protocol tools for AI
// agents, on the official Go SDK: one implementation of the tools for both
// transports — `taskgraph mcp` (stdio, the operations sent over HTTP with
// one token) and POST /mcp on the server (Streamable HTTP, the operations
// run in process for the caller's bearer token). Every tool is GraphQL
// operation documents run through an Executor, so a tool does exactly what
// the same operation would for that token: the same roles, limits, codes and
// events.
package mcp

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Options configures NewServer and Handler; the zero value is usable.
type Options struct {
	// Version is the server's version in the initialize result.
	Version string
	// Logger receives the SDK's warnings and errors (nil: none).
	Logger *slog.Logger
	// PollInterval is how often ask_human reads its question while it waits
	// (default 2s).
	PollInterval time.Duration
	// HeartbeatEvery is how often ask_human heartbeats the asking build
	// agent while it waits, so that its lease does not lapse (default 10s).
	HeartbeatEvery time.Duration
	// KeepLeases, when positive, makes the server heartbeat every agent its
	// client claimed at this interval until the agent completes or fails its
	// task (or loses it), so that a model that works for minutes between
	// tool calls keeps its lease. Only for a server that lives as long as its
	// agent (stdio); LeaseContext bounds the heartbeats.
	KeepLeases   time.Duration
	LeaseContext context.Context
	// Hostname, WorkingDirectory and ProcessID are what claim_task reports
	// of the agent when its client does not say (stdio: the agent's machine,
	// directory and process).
	Hostname, WorkingDirectory, ProcessID string
}

func (o Options) withDefaults() Options {
	if o.Version == "" {
		o.Version = "dev"
	}
	if o.PollInterval <= 0 {
		o.PollInterval = 2 * time.Second
	}
	if o.HeartbeatEvery <= 0 {
		o.HeartbeatEvery = 10 * time.Second
	}
	return o
}

// maxRequestBytes bounds one MCP message on POST /mcp (a tool's largest
// argument, a 1 MiB log batch or session state, fits with its framing).
const maxRequestBytes = 4 << 20

// tools holds what every tool shares.
type tools struct {
	exec     Executor
	opts     Options
	leases   *leaseKeeper     // nil unless Options.KeepLeases
	requests *requestContexts // nil but over HTTP
}

// NewServer returns an MCP server whose tools run their operations with exec.
func NewServer(exec Executor, opts Options) *sdk.Server {
	return newServer(exec, opts, nil)
}

func newServer(exec Executor, opts Options, requests *requestContexts) *sdk.Server {
	opts = opts.withDefaults()
	instructions := Instructions
	if opts.KeepLeases > 0 {
		instructions += "\n\nThis server keeps your lease between your calls while you hold a task, so heartbeat when you have progress to report; the directive still tells you to pause or stop."
	}
	s := sdk.NewServer(&sdk.Implementation{Name: "taskgraph", Title: "Taskgraph", Version: opts.Version}, &sdk.ServerOptions{
		Instructions: instructions,
		Logger:       sdkLogger(opts.Logger),
		Capabilities: &sdk.ServerCapabilities{Tools: &sdk.ToolCapabilities{}},
	})
	t := &tools{exec: exec, opts: opts, requests: requests}
	if opts.KeepLeases > 0 {
		ctx := opts.LeaseContext
		if ctx == nil {
			ctx = context.Background()
		}
		t.leases = newLeaseKeeper(ctx, opts.KeepLeases, exec)
	}
	t.addReadTools(s)
	t.addWriteTools(s)
	t.addRunTools(s)
	t.addAgentTools(s)
	t.addAskHuman(s)
	t.addMemoryTools(s)
	return s
}

// Handler serves the tools over the Streamable HTTP transport, stateless:
// every POST is a whole exchange (its progress notifications stream back on
// its own response), so any replica can answer any request and no session
// outlives its request. Each tool call runs for the Authorization header of
// the POST that carries it (the caller authenticates it beforehand) and ends
// when that POST does (requests.go).
func Handler(exec Executor, opts Options) http.Handler {
	requests := newRequestContexts()
	srv := newServer(exec, opts, requests)
	return requests.wrap(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, &sdk.StreamableHTTPOptions{
		Stateless:           true,
		Logger:              sdkLogger(opts.Logger),
		MaxRequestBodyBytes: maxRequestBytes,
	}))
}

// call is one tool call.
type call struct {
	t   *tools
	req *sdk.CallToolRequest
}

// do runs one operation for the caller.
func (c *call) do(ctx context.Context, document string, vars map[string]any, out any) error {
	return c.t.exec.Execute(ctx, document, vars, out)
}

// add registers a tool: its input schema is In's, shaped by the shapers
// (enums, bounds, descriptions); its result is what run returns, as JSON
// text and structuredContent, or an isError result carrying the code.
func add[In any](s *sdk.Server, t *tools, tool *sdk.Tool, run func(ctx context.Context, c *call, in In) (any, error), shapers ...shaper) {
	schema, err := jsonschema.For[In](nil)
	if err != nil {
		panic("mcp: input schema of " + tool.Name + ": " + err.Error())
	}
	singleTypes(schema)
	for _, sh := range shapers {
		sh(schema)
	}
	tool.InputSchema = schema
	sdk.AddTool(s, tool, func(ctx context.Context, req *sdk.CallToolRequest, in In) (*sdk.CallToolResult, any, error) {
		if req.Extra != nil && req.Extra.Header != nil {
			if a := req.Extra.Header.Get("Authorization"); a != "" {
				ctx = WithAuthorization(ctx, a)
			}
			var done context.CancelFunc
			ctx, done = t.requests.bind(ctx, req.Extra.Header)
			defer done()
		}
		out, err := run(ctx, &call{t: t, req: req}, in)
		if err != nil {
			res, detail := errorResult(err)
			return res, detail, nil
		}
		return nil, out, nil
	})
}

// readOnly and idempotent annotate tools for clients that ask before writes.
func readOnly() *sdk.ToolAnnotations {
	return &sdk.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)}
}

func writes(idempotent bool) *sdk.ToolAnnotations {
	return &sdk.ToolAnnotations{DestructiveHint: ptr(false), IdempotentHint: idempotent, OpenWorldHint: ptr(false)}
}

func ptr[T any](v T) *T { return &v }

// sdkLogger is l for the SDK's warnings and errors only: it logs every
// request's temporary session at Info level in stateless mode.
func sdkLogger(l *slog.Logger) *slog.Logger {
	if l == nil {
		return nil
	}
	return slog.New(minLevel{Handler: l.Handler(), min: slog.LevelWarn})
}

// minLevel drops records below min.
type minLevel struct {
	slog.Handler
	min slog.Level
}

func (h minLevel) Enabled(ctx context.Context, level slog.Level) bool {
	return level >= h.min && h.Handler.Enabled(ctx, level)
}

func (h minLevel) WithAttrs(attrs []slog.Attr) slog.Handler {
	return minLevel{Handler: h.Handler.WithAttrs(attrs), min: h.min}
}

func (h minLevel) WithGroup(name string) slog.Handler {
	return minLevel{Handler: h.Handler.WithGroup(name), min: h.min}
}
