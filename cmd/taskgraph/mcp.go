package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"runtime/debug"
	"strconv"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/taskgraph/taskgraph/internal/client"
	"github.com/taskgraph/taskgraph/internal/mcp"
)

// runMCP serves Taskgraph's MCP tools over stdio for an agent that spawns
// its tools (Claude Code, Codex, Cursor, …): every tool call is GraphQL
// sent to the server at --url with --token, so the token's role decides
// what the agent may do. Its logs go to stderr; stdout is the protocol.
func runMCP(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("mcp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var url, token string
	var poll time.Duration
	fs.StringVar(&url, "url", envOr("TASKGRAPH_URL", "http://127.0.0.1:8080"), "server URL (env TASKGRAPH_URL)")
	secretFlag(fs, &token, "token", "TASKGRAPH_TOKEN", "API token the tools act with")
	fs.DurationVar(&poll, "ask-poll-interval", 2*time.Second, "how often ask_human reads its question while it waits")
	var keep time.Duration
	fs.DurationVar(&keep, "keep-leases", 5*time.Second, "heartbeat the agent's claimed tasks at this interval between its calls (0: the agent heartbeats itself)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, `Usage: taskgraph mcp [--url URL] [--token TOKEN]
Serves Taskgraph's tools to an AI agent over MCP (stdio): add it to the agent's
MCP configuration as the command "taskgraph mcp". The server's POST /mcp serves
the same tools over Streamable HTTP.`)
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return errUsage
	}
	if token == "" {
		return errors.New("no token: give --token or set TASKGRAPH_TOKEN (taskgraph token create)")
	}
	if poll <= 0 {
		return errors.New("--ask-poll-interval must be positive")
	}
	if keep < 0 {
		return errors.New("--keep-leases must not be negative")
	}
	c := client.New(url, token)
	// No overall timeout: a tool call's context bounds its operations.
	c.HTTP = &http.Client{}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	host, _ := os.Hostname()
	dir, _ := os.Getwd()
	srv := mcp.NewServer(mcp.Remote{Client: c}, mcp.Options{Version: version(), Logger: log, PollInterval: poll,
		KeepLeases: keep, LeaseContext: ctx,
		// The agent is the process that spawned this one.
		Hostname: host, WorkingDirectory: dir, ProcessID: strconv.Itoa(os.Getppid())})
	err := srv.Run(ctx, &sdk.StdioTransport{})
	if err != nil && (errors.Is(err, context.Canceled) || errors.Is(err, io.EOF)) {
		return nil
	}
	return err
}

// version is the binary's module version ("(devel)" in a source build).
func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "dev"
}
