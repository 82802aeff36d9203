package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/taskgraph/taskgraph/internal/client"
)

// agentWork is one claimed task being executed: the work (a command or a
// simulation), its heartbeats, its log stream and the run's directives.
type agentWork struct {
	c       *agentClient
	cfg     agentConfig
	agentID string
	task    *agentTask
	out     io.Writer
	logs    *logBatcher

	mu       sync.Mutex
	progress int
	step     string
	paused   bool
	resumed  chan struct{} // closed when a pause ends
	proc     *os.Process   // the command, once started
	lost     bool          // CANCEL or LEASE_LOST: the task is no longer ours

	session string // the agent session opened for the task ("" when none could be)
}

// progressPrefix starts an output line by which a command reports progress:
// "::progress 40 compiling" sets progressPercent 40 and currentStep
// "compiling" for the next heartbeats.
const progressPrefix = "::progress "

// stepPrefix and lessonPrefix start output lines by which a command records,
// in the task's agent session, a ReAct step — `::step {"thought": …,
// "action": …, "actionType": "TOOL_CALL", "actionData": {…}, "observation":
// …, "success": true}` — or a lesson — `::lesson {"context": …, "whatWorked":
// …, "lesson": …, "toolName": …, "confidence": 0.8}`.
const (
	stepPrefix   = "::step "
	lessonPrefix = "::lesson "
)

// execute runs the task to its report: completeTask, failTask, or nothing
// when the run was cancelled or the lease lost.
func (w *agentWork) execute(ctx context.Context) error {
	workCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	w.logs = newLogBatcher(ctx, w.c, w.agentID)
	w.step = "starting"
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { w.heartbeats(workCtx, cancel, stop) })
	wg.Go(func() { w.logs.stream(workCtx, stop, min(w.cfg.heartbeat, 500*time.Millisecond)) })
	var runErr error
	if w.cfg.simulate {
		runErr = w.simulate(workCtx)
	} else {
		w.openSession(workCtx)
		runErr = w.runCommand(workCtx)
	}
	close(stop)
	wg.Wait()
	w.logs.flush(ctx)
	w.mu.Lock()
	lost := w.lost
	w.mu.Unlock()
	if !lost && ctx.Err() == nil {
		w.closeSession(ctx, runErr == nil)
	}
	var err error
	switch {
	case lost:
		return nil
	case ctx.Err() != nil:
		return ctx.Err()
	case runErr != nil:
		err = w.c.do(ctx, `mutation($in: FailTaskInput!) { failTask(input: $in) { task { id } } }`,
			map[string]any{"in": map[string]any{"agentId": w.agentID, "error": runErr.Error(), "retryable": true}}, nil)
	default:
		err = w.c.do(ctx, `mutation($in: CompleteTaskInput!) { completeTask(input: $in) { task { id } } }`,
			map[string]any{"in": map[string]any{"agentId": w.agentID, "filesModified": gitModified(ctx)}}, nil)
	}
	// The sweep took the task away meanwhile (heartbeats that did not get
	// through in time): the report changed nothing and the task is someone
	// else's to redo, so the agent goes on to its next claim.
	var es client.Errors
	if errors.As(err, &es) && es.Code() == "LEASE_LOST" {
		fmt.Fprintf(w.out, "agent: %s: lease lost, result dropped (%v)\n", w.task.DisplayID, err)
		return nil
	}
	return err
}

// heartbeats sends a heartbeat every period and obeys its directive: PAUSE
// suspends the work, CONTINUE resumes it, CANCEL (or LEASE_LOST) stops it
// for good. A heartbeat that does not reach the server is tried again at the
// next tick; a server that stays away longer than the sweep deadline answers
// LEASE_LOST afterwards.
func (w *agentWork) heartbeats(ctx context.Context, cancel context.CancelFunc, stop <-chan struct{}) {
	every(ctx, stop, w.cfg.heartbeat, func() bool {
		w.mu.Lock()
		in := map[string]any{"agentId": w.agentID, "progressPercent": w.progress, "currentStep": w.step}
		w.mu.Unlock()
		var d struct{ Heartbeat struct{ Directive string } }
		err := w.c.c.Do(ctx, `mutation($in: HeartbeatInput!) { heartbeat(input: $in) { directive } }`,
			map[string]any{"in": in}, &d)
		var gqlErrs client.Errors
		switch {
		case errors.As(err, &gqlErrs):
			switch gqlErrs.Code() {
			case "LEASE_LOST", "NOT_FOUND", "UNAUTHENTICATED", "FORBIDDEN":
				w.lose(cancel)
				return false
			}
		case err != nil:
		case d.Heartbeat.Directive == "CANCEL":
			w.lose(cancel)
			return false
		default:
			w.setPaused(d.Heartbeat.Directive == "PAUSE")
		}
		return true
	})
}

// every calls f each period until f returns false, stop is closed or ctx
// ends.
func every(ctx context.Context, stop <-chan struct{}, period time.Duration, f func() bool) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		case <-t.C:
			if !f() {
				return
			}
		}
	}
}

// lose gives the task up: the work stops and nothing is reported.
func (w *agentWork) lose(cancel context.CancelFunc) {
	w.mu.Lock()
	w.lost = true
	w.mu.Unlock()
	w.setPaused(false) // a suspended command must run to be killed cleanly
	cancel()
}

// setPaused suspends or resumes the work.
func (w *agentWork) setPaused(paused bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.paused == paused {
		return
	}
	w.paused = paused
	if paused {
		w.resumed = make(chan struct{})
		w.step = "paused"
		if w.proc != nil {
			_ = suspendGroup(w.proc)
		}
		return
	}
	close(w.resumed)
	w.step = "executing"
	if w.proc != nil {
		_ = resumeGroup(w.proc)
	}
}

// waitResumed returns at once unless the work is paused, then when the pause
// ends.
func (w *agentWork) waitResumed(ctx context.Context) error {
	w.mu.Lock()
	paused, resumed := w.paused, w.resumed
	w.mu.Unlock()
	if !paused {
		return nil
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-resumed:
		return nil
	}
}

func (w *agentWork) setProgress(percent int, step string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.progress = max(0, min(100, percent))
	if step != "" && !w.paused {
		w.step = step
	}
}

// simulate "works" for a random 0.25–1.75 × --work of unpaused time, then
// records the task's declared tests as passed.
func (w *agentWork) simulate(ctx context.Context) error {
	total := time.Duration((0.25 + 1.5*rand.Float64()) * float64(w.cfg.work))
	slice := min(50*time.Millisecond, max(time.Millisecond, total/20))
	w.setProgress(0, "simulating")
	for done := time.Duration(0); done < total; {
		if err := w.waitResumed(ctx); err != nil {
			return err
		}
		d := min(slice, total-done)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(d):
		}
		done += d
		w.setProgress(int(100*done/total), "")
	}
	w.logs.add("simulated " + w.task.DisplayID)
	for level, tests := range map[string][]string{"CODEBASE": w.task.CodebaseTests, "API": w.task.APITests, "UI": w.task.UITests} {
		for i, name := range tests {
			if err := w.c.do(ctx, `mutation($in: RecordTestResultInput!) { recordTestResult(input: $in) { testResult { id } } }`,
				map[string]any{"in": map[string]any{"agentId": w.agentID, "level": level, "testIndex": i, "testName": name,
					"status": "PASSED"}}, nil); err != nil {
				return err
			}
		}
	}
	return nil
}

// runCommand runs the command in a process group of its own (so a pause
// stops and a cancel kills its children too), with the task in its
// environment and its output lines going to the log.
func (w *agentWork) runCommand(ctx context.Context) error {
	dir, err := os.MkdirTemp("", "taskgraph-agent-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "task.json")
	b, _ := json.Marshal(w.task)
	if err := os.WriteFile(file, b, 0o600); err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, "sh", "-c", w.cfg.command)
	cmd.Env = append(os.Environ(), "TASKGRAPH_TASK_ID="+w.task.ID, "TASKGRAPH_TASK_DISPLAY_ID="+w.task.DisplayID,
		"TASKGRAPH_TASK_TITLE="+w.task.Title, "TASKGRAPH_TASK_FILE="+file, "TASKGRAPH_AGENT_ID="+w.agentID,
		// For commands that call the server as the agent (taskgraph ask).
		"TASKGRAPH_URL="+w.cfg.url, "TASKGRAPH_TOKEN="+w.cfg.token)
	if w.session != "" {
		cmd.Env = append(cmd.Env, "TASKGRAPH_SESSION_ID="+w.session)
	}
	setProcessGroup(cmd)
	cmd.Cancel = func() error { return killGroup(cmd.Process) }
	cmd.WaitDelay = 5 * time.Second
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		return err
	}
	w.mu.Lock()
	w.proc, w.step = cmd.Process, "executing"
	if w.paused { // paused before the command started
		_ = suspendGroup(w.proc)
		w.step = "paused"
	}
	w.mu.Unlock()
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64*1024), 1024*1024)
		for sc.Scan() {
			line := sc.Text()
			if rest, ok := strings.CutPrefix(line, progressPrefix); ok {
				n, step, _ := strings.Cut(strings.TrimSpace(rest), " ")
				if p, err := strconv.Atoi(n); err == nil {
					w.setProgress(p, step)
				}
			}
			if rest, ok := strings.CutPrefix(line, stepPrefix); ok {
				w.record(ctx, "step", rest)
			}
			if rest, ok := strings.CutPrefix(line, lessonPrefix); ok {
				w.record(ctx, "lesson", rest)
			}
			w.logs.add(line)
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	err = cmd.Wait()
	pw.Close()
	<-done
	w.mu.Lock()
	w.proc = nil
	w.mu.Unlock()
	return err
}

// gitModified lists the files git reports changed, when in a work tree.
func gitModified(ctx context.Context) []string {
	out, err := exec.CommandContext(ctx, "git", "status", "--porcelain").Output()
	if err != nil {
		return []string{}
	}
	files := []string{}
	for _, line := range strings.Split(string(out), "\n") {
		if len(line) > 3 {
			files = append(files, strings.TrimSpace(line[3:]))
		}
	}
	return files
}

// logBatcher sends log lines in batches: every 100 lines, on a ticker while
// the work runs (so watchers see output live), and on a final flush.
type logBatcher struct {
	ctx     context.Context // of the agent: a full batch is sent under it
	c       *agentClient
	agentID string
	mu      sync.Mutex
	lines   []string
	send    sync.Mutex // one batch in flight: lines stay in order
}

func newLogBatcher(ctx context.Context, c *agentClient, agentID string) *logBatcher {
	return &logBatcher{ctx: ctx, c: c, agentID: agentID}
}

func (l *logBatcher) add(line string) {
	l.mu.Lock()
	l.lines = append(l.lines, line)
	full := len(l.lines) >= 100
	l.mu.Unlock()
	if full {
		l.flush(l.ctx)
	}
}

// stream flushes every period until stop or ctx ends.
func (l *logBatcher) stream(ctx context.Context, stop <-chan struct{}, period time.Duration) {
	every(ctx, stop, period, func() bool { l.flush(ctx); return true })
}

func (l *logBatcher) flush(ctx context.Context) {
	l.send.Lock()
	defer l.send.Unlock()
	l.mu.Lock()
	lines := l.lines
	l.lines = nil
	l.mu.Unlock()
	if len(lines) == 0 {
		return
	}
	// A failure here shows in the report that follows (LEASE_LOST, …).
	err := l.c.do(ctx, `mutation($in: AppendExecutionLogInput!) { appendExecutionLog(input: $in) { execution { id } } }`,
		map[string]any{"in": map[string]any{"agentId": l.agentID, "lines": lines}}, nil)
	if err != nil {
		fmt.Fprintf(os.Stderr, "taskgraph agent: %d log lines not sent: %v\n", len(lines), err)
	}
}

// openSession opens the task's agent session (its events join the run's
// stream); the command gets its id as TASKGRAPH_SESSION_ID. Without one (a
// server without sessions), the command runs all the same.
func (w *agentWork) openSession(ctx context.Context) {
	if w.task.Project == nil {
		return
	}
	var d struct {
		CreateAgentSession struct{ Session struct{ ID string } }
	}
	err := w.c.do(ctx, `mutation($in: CreateAgentSessionInput!) { createAgentSession(input: $in) { session { id } } }`,
		map[string]any{"in": map[string]any{"projectId": w.task.Project.ID, "mission": w.task.Title, "agentId": w.agentID,
			"state": map[string]any{"taskId": w.task.ID}}}, &d)
	if err != nil {
		fmt.Fprintf(w.out, "agent: %s: no agent session (%v)\n", w.task.DisplayID, err)
		return
	}
	w.session = d.CreateAgentSession.Session.ID
	w.setSessionStatus(ctx, "IN_PROGRESS")
}

// closeSession ends the task's session as the command ended.
func (w *agentWork) closeSession(ctx context.Context, ok bool) {
	if ok {
		w.setSessionStatus(ctx, "COMPLETED")
	} else {
		w.setSessionStatus(ctx, "FAILED")
	}
}

func (w *agentWork) setSessionStatus(ctx context.Context, status string) {
	if w.session == "" {
		return
	}
	err := w.c.do(ctx, `mutation($in: SetAgentSessionStatusInput!) { setAgentSessionStatus(input: $in) { session { id } } }`,
		map[string]any{"in": map[string]any{"id": w.session, "status": status}}, nil)
	if err != nil {
		fmt.Fprintf(w.out, "agent: %s: session status %s: %v\n", w.task.DisplayID, status, err)
	}
}

// recordFields are the keys a ::step or ::lesson line may carry.
var recordFields = map[string][]string{
	"step":   {"thought", "action", "actionType", "actionData", "observation", "success", "error"},
	"lesson": {"context", "whatFailed", "whatWorked", "lesson", "toolName", "confidence"},
}

// record turns a ::step or ::lesson line's JSON into recordReActStep or
// recordLesson in the task's session. A bad line is reported and skipped:
// the command goes on.
func (w *agentWork) record(ctx context.Context, kind, raw string) {
	if w.session == "" {
		return
	}
	var in map[string]any
	if err := json.Unmarshal([]byte(raw), &in); err != nil {
		fmt.Fprintf(w.out, "agent: %s: bad ::%s line: %v\n", w.task.DisplayID, kind, err)
		return
	}
	vars := map[string]any{"sessionId": w.session}
	for _, k := range recordFields[kind] {
		if v, ok := in[k]; ok {
			vars[k] = v
		}
	}
	query := `mutation($in: RecordReActStepInput!) { recordReActStep(input: $in) { step { stepId } } }`
	if kind == "lesson" {
		query = `mutation($in: RecordLessonInput!) { recordLesson(input: $in) { lesson { id } } }`
	}
	if err := w.c.do(ctx, query, map[string]any{"in": vars}, nil); err != nil {
		fmt.Fprintf(w.out, "agent: %s: ::%s not recorded: %v\n", w.task.DisplayID, kind, err)
	}
}
