package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strings"
	"time"

	"github.com/taskgraph/taskgraph/internal/client"
)

// exitCode is an error that ends the process with a code of its own.
type exitCode struct {
	code int
	msg  string
}

func (e *exitCode) Error() string { return e.msg }

// askUnanswered is ask's exit code when the question expired or was skipped.
const askUnanswered = 3

type askConfig struct {
	url, token, agent, text string
	typ, priority           string
	options                 []map[string]any
	defaultAnswer           string
	timeout                 time.Duration
	blocking                bool
}

// runAsk asks a question on behalf of the build agent in TASKGRAPH_AGENT_ID
// (set by `taskgraph agent` for its command), waits for the outcome on the
// project's event stream, prints the answer and returns nil; it returns an
// exitCode 3 when the question expired or was skipped.
func runAsk(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("ask", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg askConfig
	fs.Func("option", "an answer to offer, VALUE or VALUE=LABEL (repeatable)", func(s string) error {
		value, label, ok := strings.Cut(s, "=")
		if !ok {
			label = value
		}
		if strings.TrimSpace(value) == "" {
			return errors.New("an option needs a value")
		}
		cfg.options = append(cfg.options, map[string]any{"value": value, "label": label})
		return nil
	})
	fs.StringVar(&cfg.defaultAnswer, "default", "", "the answer taken when --timeout passes unanswered")
	fs.DurationVar(&cfg.timeout, "timeout", 0, "how long the question stays open, e.g. 10m (default: no expiry)")
	fs.BoolVar(&cfg.blocking, "blocking", false, "hold the agent's task back from claims while unanswered")
	fs.StringVar(&cfg.typ, "type", "DECISION", "question type: VALIDATION, APPROVAL, DUPLICATE_MERGE or DECISION")
	fs.StringVar(&cfg.priority, "priority", "MEDIUM", "priority: CRITICAL, HIGH, MEDIUM or LOW")
	fs.StringVar(&cfg.agent, "agent", os.Getenv("TASKGRAPH_AGENT_ID"), "the asking build agent's id (env TASKGRAPH_AGENT_ID)")
	fs.StringVar(&cfg.url, "url", envOr("TASKGRAPH_URL", "http://127.0.0.1:8080"), "server URL (env TASKGRAPH_URL)")
	secretFlag(fs, &cfg.token, "token", "TASKGRAPH_TOKEN", "API token")
	fs.Usage = func() {
		fmt.Fprintln(stderr, `Usage: taskgraph ask "TEXT" [--option VALUE[=LABEL]]… [--default V --timeout 10m] [--blocking]
Prints the answer and exits 0; exits 3 when the question expires or is skipped.`)
		fs.PrintDefaults()
	}
	// The question's text may stand before, between or after the flags.
	var texts []string
	for {
		if err := parseFlags(fs, args); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		texts = append(texts, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(texts) != 1 || strings.TrimSpace(texts[0]) == "" || cfg.agent == "" {
		if cfg.agent == "" {
			fmt.Fprintln(stderr, "taskgraph ask: no agent: run it from a `taskgraph agent --exec` command, or give --agent")
		}
		fs.Usage()
		return errUsage
	}
	if cfg.timeout < 0 {
		return errors.New("--timeout must be positive")
	}
	cfg.text = texts[0]
	a := &asker{cfg: cfg, c: client.New(cfg.url, cfg.token), log: stderr}
	answer, status, err := a.run(ctx)
	if err != nil {
		return err
	}
	if status != "ANSWERED" {
		return &exitCode{code: askUnanswered, msg: "the question was " + strings.ToLower(status)}
	}
	_, err = fmt.Fprintln(stdout, answer)
	return err
}

type asker struct {
	cfg askConfig
	c   *client.Client
	log io.Writer
}

// askOutcome subscribes to the outcomes of a project's questions. It is
// subscribed after the project's cursor read before asking, so the events
// replayed include an outcome committed before the subscription started.
const askOutcome = `subscription($p: ID!, $after: String) {
  projectEvents(projectId: $p, after: $after, types: [QUESTION_ANSWERED QUESTION_EXPIRED QUESTION_SKIPPED]) {
    cursor type
    ... on QuestionAnswered { question { id status answer } }
    ... on QuestionExpired { question { id status answer } }
    ... on QuestionSkipped { question { id status answer } }
  }
}`

type askedQuestion struct {
	ID     string
	Status string
	Answer *string
}

// run asks, then waits for the question's outcome, reconnecting (from the
// last cursor) when the stream breaks.
func (a *asker) run(ctx context.Context) (answer, status string, err error) {
	var before struct {
		Node *struct {
			Run struct {
				Project struct{ ID, EventCursor string }
			}
		}
	}
	if err := a.c.Do(ctx, `query($a: ID!) { node(id: $a) { ... on BuildAgent { run { project { id eventCursor } } } } }`,
		map[string]any{"a": a.cfg.agent}, &before); err != nil {
		return "", "", err
	}
	if before.Node == nil {
		return "", "", fmt.Errorf("agent %s not found", a.cfg.agent)
	}
	projectID, cursor := before.Node.Run.Project.ID, before.Node.Run.Project.EventCursor
	in := map[string]any{"agentId": a.cfg.agent, "questionType": a.cfg.typ, "priority": a.cfg.priority,
		"questionText": a.cfg.text, "blocking": a.cfg.blocking}
	if len(a.cfg.options) > 0 {
		in["options"] = a.cfg.options
	}
	if a.cfg.defaultAnswer != "" {
		in["defaultAnswer"] = a.cfg.defaultAnswer
	}
	if a.cfg.timeout > 0 {
		in["expiresAt"] = time.Now().Add(a.cfg.timeout).UTC().Format(time.RFC3339Nano)
		if a.cfg.defaultAnswer != "" {
			in["timeoutAction"] = "USE_DEFAULT"
		}
	}
	var asked struct {
		AskQuestion struct{ Question askedQuestion }
	}
	if err := a.c.Do(ctx, `mutation($in: AskQuestionInput!) { askQuestion(input: $in) { question { id status answer } } }`,
		map[string]any{"in": in}, &asked); err != nil {
		return "", "", err
	}
	q := asked.AskQuestion.Question
	fmt.Fprintf(a.log, "taskgraph ask: waiting for an answer to question %s\n", q.ID)
	backoff := watchBackoff.min
	for {
		got, last, err := a.wait(ctx, projectID, q.ID, cursor)
		if got != nil {
			return deref(got.Answer), got.Status, nil
		}
		if last != "" {
			cursor, backoff = last, watchBackoff.min
		}
		if ctx.Err() != nil {
			return "", "", ctx.Err()
		}
		if fatal(err) {
			return "", "", err
		}
		wait := backoff/2 + rand.N(backoff/2+1)
		fmt.Fprintf(a.log, "taskgraph ask: %v; reconnecting in %s\n", err, wait.Round(time.Millisecond))
		select {
		case <-ctx.Done():
			return "", "", ctx.Err()
		case <-time.After(wait):
		}
		backoff = min(2*backoff, watchBackoff.max)
	}
}

// wait subscribes after cursor until the question's outcome arrives (got),
// or the stream breaks (err, with the last cursor read).
func (a *asker) wait(ctx context.Context, projectID, questionID, cursor string) (got *askedQuestion, last string, err error) {
	conn, err := a.c.Dial(ctx)
	if err != nil {
		return nil, "", err
	}
	defer conn.Close()
	sub, err := conn.Subscribe(ctx, askOutcome, map[string]any{"p": projectID, "after": cursor})
	if err != nil {
		return nil, "", err
	}
	for {
		r, err := sub.Next(ctx)
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = errors.New("the server ended the subscription")
			}
			return nil, last, err
		}
		if len(r.Errors) > 0 {
			return nil, last, r.Errors
		}
		var d struct {
			ProjectEvents struct {
				Cursor   string
				Question *askedQuestion
			}
		}
		if err := json.Unmarshal(r.Data, &d); err != nil {
			return nil, last, err
		}
		last = d.ProjectEvents.Cursor
		if q := d.ProjectEvents.Question; q != nil && q.ID == questionID {
			return q, last, nil
		}
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
