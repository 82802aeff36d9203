package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"

	"github.com/taskgraph/taskgraph/internal/client"
)

const agentClaim = `mutation($in: ClaimTaskInput!) { claimTask(input: $in) {
  agent { id } execution { attemptNumber } waitReason task ` + agentTaskFields + ` } }`

// agentTaskFields is what an agent reads of the task it claims (agentTask),
// from its claim or from its run's agents (agentLostClaims).
const agentTaskFields = `{ id displayId title description acceptanceCriteria codebaseTests apiTests uiTests affectedFiles project { id } }`

type agentConfig struct {
	url, token, run, command string
	parallel                 int
	simulate                 bool
	heartbeat, poll          time.Duration
	work                     time.Duration // --simulate: a task's mean duration
	// patience bounds how long a call is retried while the server or its
	// database cannot be reached (restarting, network): the run's state is all in the database,
	// so an agent outliving a server restart carries on.
	patience time.Duration
}

// agentTask is what a claimed task tells the command (in TASKGRAPH_TASK_FILE).
type agentTask struct {
	ID                 string   `json:"id"`
	DisplayID          string   `json:"displayId"`
	Title              string   `json:"title"`
	Description        string   `json:"description"`
	AcceptanceCriteria []string `json:"acceptanceCriteria"`
	CodebaseTests      []string `json:"codebaseTests"`
	APITests           []string `json:"apiTests"`
	UITests            []string `json:"uiTests"`
	AffectedFiles      []string `json:"affectedFiles"`
	Project            *struct {
		ID string `json:"id"`
	} `json:"project,omitempty"`
}

// agentUsage is agent -h's text before the flags: what the command sees, the
// lines it may print, and the exit statuses on both sides.
const agentUsage = `Usage: taskgraph agent --run ID (--exec CMD | --simulate) [--parallel N] [--url URL] [--token TOKEN]

Claims the run's tasks one at a time per agent, runs CMD for each in a shell
(in its own process group), heartbeats, streams the output to the task's
execution log and reports the outcome, until the run is finished.

CMD's environment:
  TASKGRAPH_TASK_ID, TASKGRAPH_TASK_DISPLAY_ID, TASKGRAPH_TASK_TITLE
  TASKGRAPH_AGENT_ID     the build agent, for calls CMD makes itself
  TASKGRAPH_SESSION_ID   the task's agent session
  TASKGRAPH_TASK_FILE    a JSON file with the task's details

Lines CMD may print (they also go to the log):
  ::progress 40 compiling         progressPercent 40, currentStep "compiling"
  ::step {"thought": "…", "action": "…", "actionType": "TOOL_CALL", "observation": "…", "success": true}
                                  a ReAct step of the session
  ::lesson {"context": "…", "whatWorked": "…", "lesson": "…", "toolName": "…", "confidence": 0.8}
                                  a lesson of the session

CMD's exit status: 0 completes the task (files from git status --porcelain);
any other fails it (retryable). On PAUSE the command is stopped (SIGSTOP) and
resumed on CONTINUE; on CANCEL or a lost lease it is killed and nothing is
reported. Asking people from CMD: taskgraph ask "TEXT" (see taskgraph ask -h).

taskgraph agent exits 0 when the run is finished, 1 on an error it could not
retry past (--patience) or a usage mistake; -h exits 0.

Flags:
`

// runAgent is the reference build agent: it claims tasks of a run, executes
// each (a command, or a short random delay with --simulate), heartbeats,
// streams output as execution logs and reports the outcome, until the run ends.
func runAgent(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("agent", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg agentConfig
	fs.StringVar(&cfg.run, "run", "", "id of the execution run to work on (required)")
	fs.StringVar(&cfg.command, "exec", "", "shell command that executes one task (its details in TASKGRAPH_TASK_* and the JSON file TASKGRAPH_TASK_FILE)")
	fs.IntVar(&cfg.parallel, "parallel", 1, "number of agents to run")
	fs.BoolVar(&cfg.simulate, "simulate", false, "complete tasks after a random delay instead of running a command")
	fs.DurationVar(&cfg.work, "work", 200*time.Millisecond, "--simulate: mean time a task takes (each takes 0.25–1.75 times it)")
	fs.DurationVar(&cfg.heartbeat, "heartbeat", 2*time.Second, "heartbeat period (keep it under the server's --heartbeat-interval)")
	fs.DurationVar(&cfg.poll, "poll", 500*time.Millisecond, "pause before claiming again when no task is ready")
	fs.DurationVar(&cfg.patience, "patience", 2*time.Minute, "how long to keep retrying while the server or its database cannot be reached")
	fs.StringVar(&cfg.url, "url", envOr("TASKGRAPH_URL", "http://127.0.0.1:8080"), "server URL (env TASKGRAPH_URL)")
	secretFlag(fs, &cfg.token, "token", "TASKGRAPH_TOKEN", "AGENT API token")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), agentUsage)
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if cfg.run == "" || (cfg.command == "") == !cfg.simulate || cfg.parallel < 1 || cfg.work <= 0 || fs.NArg() > 0 {
		fs.Usage()
		return errUsage
	}
	tr, err := newClientTracer(ctx, "taskgraph-agent")
	if err != nil {
		return err
	}
	defer tr.stop(ctx)
	c := &agentClient{c: client.New(cfg.url, cfg.token), patience: cfg.patience, tracer: tr}
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	for i := range cfg.parallel {
		wg.Go(func() {
			if err := agentLoop(ctx, c, cfg, i+1, stdout); err != nil {
				mu.Lock()
				if firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return firstErr
}

// agentClient retries calls that did not reach the server.
type agentClient struct {
	c        *client.Client
	patience time.Duration
	tracer   *clientTracer // a root span per claim, over the task it claimed
}

// do runs a GraphQL operation; a transport failure (no answer, or an answer
// that is not GraphQL, e.g. a proxy's 502) and UNAVAILABLE (the server's
// database is restarting) are retried with backoff for up to patience. Other
// GraphQL errors return at once.
func (a *agentClient) do(ctx context.Context, query string, vars map[string]any, out any) error {
	return a.retry(ctx, func() error { return a.c.Do(ctx, query, vars, out) })
}

// retry calls call until it succeeds or fails for good (as do retries).
func (a *agentClient) retry(ctx context.Context, call func() error) error {
	deadline := time.Now().Add(a.patience)
	wait := 100 * time.Millisecond
	for {
		err := call()
		var gqlErrs client.Errors
		if errors.As(err, &gqlErrs) && gqlErrs.Code() == "UNAVAILABLE" {
			gqlErrs = nil // retried as a transport failure
		}
		if err == nil || gqlErrs != nil || ctx.Err() != nil || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		// At least once a second: once the server is back, the agent's
		// heartbeat must reach it before its lease runs out (a 5 s cap let a
		// 3.5 s outage cost a lease of 3 s).
		wait = min(2*wait, time.Second)
	}
}

// agentLoop claims and executes tasks until the run is finished.
func agentLoop(ctx context.Context, c *agentClient, cfg agentConfig, n int, stdout io.Writer) error {
	host, _ := os.Hostname()
	wd, _ := os.Getwd()
	in := claimInput{RunID: cfg.run, Hostname: host, ProcessID: strconv.Itoa(os.Getpid()) + "/" + strconv.Itoa(n), WorkingDirectory: wd}
	for {
		var d claimAnswer
		// One trace per claim: when it claims a task, the task's heartbeats,
		// logs and report join it.
		tctx, span := c.tracer.start(ctx, "agent claim", attribute.String("taskgraph.run.id", cfg.run))
		err := c.claim(tctx, in, &d)
		if err != nil {
			span.SetStatus(codes.Error, "claim failed")
			span.End()
			return fmt.Errorf("claim: %w", err)
		}
		cl := d.ClaimTask
		if cl.Task == nil {
			if cl.WaitReason != nil {
				span.SetAttributes(attribute.String("taskgraph.wait_reason", *cl.WaitReason))
			}
			span.End()
			if cl.WaitReason != nil && *cl.WaitReason == "RUN_FINISHED" {
				return nil
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(cfg.poll):
			}
			continue
		}
		fmt.Fprintf(stdout, "agent %d: %s %s (attempt %d)\n", n, cl.Task.DisplayID, cl.Task.Title, cl.Execution.AttemptNumber)
		span.SetName("agent task " + cl.Task.DisplayID)
		span.SetAttributes(attribute.String("taskgraph.task.id", cl.Task.ID), attribute.String("taskgraph.agent.id", cl.Agent.ID),
			attribute.Int("taskgraph.attempt", cl.Execution.AttemptNumber))
		w := &agentWork{c: c, cfg: cfg, agentID: cl.Agent.ID, task: cl.Task, out: stdout}
		err = w.execute(tctx)
		if err != nil {
			span.SetStatus(codes.Error, "task failed")
		}
		span.End()
		if err != nil {
			return err
		}
	}
}
