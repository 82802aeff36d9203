package domain

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Line checks of the JSONL files the catalog stores: a trace's
// input_events.jsonl (every line a JSON object) and an example's
// messages.jsonl (every line a conversation in the chat completion format).
// They return plain errors describing the line; the caller adds the line number.

// CheckJSONObject reports whether line (without its newline) is one JSON
// object. It does not allocate for a valid line, so that checking a large
// trace stays cheap.
func CheckJSONObject(line []byte) error {
	trimmed := bytes.TrimLeft(line, " \t\r")
	if len(trimmed) == 0 {
		return errors.New("the line is empty; every line must be a JSON object")
	}
	if !json.Valid(line) {
		return jsonLineError(line)
	}
	if trimmed[0] != '{' {
		return errors.New("the line is JSON but not an object; every line must be a JSON object")
	}
	return nil
}

// jsonLineError describes why line is not valid JSON, with the column.
func jsonLineError(line []byte) error {
	var v any
	err := json.Unmarshal(line, &v)
	var se *json.SyntaxError
	if errors.As(err, &se) {
		_, col := Position(line, se.Offset-1)
		return fmt.Errorf("invalid JSON at column %d: %s", col, se.Error())
	}
	if err != nil {
		return fmt.Errorf("invalid JSON: %s", err)
	}
	return errors.New("invalid JSON")
}

// ChatRoles are the roles of the chat completion format.
var ChatRoles = []string{"system", "user", "assistant", "tool"}

// chat is one line of messages.jsonl.
type chat struct {
	Messages *[]json.RawMessage `json:"messages"`
}

type chatMessage struct {
	Role      *string         `json:"role"`
	Content   json.RawMessage `json:"content"`
	ToolCalls json.RawMessage `json:"tool_calls"`
}

type chatToolCall struct {
	Function *struct {
		Name      *string         `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

// CheckConversation validates one line of messages.jsonl: a JSON object whose
// "messages" is a non-empty list of {role, content, tool_calls?}, role one of
// system, user, assistant, tool; content a string, a list of content parts, or
// null/absent on an assistant message that calls tools; tool_calls only on
// assistant messages, each {function: {name, arguments}} naming a tool for
// which mapped returns true. Other keys are kept and not checked. It returns
// the number of messages.
func CheckConversation(line []byte, mapped func(tool string) bool) (int, error) {
	if err := CheckJSONObject(line); err != nil {
		return 0, err
	}
	var c chat
	if err := json.Unmarshal(line, &c); err != nil {
		return 0, fmt.Errorf("messages must be a list of messages")
	}
	if c.Messages == nil {
		return 0, errors.New(`the line has no "messages": every line is {"messages": [{"role": …, "content": …}, …]}`)
	}
	if len(*c.Messages) == 0 {
		return 0, errors.New("messages is empty")
	}
	for i, raw := range *c.Messages {
		n := i + 1
		var m chatMessage
		if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' {
			return 0, fmt.Errorf("message %d is not an object", n)
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			return 0, fmt.Errorf("message %d: role must be a string", n)
		}
		if m.Role == nil {
			return 0, fmt.Errorf("message %d has no role", n)
		}
		role := *m.Role
		if !validRole(role) {
			return 0, fmt.Errorf("message %d: role %q is not one of system, user, assistant, tool", n, role)
		}
		calls, err := toolCalls(n, role, m.ToolCalls)
		if err != nil {
			return 0, err
		}
		switch content := bytes.TrimSpace(m.Content); {
		case len(content) == 0 || string(content) == "null":
			if role != "assistant" || len(calls) == 0 {
				return 0, fmt.Errorf("message %d (%s) has no content", n, role)
			}
		case content[0] == '"' || content[0] == '[':
		default:
			return 0, fmt.Errorf("message %d: content must be a string or a list of content parts", n)
		}
		for j, name := range calls {
			if !mapped(name) {
				return 0, fmt.Errorf("message %d: tool call %d names tool %q, which the example's action tool map does not map", n, j+1, name)
			}
		}
	}
	return len(*c.Messages), nil
}

func validRole(r string) bool {
	for _, x := range ChatRoles {
		if r == x {
			return true
		}
	}
	return false
}

// toolCalls returns the tool names a message's tool_calls name.
func toolCalls(n int, role string, raw json.RawMessage) ([]string, error) {
	if t := bytes.TrimSpace(raw); len(t) == 0 || string(t) == "null" {
		return nil, nil
	}
	if role != "assistant" {
		return nil, fmt.Errorf("message %d: only assistant messages make tool calls, this one is %s", n, role)
	}
	var calls []chatToolCall
	if err := json.Unmarshal(raw, &calls); err != nil {
		return nil, fmt.Errorf("message %d: tool_calls must be a list of {function: {name, arguments}}", n)
	}
	names := make([]string, len(calls))
	for j, c := range calls {
		if c.Function == nil || c.Function.Name == nil || *c.Function.Name == "" {
			return nil, fmt.Errorf("message %d: tool call %d has no function name", n, j+1)
		}
		if a := bytes.TrimSpace(c.Function.Arguments); len(a) > 0 && a[0] != '"' && a[0] != '{' {
			return nil, fmt.Errorf("message %d: tool call %d: arguments must be a JSON-encoded string or an object", n, j+1)
		}
		names[j] = *c.Function.Name
	}
	return names, nil
}
