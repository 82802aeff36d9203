package mcp

import (
	"context"
	"errors"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/taskgraph/taskgraph/internal/client"
)

// toolError is a failed tool call as the model reads it: the API's error
// code, its message, the input field at fault and what to do next.
type toolError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
	// CurrentVersion is VERSION_CONFLICT's latest version, to retry with.
	CurrentVersion any    `json:"currentVersion,omitempty"`
	Hint           string `json:"hint,omitempty"`
}

func (e *toolError) Error() string {
	var b strings.Builder
	b.WriteString(e.Code)
	b.WriteString(": ")
	b.WriteString(e.Message)
	if e.Field != "" {
		b.WriteString(" (field ")
		b.WriteString(e.Field)
		b.WriteString(")")
	}
	if e.Hint != "" {
		b.WriteString("\n")
		b.WriteString(e.Hint)
	}
	return b.String()
}

// badInput is a BAD_USER_INPUT the tool finds before calling the API.
func badInput(field, msg string) *toolError {
	return &toolError{Code: "BAD_USER_INPUT", Message: msg, Field: field, Hint: hints["BAD_USER_INPUT"]}
}

// hints say what a model should do after each code.
var hints = map[string]string{
	"UNAUTHENTICATED":  "The token is missing, unknown or revoked: stop and ask the user for a valid Taskgraph token.",
	"FORBIDDEN":        "This token's role may not do this (an AGENT token only works tasks: claim, heartbeat, log, test results, complete, fail, ask). Do not retry; ask a person to do it.",
	"NOT_FOUND":        "The id does not exist or is not visible to this token: check it with list_projects, list_tasks or get_task.",
	"BAD_USER_INPUT":   "Fix the argument named in field and call again.",
	"CONFLICT":         "The request clashes with the current state (e.g. the list already has an active run, or the task is not in a state that allows this): read the current state (get_task, get_run) before deciding.",
	"VERSION_CONFLICT": "Someone changed it since you read it: read it again (currentVersion is the latest), merge your change and retry with that version.",
	"LEASE_LOST":       "You no longer hold this task (your lease expired, the run was paused or cancelled, or another agent took it over): STOP working on it, do not complete or fail it, and call claim_task for new work.",
	"LIMIT_EXCEEDED":   "A size or rate limit was hit: send less (fewer lines, shorter text, a smaller first) or wait and retry.",
	"INTERNAL":         "The server failed: wait a little and retry once; if it fails again, stop and report it.",
}

// asToolError turns what an operation returned into a toolError.
func asToolError(err error) *toolError {
	var te *toolError
	if errors.As(err, &te) {
		return te
	}
	var es client.Errors
	if errors.As(err, &es) && len(es) > 0 {
		e := es[0]
		out := &toolError{Code: e.Code(), Message: e.Message}
		if out.Code == "" {
			out.Code = "INTERNAL"
		}
		if f, ok := e.Extensions["field"].(string); ok {
			out.Field = f
		}
		if v, ok := e.Extensions["currentVersion"]; ok {
			out.CurrentVersion = v
		}
		if len(es) > 1 {
			msgs := make([]string, 0, len(es)-1)
			for _, more := range es[1:] {
				msgs = append(msgs, more.Error())
			}
			out.Message += " (also: " + strings.Join(msgs, "; ") + ")"
		}
		out.Hint = hints[out.Code]
		return out
	}
	var ce *client.Error
	if errors.As(err, &ce) {
		return asToolError(client.Errors{ce})
	}
	switch {
	case errors.Is(err, context.Canceled):
		return &toolError{Code: "CANCELLED", Message: "the call was cancelled"}
	case errors.Is(err, context.DeadlineExceeded):
		return &toolError{Code: "TIMEOUT", Message: "the call timed out"}
	}
	return &toolError{Code: "INTERNAL", Message: err.Error(), Hint: hints["INTERNAL"]}
}

// errorResult is the isError result of a failed call: the code first in its
// text, and the same as structuredContent.
func errorResult(err error) (*sdk.CallToolResult, any) {
	te := asToolError(err)
	return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: te.Error()}}},
		map[string]any{"error": te}
}
