// Command taskgraph is the Taskgraph server and its operator tools:
//
//	taskgraph serve            run the GraphQL server
//	taskgraph migrate up       apply database migrations
//	taskgraph migrate status   list migrations and whether they are applied
//	taskgraph token create     create an API token (--role, --user, --project)
//	taskgraph watch            print a project's events as they happen
//	taskgraph agent            the reference build agent: claim and execute a run's tasks
//	taskgraph demo             create and start a demo run to watch and work
//	taskgraph ask              ask a question for the agent running a command, print the answer
//	taskgraph mcp              serve the MCP tools to an AI agent over stdio
//	taskgraph schema           print the GraphQL schema (SDL)
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, errHelp) {
			return
		}
		var ec *exitCode
		if errors.As(err, &ec) {
			fmt.Fprintln(os.Stderr, "taskgraph:", err)
			os.Exit(ec.code)
		}
		if !errors.Is(err, errUsage) {
			fmt.Fprintln(os.Stderr, "taskgraph:", err)
		}
		os.Exit(1)
	}
}

var errUsage = errors.New("usage")

// errHelp is returned after -h/--help printed a command's usage: not a failure.
var errHelp = errors.New("help")

// parseFlags parses a command's flags; -h and --help print its usage and end
// the command successfully, any other mistake is a usage error.
func parseFlags(fs *flag.FlagSet, args []string) error {
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return errHelp
	case err != nil:
		return errUsage
	}
	return nil
}

const usage = `taskgraph — coordination server for AI agent work

Usage:
  taskgraph serve [flags]              run the server (see taskgraph serve -h)
  taskgraph migrate up|status [flags]  apply or list database migrations
  taskgraph token create [flags]       create an API token and print it once
  taskgraph watch --project SLUG       print a project's events live (see taskgraph watch -h)
  taskgraph agent --run ID --exec CMD  execute a run's tasks as build agents (see taskgraph agent -h)
  taskgraph worker --function NAME --exec CMD  run queue items (see taskgraph worker -h)
  taskgraph demo                       create and start a demo run (see taskgraph demo -h)
  taskgraph ask "TEXT" [--option V]…   ask people a question for the agent of a --exec command; print the answer
  taskgraph mcp [--url U --token T]    serve Taskgraph's tools to an AI agent over MCP (stdio)
  taskgraph schema                     print the GraphQL schema

OpenTelemetry traces (serve, agent, worker): set OTEL_EXPORTER_OTLP_ENDPOINT
(OTLP/HTTP, protobuf) and optionally OTEL_SERVICE_NAME; see docs/tracing.md.
`

// run dispatches a subcommand; it is main without the process around it, so
// tests can run the real thing.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errUsage
	}
	switch args[0] {
	case "serve":
		return runServe(ctx, args[1:], stdout, stderr, nil)
	case "migrate":
		return runMigrate(ctx, args[1:], stdout, stderr)
	case "token":
		return runToken(ctx, args[1:], stdout, stderr)
	case "watch":
		return runWatch(ctx, args[1:], stdout, stderr)
	case "agent":
		return runAgent(ctx, args[1:], stdout, stderr)
	case "worker":
		return runWorker(ctx, args[1:], stdout, stderr)
	case "demo":
		return runDemo(ctx, args[1:], stdout, stderr)
	case "ask":
		return runAsk(ctx, args[1:], stdout, stderr)
	case "mcp":
		return runMCP(ctx, args[1:], stderr)
	case "schema":
		return runSchema(stdout)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	default:
		fmt.Fprintf(stderr, "unknown command %q\n\n%s", args[0], usage)
		return errUsage
	}
}

// selfCommand is how to run this program again from the same shell, for the
// commands it prints: "go run ./cmd/taskgraph" under go run, "taskgraph" when
// that name on PATH is this binary, else the path it was started by.
func selfCommand() string {
	exe := os.Args[0]
	if strings.Contains(exe, string(filepath.Separator)+"go-build") {
		return "go run ./cmd/taskgraph"
	}
	self, err := os.Executable()
	if err != nil {
		return exe
	}
	if onPath, err := exec.LookPath("taskgraph"); err == nil {
		a, errA := filepath.EvalSymlinks(onPath)
		b, errB := filepath.EvalSymlinks(self)
		if errA == nil && errB == nil && a == b {
			return "taskgraph"
		}
	}
	return exe
}
