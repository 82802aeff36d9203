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
	"strings"
	"time"

	"github.com/taskgraph/taskgraph/internal/client"
)

// watchQuery selects what watch prints of every event: the details of each kind.
const watchQuery = `subscription($project: ID!, $after: String, $types: [ExecutionEventType!]) {
  projectEvents(projectId: $project, after: $after, types: $types) {
    cursor type occurredAt
    task { id displayId title }
    run { runNumber }
    ... on TaskCreated { title status }
    ... on TaskUpdated { changedFields }
    ... on TaskStatusChanged { from to reason }
    ... on RunStarted { reason }
    ... on RunPaused { reason }
    ... on RunResumed { reason }
    ... on RunCancelled { reason }
    ... on RunCompleted { durationMs }
    ... on RunFailed { failureReason durationMs }
    ... on WaveStarted { waveNumber taskCount }
    ... on WaveCompleted { waveNumber waveStatus completedCount failedCount skippedCount durationMs }
    ... on TaskClaimed { waveNumber attemptNumber }
    ... on AgentHeartbeat { progressPercent currentStep memoryMb cpuPercent }
    ... on AgentTerminated { terminationReason attemptNumber }
    ... on LogAppended { lines firstLine }
    ... on TestResultRecorded { level testIndex testName testStatus durationMs }
    ... on QuestionAsked { question { questionText } }
    ... on QuestionAnswered { question { questionText } answer byTimeout }
    ... on QuestionExpired { question { questionText } timeoutAction }
    ... on QuestionSkipped { question { questionText } reason }
    ... on SessionStatusChanged { sessionFrom: from sessionTo: to }
    ... on TaskListStatusChanged { listFrom: from listTo: to reason }
    ... on SessionStateSaved { version }
    ... on TodoListCreated { itemCount }
    ... on TodoItemChanged { position itemFrom: from itemTo: to }
    ... on ReActStepRecorded { stepId thought action actionType success }
    ... on LessonRecorded { toolName confidence }
  }
}`

// watchBackoff bounds the pause between reconnects.
var watchBackoff = struct{ min, max time.Duration }{250 * time.Millisecond, 10 * time.Second}

type watchConfig struct {
	url, token, project, after string
	types                      []string
	json                       bool
}

// runWatch prints a project's events as they commit, one line each (or one
// JSON object each with --json), reconnecting by itself and resuming from the
// last event printed, until ctx ends.
func runWatch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("watch", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg watchConfig
	fs.StringVar(&cfg.project, "project", "", "slug of the project to watch (required)")
	types := fs.String("types", "", "comma-separated event types to show, e.g. TASK_CREATED,TASK_STATUS_CHANGED (default: all)")
	fs.StringVar(&cfg.after, "after", "", "start after this event cursor (default: from now on)")
	fs.BoolVar(&cfg.json, "json", false, "print each event as one JSON object per line")
	fs.StringVar(&cfg.url, "url", envOr("TASKGRAPH_URL", "http://127.0.0.1:8080"), "server URL (env TASKGRAPH_URL)")
	secretFlag(fs, &cfg.token, "token", "TASKGRAPH_TOKEN", "API token")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: taskgraph watch --project SLUG [--types T1,T2] [--after CURSOR] [--json] [--url URL] [--token TOKEN]")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if cfg.project == "" || fs.NArg() > 0 {
		fs.Usage()
		return errUsage
	}
	for _, t := range strings.Split(*types, ",") {
		if t = strings.ToUpper(strings.TrimSpace(t)); t != "" {
			cfg.types = append(cfg.types, t)
		}
	}
	w := &watcher{cfg: cfg, c: client.New(cfg.url, cfg.token), out: stdout, log: stderr}
	err := w.run(ctx)
	if ctx.Err() != nil {
		return nil // interrupted: the normal way to stop watching
	}
	return err
}

type watcher struct {
	cfg       watchConfig
	c         *client.Client
	out, log  io.Writer
	projectID string
	cursor    string // of the last event printed, or where to start
}

func (w *watcher) run(ctx context.Context) error {
	w.cursor = w.cfg.after
	backoff := watchBackoff.min
	for {
		printed, err := w.once(ctx)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if fatal(err) {
			return err
		}
		if printed {
			backoff = watchBackoff.min
		}
		var es client.Errors
		if errors.As(err, &es) && es.Code() == "LIMIT_EXCEEDED" && len(es) > 0 && es[0].Extensions["cursor"] != nil {
			// Too slow for the server: resubscribe from the last event printed.
			// (A LIMIT_EXCEEDED without a cursor — the token's subscriptions
			// are at their cap — waits with the backoff below.)
			fmt.Fprintf(w.log, "watch: %v; resubscribing\n", err)
			continue
		}
		wait := backoff/2 + rand.N(backoff/2+1)
		fmt.Fprintf(w.log, "watch: %v; reconnecting in %s\n", err, wait.Round(time.Millisecond))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		backoff = min(2*backoff, watchBackoff.max)
	}
}

// fatal reports errors that reconnecting cannot fix.
func fatal(err error) bool {
	var ce *client.CloseError
	if errors.As(err, &ce) {
		return ce.Code == 4403 || ce.Code == 4400 || ce.Code == 4401
	}
	var es client.Errors
	if errors.As(err, &es) {
		switch es.Code() {
		case "UNAUTHENTICATED", "FORBIDDEN", "NOT_FOUND", "BAD_USER_INPUT":
			return true
		}
	}
	return false
}

// once resolves the project (first time), subscribes and prints until the
// subscription ends; printed reports whether any event was printed.
func (w *watcher) once(ctx context.Context) (printed bool, err error) {
	if w.projectID == "" {
		var r struct {
			Project *struct{ ID, EventCursor string }
		}
		if err := w.c.Do(ctx, `query($slug: String!) { project(slug: $slug) { id eventCursor } }`,
			map[string]any{"slug": w.cfg.project}, &r); err != nil {
			return false, err
		}
		if r.Project == nil {
			return false, client.Errors{{Message: "project " + w.cfg.project + " not found", Extensions: map[string]any{"code": "NOT_FOUND"}}}
		}
		w.projectID = r.Project.ID
		if w.cursor == "" {
			// From now on — and from here after any reconnect.
			w.cursor = r.Project.EventCursor
		}
	}
	conn, err := w.c.Dial(ctx)
	if err != nil {
		return false, err
	}
	defer conn.Close()
	vars := map[string]any{"project": w.projectID, "after": w.cursor}
	if len(w.cfg.types) > 0 {
		vars["types"] = w.cfg.types
	}
	sub, err := conn.Subscribe(ctx, watchQuery, vars)
	if err != nil {
		return false, err
	}
	for {
		r, err := sub.Next(ctx)
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = errors.New("the server ended the subscription")
			}
			return printed, err
		}
		if len(r.Errors) > 0 {
			return printed, r.Errors
		}
		var d struct {
			ProjectEvents json.RawMessage
		}
		if err := json.Unmarshal(r.Data, &d); err != nil {
			return printed, err
		}
		line, cursor, err := formatEvent(d.ProjectEvents, w.cfg.json)
		if err != nil {
			return printed, err
		}
		if _, err := fmt.Fprintln(w.out, line); err != nil {
			return printed, err
		}
		w.cursor, printed = cursor, true
	}
}

// watchEvent is the part of an event watch prints. A key of several kinds
// has one type in all of them (the schema sees to it).
type watchEvent struct {
	Cursor     string `json:"cursor"`
	Type       string `json:"type"`
	OccurredAt string `json:"occurredAt"`
	Task       *struct {
		DisplayID string `json:"displayId"`
		Title     string `json:"title"`
	} `json:"task"`
	Run *struct {
		RunNumber int `json:"runNumber"`
	} `json:"run"`
	Title             string   `json:"title"`
	Status            string   `json:"status"`
	ChangedFields     []string `json:"changedFields"`
	From              string   `json:"from"`
	To                string   `json:"to"`
	Reason            *string  `json:"reason"`
	FailureReason     string   `json:"failureReason"`
	DurationMs        *int     `json:"durationMs"`
	WaveNumber        int      `json:"waveNumber"`
	TaskCount         *int     `json:"taskCount"`
	WaveStatus        string   `json:"waveStatus"`
	CompletedCount    *int     `json:"completedCount"`
	FailedCount       *int     `json:"failedCount"`
	SkippedCount      *int     `json:"skippedCount"`
	AttemptNumber     int      `json:"attemptNumber"`
	ProgressPercent   *int     `json:"progressPercent"`
	CurrentStep       *string  `json:"currentStep"`
	MemoryMb          *int     `json:"memoryMb"`
	CPUPercent        *float64 `json:"cpuPercent"`
	TerminationReason string   `json:"terminationReason"`
	Lines             []string `json:"lines"`
	FirstLine         *int     `json:"firstLine"`
	Level             string   `json:"level"`
	TestIndex         int      `json:"testIndex"`
	TestName          *string  `json:"testName"`
	TestStatus        string   `json:"testStatus"`
	Question          *struct {
		QuestionText string `json:"questionText"`
	} `json:"question"`
	Answer        string `json:"answer"`
	ByTimeout     bool   `json:"byTimeout"`
	TimeoutAction string `json:"timeoutAction"`
	// Agent sessions' kinds (their from/to are aliased: other types than a task's).
	SessionFrom string   `json:"sessionFrom"`
	ListFrom    string   `json:"listFrom"`
	ListTo      string   `json:"listTo"`
	SessionTo   string   `json:"sessionTo"`
	Version     int      `json:"version"`
	ItemCount   int      `json:"itemCount"`
	Position    int      `json:"position"`
	ItemFrom    string   `json:"itemFrom"`
	ItemTo      string   `json:"itemTo"`
	StepID      int      `json:"stepId"`
	Thought     *string  `json:"thought"`
	Action      *string  `json:"action"`
	ActionType  *string  `json:"actionType"`
	Success     *bool    `json:"success"`
	ToolName    *string  `json:"toolName"`
	Confidence  *float64 `json:"confidence"`
}

// watchLogLines is how many lines of a LOG_APPENDED event watch shows.
const watchLogLines = 3

// formatEvent renders one event as a line of text, or as compact JSON.
func formatEvent(raw json.RawMessage, asJSON bool) (line, cursor string, err error) {
	var e watchEvent
	if err := json.Unmarshal(raw, &e); err != nil {
		return "", "", fmt.Errorf("undecodable event: %w", err)
	}
	if asJSON {
		var b bytes.Buffer
		if err := json.Compact(&b, raw); err != nil {
			return "", "", err
		}
		return b.String(), e.Cursor, nil
	}
	task := "-"
	if e.Task != nil {
		task = e.Task.DisplayID
	}
	return strings.TrimRight(fmt.Sprintf("%s  %-20s %-22s %s", e.OccurredAt, e.Type, task, e.detail()), " "), e.Cursor, nil
}

// detail is the text of the event's details, by kind.
func (e *watchEvent) detail() string {
	var b strings.Builder
	add := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	reason := func(r *string) {
		if r != nil && *r != "" {
			add(" (%s)", *r)
		}
	}
	took := func() {
		if e.DurationMs != nil {
			add(" in %s", time.Duration(*e.DurationMs)*time.Millisecond)
		}
	}
	run := "run"
	if e.Run != nil {
		run = fmt.Sprintf("run %d", e.Run.RunNumber)
	}
	switch e.Type {
	case "TASK_CREATED":
		add("%q %s", e.Title, e.Status)
	case "TASK_UPDATED":
		add("changed: %s", strings.Join(e.ChangedFields, ", "))
	case "TASK_STATUS_CHANGED":
		add("%s -> %s", e.From, e.To)
		reason(e.Reason)
	case "RUN_STARTED", "RUN_PAUSED", "RUN_RESUMED", "RUN_CANCELLED":
		add("%s", run)
		reason(e.Reason)
	case "RUN_COMPLETED":
		add("%s", run)
		took()
	case "RUN_FAILED":
		add("%s: %s", run, e.FailureReason)
		took()
	case "WAVE_STARTED":
		add("wave %d", e.WaveNumber)
		if e.TaskCount != nil {
			add(": %s", plural(*e.TaskCount, "task"))
		}
	case "WAVE_COMPLETED":
		add("wave %d %s", e.WaveNumber, e.WaveStatus)
		if e.CompletedCount != nil && e.FailedCount != nil && e.SkippedCount != nil {
			add(": %d completed, %d failed, %d skipped", *e.CompletedCount, *e.FailedCount, *e.SkippedCount)
		}
		took()
	case "TASK_CLAIMED":
		add("wave %d, attempt %d", e.WaveNumber, e.AttemptNumber)
	case "AGENT_HEARTBEAT":
		var parts []string
		if e.ProgressPercent != nil {
			parts = append(parts, fmt.Sprintf("%d%%", *e.ProgressPercent))
		}
		if e.CurrentStep != nil {
			parts = append(parts, *e.CurrentStep)
		}
		if e.MemoryMb != nil {
			parts = append(parts, fmt.Sprintf("%d MB", *e.MemoryMb))
		}
		if e.CPUPercent != nil {
			parts = append(parts, fmt.Sprintf("%.1f%% CPU", *e.CPUPercent))
		}
		add("%s", strings.Join(parts, ", "))
	case "AGENT_TERMINATED":
		add("attempt %d: %s", e.AttemptNumber, e.TerminationReason)
	case "LOG_APPENDED":
		// One line per event: the first few log lines, quoted so that their
		// own spaces and separators stay readable.
		add("%s", plural(len(e.Lines), "line"))
		if e.FirstLine != nil && len(e.Lines) > 0 {
			add(" (%d-%d)", *e.FirstLine, *e.FirstLine+len(e.Lines)-1)
		}
		for i, l := range e.Lines {
			if i == watchLogLines {
				add(" +%d more", len(e.Lines)-i)
				break
			}
			add(" %q", l)
		}
	case "TEST_RESULT_RECORDED":
		add("%s test %d", e.Level, e.TestIndex)
		if e.TestName != nil {
			add(" %q", *e.TestName)
		}
		add(" %s", e.TestStatus)
		took()
	case "QUESTION_ASKED", "QUESTION_ANSWERED", "QUESTION_EXPIRED", "QUESTION_SKIPPED":
		if e.Question != nil {
			add("%q", e.Question.QuestionText)
		}
		switch e.Type {
		case "QUESTION_ANSWERED":
			add(": %q", e.Answer)
			if e.ByTimeout {
				add(" (by timeout)")
			}
		case "QUESTION_EXPIRED":
			add(": %s", e.TimeoutAction)
		case "QUESTION_SKIPPED":
			reason(e.Reason)
		}
	case "TASK_LIST_STATUS_CHANGED":
		add("list %s -> %s", e.ListFrom, e.ListTo)
		reason(e.Reason)
	case "SESSION_STATUS_CHANGED":
		add("session %s -> %s", e.SessionFrom, e.SessionTo)
	case "SESSION_STATE_SAVED":
		add("state v%d", e.Version)
	case "TODO_LIST_CREATED":
		add("%s", plural(e.ItemCount, "item"))
	case "TODO_ITEM_CHANGED":
		add("item %d %s -> %s", e.Position, e.ItemFrom, e.ItemTo)
	case "REACT_STEP_RECORDED":
		add("step %d", e.StepID)
		if e.Thought != nil {
			add(": %q", *e.Thought)
		}
		if e.Action != nil {
			add(" -> %s", *e.Action)
		}
		if e.Success != nil && !*e.Success {
			add(" (failed)")
		}
	case "LESSON_RECORDED":
		if e.ToolName != nil {
			add("%s, ", *e.ToolName)
		}
		if e.Confidence != nil {
			add("confidence %.2f", *e.Confidence)
		}
	}
	return b.String()
}

// plural is "1 line", "2 lines".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
