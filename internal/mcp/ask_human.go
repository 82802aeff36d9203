package mcp

import (
	"context"
	"fmt"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/taskgraph/taskgraph/internal/domain"
)

type askHumanIn struct {
	AgentID        string   `json:"agentId,omitempty" jsonschema:"Your agentId, when the question is about your claimed task (your lease is kept alive while you wait)."`
	TaskID         string   `json:"taskId,omitempty" jsonschema:"Or the task the question is about (id or display id), when you hold no claim."`
	Question       string   `json:"question" jsonschema:"The question, self-contained: the person reading it has not seen your context."`
	Options        []string `json:"options,omitempty" jsonschema:"The answers to choose from; empty: a free-form answer."`
	DefaultAnswer  string   `json:"defaultAnswer,omitempty" jsonschema:"The answer taken when nobody answers in time (one of options, when given); without it the question just expires."`
	TimeoutSeconds int      `json:"timeoutSeconds,omitempty" jsonschema:"How long to wait for an answer, 1-3600 seconds (default 300); the question expires then."`
}

// Bounds of ask_human's wait.
const (
	defaultAskTimeout = 300
	maxAskTimeout     = 3600
	// askGrace is how long past its expiry ask_human still waits for the
	// server's sweep to expire the question (it sweeps every second by
	// default).
	askGrace = 10 * time.Second
)

// askedQuestion is a question as the API reads it.
type askedQuestion struct {
	ID                string
	Status            string
	Answer            *string
	AnsweredByTimeout bool
	TimeoutAction     string
}

const questionFields = `id status answer answeredByTimeout timeoutAction`

// addAskHuman registers ask_human. It waits by polling the question (every
// Options.PollInterval, one small read): the same document works in process
// and over HTTP, a wait survives a dropped connection by construction, and
// the question's status is the one truth (answered by a person, through
// chat, by timeout with its default, expired or skipped by the sweep on any
// replica). Between polls it sends a progress notification when the client
// asked for them (a progressToken), and every Options.HeartbeatEvery it
// heartbeats the asking agent, whose model is blocked in this call and
// cannot. Cancelling the call ends the wait; the question stays open until it
// expires (an AGENT token may not skip it).
func (t *tools) addAskHuman(s *sdk.Server) {
	add(s, t, &sdk.Tool{Name: "ask_human", Title: "Ask a person", Annotations: writes(false),
		Description: `Asks the people running the project a question and waits for the answer (up to timeoutSeconds), sending progress notifications while it waits. Use it when you need a decision you must not make alone: an ambiguous requirement, a risky or destructive change, a choice between designs.
Give agentId (your claimed task; your lease is kept alive while you wait) or taskId. Offer options when the answer is a choice, and a defaultAnswer to proceed with if nobody answers.
Returns {questionId, status, answer, answeredByTimeout, timeoutAction, advice}: status ANSWERED (act on answer; answeredByTimeout true means it is your defaultAnswer), EXPIRED (nobody answered: decide conservatively, or fail_task with retryable true), SKIPPED (a person declined: decide yourself), or PENDING with timedOut true (still open: you may call get_task and go on, the answer will not come back to you).` + leaseNote},
		t.askHuman,
		maxLen(maxID, "agentId", "taskId"), maxLen(domain.MaxQuestionText, "question"),
		maxItems(domain.MaxQuestionOptions, "options"), maxLen(domain.MaxQuestionOptionValue, "options", "defaultAnswer"),
		between("timeoutSeconds", 0, maxAskTimeout))
}

func (t *tools) askHuman(ctx context.Context, c *call, in askHumanIn) (any, error) {
	if (in.AgentID == "") == (in.TaskID == "") {
		return nil, badInput("agentId", "give exactly one of agentId and taskId")
	}
	timeout := in.TimeoutSeconds
	if timeout == 0 {
		timeout = defaultAskTimeout
	}
	input := vars{"questionType": "DECISION", "questionText": in.Question, "timeoutAction": "EXPIRE",
		"expiresAt": time.Now().Add(time.Duration(timeout) * time.Second).UTC().Format(time.RFC3339Nano)}
	if in.AgentID != "" {
		input["agentId"] = in.AgentID
	} else {
		id, err := c.taskID(ctx, "taskId", in.TaskID)
		if err != nil {
			return nil, err
		}
		input["taskId"] = id
	}
	if len(in.Options) > 0 {
		opts := make([]map[string]any, len(in.Options))
		for i, o := range in.Options {
			opts[i] = map[string]any{"value": o, "label": o}
		}
		input["options"] = opts
	}
	if in.DefaultAnswer != "" {
		input["defaultAnswer"] = in.DefaultAnswer
		input["timeoutAction"] = "USE_DEFAULT"
	}
	var asked struct {
		AskQuestion struct{ Question askedQuestion }
	}
	if err := c.do(ctx, `mutation($in: AskQuestionInput!) { askQuestion(input: $in) { question { `+questionFields+` } } }`,
		vars{"in": map[string]any(input)}, &asked); err != nil {
		return nil, err
	}
	q := asked.AskQuestion.Question
	w := &asker{t: t, c: c, agentID: in.AgentID, question: q.ID, timeout: time.Duration(timeout) * time.Second}
	return w.wait(ctx, q)
}

// asker waits for one question's outcome.
type asker struct {
	t        *tools
	c        *call
	agentID  string
	question string
	timeout  time.Duration
}

func (w *asker) wait(ctx context.Context, q askedQuestion) (any, error) {
	start := time.Now()
	deadline := start.Add(w.timeout + askGrace)
	lastBeat := start
	poll := time.NewTicker(w.t.opts.PollInterval)
	defer poll.Stop()
	for q.Status == "PENDING" {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-poll.C:
			// The clock, not the tick's time: a tick received late carries
			// the time it was due, which may not follow the last beat's.
			now := time.Now()
			w.progress(ctx, now.Sub(start))
			if w.agentID != "" && now.Sub(lastBeat) >= w.t.opts.HeartbeatEvery {
				lastBeat = now
				if stop, err := w.heartbeat(ctx); err != nil || stop != nil {
					return stop, err
				}
			}
			var out struct{ Question *askedQuestion }
			if err := w.c.do(ctx, `query($q: ID!) { question(id: $q) { `+questionFields+` } }`, vars{"q": w.question}, &out); err != nil {
				return nil, err
			}
			if out.Question == nil {
				return nil, notFound("questionId", "question "+w.question)
			}
			q = *out.Question
			if q.Status == "PENDING" && now.After(deadline) {
				return map[string]any{"questionId": q.ID, "status": q.Status, "timedOut": true, "timeoutAction": q.TimeoutAction,
					"advice": "Nobody answered in time and the question is still open: decide conservatively yourself, or fail_task with retryable true."}, nil
			}
		}
	}
	res := map[string]any{"questionId": q.ID, "status": q.Status, "answer": q.Answer, "answeredByTimeout": q.AnsweredByTimeout,
		"timeoutAction": q.TimeoutAction}
	switch {
	case q.Status == "ANSWERED" && q.AnsweredByTimeout:
		res["advice"] = "Nobody answered in time: proceed with your default answer."
	case q.Status == "ANSWERED":
		res["advice"] = "A person answered: act on the answer."
	case q.Status == "EXPIRED":
		res["advice"] = "Nobody answered in time: decide conservatively yourself, or fail_task with retryable true."
	case q.Status == "SKIPPED":
		res["advice"] = "The question was skipped (by a person, or because the run ended): decide yourself, or stop if the run is over."
	}
	return res, nil
}

// progress sends a progress notification when the client asked for them.
func (w *asker) progress(ctx context.Context, waited time.Duration) {
	token := w.c.req.Params.GetProgressToken()
	if token == nil || w.c.req.Session == nil {
		return
	}
	left := w.timeout - waited
	if left < 0 {
		left = 0
	}
	_ = w.c.req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{
		ProgressToken: token,
		Progress:      waited.Seconds(),
		Total:         w.timeout.Seconds(),
		Message:       fmt.Sprintf("waiting for a person to answer question %s (%ds left)", w.question, int(left.Seconds())),
	})
}

// heartbeat keeps the asking agent's lease while its model waits here. A
// CANCEL directive ends the wait with a result; LEASE_LOST with the error.
func (w *asker) heartbeat(ctx context.Context) (any, error) {
	var out struct{ Heartbeat struct{ Directive string } }
	err := w.c.do(ctx, `mutation($in: HeartbeatInput!) { heartbeat(input: $in) { directive } }`,
		vars{"in": map[string]any{"agentId": w.agentID, "currentStep": "waiting for a person to answer a question"}}, &out)
	if err != nil {
		return nil, err
	}
	if out.Heartbeat.Directive == "CANCEL" {
		return map[string]any{"questionId": w.question, "status": "PENDING", "directive": "CANCEL", "advice": directiveAdvice["CANCEL"]}, nil
	}
	return nil, nil
}
