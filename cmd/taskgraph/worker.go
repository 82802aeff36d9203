package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"

	"github.com/taskgraph/taskgraph/internal/client"
)

// The reference worker of the function queue: `taskgraph worker --function
// NAME --exec CMD [--parallel N]`. Each of N slots claims one item at a time,
// runs CMD (through sh -c) with the item's payload on stdin and the item in
// TASKGRAPH_* environment variables, extends the item's lease while CMD runs,
// and completes the item with CMD's stdout (JSON when it parses, else a
// string) on exit status 0, or fails it with CMD's stderr otherwise. A lease
// lost meanwhile (the item was cancelled, or rescued after the worker went
// silent) kills CMD and reports nothing. Idle slots wait for the project's
// QUEUE_ITEM_* events instead of polling fast; --poll is the slow safety net.

const (
	workerClaimMutation = `mutation($in: ClaimQueueItemsInput!) { claimQueueItems(input: $in) { items {
		id attempt maxAttempts functionName entityType entityId payload leaseSeconds project { id } } } }`
	workerExtendMutation   = `mutation($in: ExtendQueueLeaseInput!) { extendQueueLease(input: $in) { item { id leaseExpiresAt } } }`
	workerCompleteMutation = `mutation($in: CompleteQueueItemInput!) { completeQueueItem(input: $in) { item { id status } } }`
	workerFailMutation     = `mutation($in: FailQueueItemInput!) { failQueueItem(input: $in) { item { id status } } }`
	workerEventsQuery      = `subscription($project: ID!, $after: String, $types: [ExecutionEventType!]) {
		projectEvents(projectId: $project, after: $after, types: $types) { cursor type
			... on QueueItemEnqueued { functionName scheduledAt }
			... on QueueItemFailed { functionName willRetry retryAt: scheduledAt } } }`
	// maxCapture bounds what the worker keeps of CMD's stdout and stderr: a
	// larger result fails the item (the server takes results up to 1 MB).
	maxCapture = 1_000_000 - 2
	// maxReportedError bounds the error message sent for a failure.
	maxReportedError = 60 << 10
)

type workerConfig struct {
	url, token, project, command, name string
	functions                          []string
	parallel                           int
	poll                               time.Duration
	once                               bool // exit when nothing is due (tests, cron jobs)
}

type stringList []string

func (l *stringList) String() string { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error {
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			*l = append(*l, s)
		}
	}
	return nil
}

func runWorker(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg workerConfig
	var functions stringList
	host, _ := os.Hostname()
	fs.Var(&functions, "function", "queue function to run (repeat, or comma-separate, for several; required)")
	fs.StringVar(&cfg.command, "exec", "", "command run through sh -c for each item (required)")
	fs.IntVar(&cfg.parallel, "parallel", 1, "items run at once")
	fs.StringVar(&cfg.project, "project", "", "slug or id of the project whose events wake the worker (default: poll only)")
	fs.StringVar(&cfg.name, "name", fmt.Sprintf("%s:%d", host, os.Getpid()), "worker name recorded as the items' claimedBy")
	fs.DurationVar(&cfg.poll, "poll", 30*time.Second, "claim at least this often even without events (with --project); 2s without")
	fs.BoolVar(&cfg.once, "drain", false, "exit once no item is due instead of waiting for more")
	fs.StringVar(&cfg.url, "url", envOr("TASKGRAPH_URL", "http://127.0.0.1:8080"), "server URL (env TASKGRAPH_URL)")
	secretFlag(fs, &cfg.token, "token", "TASKGRAPH_TOKEN", "API token")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: taskgraph worker --function NAME --exec CMD [--parallel N] [--project SLUG] [--name NAME] [--url URL] [--token TOKEN]")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	cfg.functions = functions
	if len(cfg.functions) == 0 || cfg.command == "" || cfg.parallel < 1 || cfg.parallel > 100 || fs.NArg() > 0 {
		fs.Usage()
		return errUsage
	}
	if cfg.project == "" {
		fset := false
		fs.Visit(func(f *flag.Flag) { fset = fset || f.Name == "poll" })
		if !fset {
			cfg.poll = 2 * time.Second
		}
	}
	tr, err := newClientTracer(ctx, "taskgraph-worker")
	if err != nil {
		return err
	}
	defer tr.stop(ctx)
	w := &queueWorker{cfg: cfg, c: client.New(cfg.url, cfg.token), out: stdout, log: stderr, wake: newNotifier(), tracer: tr}
	err = w.run(ctx)
	if ctx.Err() != nil {
		return nil // interrupted: the normal way to stop
	}
	return err
}

// notifier wakes every waiting slot at once.
type notifier struct {
	mu sync.Mutex
	ch chan struct{}
}

func newNotifier() *notifier { return &notifier{ch: make(chan struct{})} }

// wait returns a channel closed at the next broadcast; take it before
// looking for work, so that a broadcast in between is not missed.
func (n *notifier) wait() <-chan struct{} {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.ch
}

func (n *notifier) broadcast() {
	n.mu.Lock()
	close(n.ch)
	n.ch = make(chan struct{})
	n.mu.Unlock()
}

type queueWorker struct {
	cfg      workerConfig
	c        *client.Client
	out, log io.Writer
	wake     *notifier
	logMu    sync.Mutex
	tracer   *clientTracer // a root span per claim, over the item it claimed
}

func (w *queueWorker) logf(format string, args ...any) {
	w.logMu.Lock()
	defer w.logMu.Unlock()
	fmt.Fprintf(w.log, "worker: "+format+"\n", args...)
}

func (w *queueWorker) run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if w.cfg.project != "" {
		projectID, err := w.projectID(ctx)
		if err != nil {
			return err
		}
		go w.listen(ctx, projectID)
	}
	var wg sync.WaitGroup
	errs := make(chan error, w.cfg.parallel)
	for i := range w.cfg.parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := w.slot(ctx, i); err != nil {
				errs <- err
				cancel()
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// projectID resolves --project (a slug or an id).
func (w *queueWorker) projectID(ctx context.Context) (string, error) {
	var out struct{ Project *struct{ ID string } }
	err := w.c.Do(ctx, `query($slug: String) { project(slug: $slug) { id } }`, map[string]any{"slug": w.cfg.project}, &out)
	if err == nil && out.Project != nil {
		return out.Project.ID, nil
	}
	var byID struct{ Node *struct{ ID string } }
	if err2 := w.c.Do(ctx, `query($id: ID!) { node(id: $id) { id } }`, map[string]any{"id": w.cfg.project}, &byID); err2 == nil && byID.Node != nil {
		return byID.Node.ID, nil
	}
	if err != nil {
		return "", fmt.Errorf("project %q: %w", w.cfg.project, err)
	}
	return "", fmt.Errorf("project %q not found", w.cfg.project)
}

// listen wakes the slots when an item of one of the functions is enqueued or
// scheduled for a retry (at its due time), reconnecting after errors; every
// (re)connection wakes them too, for what was enqueued while disconnected.
func (w *queueWorker) listen(ctx context.Context, projectID string) {
	want := map[string]bool{}
	for _, f := range w.cfg.functions {
		want[f] = true
	}
	backoff := 250 * time.Millisecond
	cursor := ""
	for ctx.Err() == nil {
		err := w.listenOnce(ctx, projectID, want, &cursor)
		if ctx.Err() != nil {
			return
		}
		wait := backoff/2 + rand.N(backoff/2+1)
		w.logf("event stream: %v; reconnecting in %s", err, wait.Round(time.Millisecond))
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		backoff = min(2*backoff, 10*time.Second)
	}
}

// listenOnce follows the project's events from *cursor (or, the first time,
// from the log's end as it was before subscribing: an event committed while
// the subscription starts is not missed) and keeps *cursor at the last one.
func (w *queueWorker) listenOnce(ctx context.Context, projectID string, want map[string]bool, cursor *string) error {
	if *cursor == "" {
		var d struct{ Node *struct{ EventCursor string } }
		if err := w.c.Do(ctx, `query($id: ID!) { node(id: $id) { ... on Project { eventCursor } } }`,
			map[string]any{"id": projectID}, &d); err != nil {
			return err
		}
		if d.Node == nil {
			return fmt.Errorf("project %s not found", projectID)
		}
		*cursor = d.Node.EventCursor
	}
	conn, err := w.c.Dial(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	sub, err := conn.Subscribe(ctx, workerEventsQuery, map[string]any{"project": projectID, "after": *cursor,
		"types": []string{"QUEUE_ITEM_ENQUEUED", "QUEUE_ITEM_FAILED"}})
	if err != nil {
		return err
	}
	defer sub.Close()
	w.wake.broadcast() // for what was enqueued before the cursor
	for {
		r, err := sub.Next(ctx)
		if err != nil {
			return err
		}
		if len(r.Errors) > 0 {
			return r.Errors
		}
		var d struct {
			ProjectEvents struct {
				Cursor       string
				Type         string
				FunctionName string
				WillRetry    bool
				ScheduledAt  *time.Time // of an enqueued item
				RetryAt      *time.Time // of a failed one
			}
		}
		if err := json.Unmarshal(r.Data, &d); err != nil {
			return err
		}
		e := d.ProjectEvents
		*cursor = e.Cursor
		if !want[e.FunctionName] || (e.Type == "QUEUE_ITEM_FAILED" && !e.WillRetry) {
			continue
		}
		if e.RetryAt != nil {
			e.ScheduledAt = e.RetryAt
		}
		if e.ScheduledAt != nil {
			if due := time.Until(*e.ScheduledAt); due > 0 {
				time.AfterFunc(due, w.wake.broadcast) // a retry or a scheduled item: wake when due
				continue
			}
		}
		w.wake.broadcast()
	}
}

// workerItem is a claimed item as the worker reads it.
type workerItem struct {
	ID           string
	Attempt      int
	MaxAttempts  int
	FunctionName string
	EntityType   string
	EntityID     string
	Payload      json.RawMessage
	LeaseSeconds int
	Project      struct{ ID string }
}

// slot claims and runs items one at a time until ctx ends.
func (w *queueWorker) slot(ctx context.Context, n int) error {
	backoff := 250 * time.Millisecond
	for ctx.Err() == nil {
		woken := w.wake.wait()
		var out struct{ ClaimQueueItems struct{ Items []workerItem } }
		// One trace per claim: the item's report joins it.
		tctx, span := w.tracer.start(ctx, "worker claim", attribute.StringSlice("taskgraph.functions", w.cfg.functions))
		err := w.c.Do(tctx, workerClaimMutation, map[string]any{"in": map[string]any{
			"functionNames": w.cfg.functions, "workerName": fmt.Sprintf("%s#%d", w.cfg.name, n), "limit": 1}}, &out)
		if err != nil {
			span.SetStatus(codes.Error, "claim failed")
			span.End()
			if ctx.Err() != nil {
				return nil
			}
			var es client.Errors
			if errors.As(err, &es) && es.Code() != "" && es.Code() != "INTERNAL" && es.Code() != "LIMIT_EXCEEDED" {
				return fmt.Errorf("claim: %w", err) // bad flags or token: retrying cannot help
			}
			w.logf("claim: %v; retrying", err)
			if !sleepCtx(ctx, backoff/2+rand.N(backoff/2+1)) {
				return nil
			}
			backoff = min(2*backoff, 10*time.Second)
			continue
		}
		backoff = 250 * time.Millisecond
		if len(out.ClaimQueueItems.Items) == 0 {
			span.End()
			if w.cfg.once {
				return nil
			}
			select {
			case <-ctx.Done():
				return nil
			case <-woken:
			case <-time.After(w.cfg.poll):
			}
			continue
		}
		it := out.ClaimQueueItems.Items[0]
		span.SetName("worker item " + it.FunctionName)
		span.SetAttributes(attribute.String("taskgraph.queue_item.id", it.ID), attribute.String("taskgraph.function", it.FunctionName))
		w.process(tctx, it)
		span.End()
	}
	return nil
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}

// limitedBuffer keeps the first max bytes written to it.
type limitedBuffer struct {
	buf       bytes.Buffer
	max       int
	truncated bool
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.buf.Len(); room < len(p) {
		b.truncated = true
		if room > 0 {
			b.buf.Write(p[:room])
		}
		return len(p), nil
	}
	return b.buf.Write(p)
}

// process runs CMD for one item and reports its outcome.
func (w *queueWorker) process(ctx context.Context, it workerItem) {
	runCtx, kill := context.WithCancel(ctx)
	defer kill()
	cmd := exec.CommandContext(runCtx, "sh", "-c", w.cfg.command)
	setProcessGroup(cmd)
	cmd.Cancel = func() error { return killGroup(cmd.Process) }
	cmd.WaitDelay = 5 * time.Second
	cmd.Stdin = bytes.NewReader(it.Payload)
	var stdout, stderr limitedBuffer
	stdout.max, stderr.max = maxCapture, maxCapture
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Env = append(os.Environ(),
		"TASKGRAPH_QUEUE_ITEM_ID="+it.ID,
		"TASKGRAPH_FUNCTION="+it.FunctionName,
		"TASKGRAPH_ENTITY_TYPE="+it.EntityType,
		"TASKGRAPH_ENTITY_ID="+it.EntityID,
		"TASKGRAPH_PROJECT_ID="+it.Project.ID,
		"TASKGRAPH_ATTEMPT="+strconv.Itoa(it.Attempt),
		"TASKGRAPH_MAX_ATTEMPTS="+strconv.Itoa(it.MaxAttempts),
	)
	var lost sync.Once
	lostLease := false
	done := make(chan struct{})
	go func() {
		// Extend the lease at a third of its length while CMD runs.
		period := time.Duration(max(it.LeaseSeconds, 1)) * time.Second / 3
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			err := w.c.Do(runCtx, workerExtendMutation, map[string]any{"in": map[string]any{"id": it.ID, "attempt": it.Attempt}}, nil)
			var es client.Errors
			if errors.As(err, &es) && es.Code() == "LEASE_LOST" {
				lost.Do(func() {
					lostLease = true
					w.logf("item %s attempt %d: %v; stopping its command", it.ID, it.Attempt, err)
					kill()
				})
				return
			} else if err != nil && runCtx.Err() == nil {
				w.logf("item %s: extend lease: %v", it.ID, err) // transient: try again next period
			}
		}
	}()
	runErr := cmd.Run()
	close(done)
	if ctx.Err() != nil {
		return // shutting down: the lease expires and the item is rescued
	}
	lost.Do(func() {}) // waits for a concurrent loss to be recorded, or rules it out
	if lostLease {
		return
	}
	if runErr == nil && stdout.truncated {
		runErr = fmt.Errorf("its stdout (the result) is larger than %d bytes", maxCapture)
		stderr.buf.Reset()
	}
	if runErr == nil {
		err := w.report(ctx, it, workerCompleteMutation, map[string]any{"id": it.ID, "attempt": it.Attempt, "result": resultOf(stdout.buf.Bytes())})
		if !refused(err) {
			if err == nil {
				fmt.Fprintf(w.out, "completed %s (%s, attempt %d)\n", it.ID, it.FunctionName, it.Attempt)
			}
			return
		}
		runErr = fmt.Errorf("the server refused its result: %w", err) // too large, say: fail the attempt instead
		stderr.buf.Reset()
	}
	msg := strings.TrimSpace(stderr.buf.String())
	if len(msg) > maxReportedError {
		msg = msg[len(msg)-maxReportedError:]
	}
	if msg == "" {
		msg = runErr.Error()
	} else {
		msg = msg + " (" + runErr.Error() + ")"
	}
	_ = w.report(ctx, it, workerFailMutation, map[string]any{"id": it.ID, "attempt": it.Attempt, "error": msg, "retryable": true})
	fmt.Fprintf(w.out, "failed %s (%s, attempt %d): %s\n", it.ID, it.FunctionName, it.Attempt, firstLine(msg))
}

// refused reports a completion the server turned down for its result (too
// large, not storable), as opposed to a lost lease or a transport error.
func refused(err error) bool {
	var es client.Errors
	if errors.As(err, &es) {
		return es.Code() == "BAD_USER_INPUT" || es.Code() == "LIMIT_EXCEEDED"
	}
	return err != nil && strings.Contains(err.Error(), "HTTP 413")
}

// resultOf is CMD's stdout as a result: JSON when it parses, else a string.
func resultOf(out []byte) any {
	trimmed := bytes.TrimSpace(out)
	if len(trimmed) > 0 && json.Valid(trimmed) {
		return json.RawMessage(trimmed)
	}
	return string(out)
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// report sends an outcome, retrying transient errors (a server restarting)
// until it is recorded, the lease is lost, or ctx ends; it returns the error
// that ended it (nil: recorded).
func (w *queueWorker) report(ctx context.Context, it workerItem, mutation string, in map[string]any) error {
	backoff := 250 * time.Millisecond
	for {
		err := w.c.Do(ctx, mutation, map[string]any{"in": in}, nil)
		if err == nil || ctx.Err() != nil {
			return err
		}
		var es client.Errors
		if errors.As(err, &es) && es.Code() != "INTERNAL" {
			w.logf("item %s attempt %d: %v", it.ID, it.Attempt, err) // LEASE_LOST or a bad input: nothing to redo
			return err
		}
		w.logf("item %s: report: %v; retrying", it.ID, err)
		if !sleepCtx(ctx, backoff) {
			return ctx.Err()
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}
