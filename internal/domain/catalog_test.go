package domain_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/domain"
)

func TestParameterTypeFeeds(t *testing.T) {
	all := []domain.ParameterType{domain.ParamString, domain.ParamNumber, domain.ParamInteger, domain.ParamBoolean, domain.ParamObject, domain.ParamArray}
	for _, from := range all {
		for _, to := range all {
			want := from == to || (from == domain.ParamInteger && to == domain.ParamNumber)
			require.Equal(t, want, from.Feeds(to), "%s -> %s", from, to)
		}
	}
}

func TestParameterTypeOf(t *testing.T) {
	for _, tc := range []struct {
		schema string
		want   domain.ParameterType
	}{
		{`{"type": "string"}`, domain.ParamString},
		{`{"type": "integer"}`, domain.ParamInteger},
		{`{"type": "number"}`, domain.ParamNumber},
		{`{"type": "boolean"}`, domain.ParamBoolean},
		{`{"type": "object"}`, domain.ParamObject},
		{`{"type": "array", "items": {"type": "string"}}`, domain.ParamArray},
		{`{"type": ["string", "null"]}`, domain.ParamString},
		{`{"type": ["integer", "number"]}`, domain.ParamNumber},
		{`{"type": ["string", "integer"]}`, domain.ParamObject},
		{`{"properties": {"a": {}}}`, domain.ParamObject},
		{`{"items": {}}`, domain.ParamArray},
		{`{"enum": ["a", "b"]}`, domain.ParamString},
		{`{"enum": [1, 2]}`, domain.ParamInteger},
		{`{"enum": [1, 2.5]}`, domain.ParamNumber},
		{`{"const": true}`, domain.ParamBoolean},
		{`{"anyOf": [{"type": "string"}, {"type": "null"}]}`, domain.ParamString},
		{`{"oneOf": [{"type": "string"}, {"type": "object"}]}`, domain.ParamObject},
		{`{}`, domain.ParamObject},
		{`{"type": "date"}`, domain.ParamObject},
	} {
		var m map[string]any
		dec := json.NewDecoder(strings.NewReader(tc.schema))
		dec.UseNumber()
		require.NoError(t, dec.Decode(&m))
		require.Equal(t, tc.want, domain.ParameterTypeOf(m), tc.schema)
	}
}

func TestParseMCPTools(t *testing.T) {
	const doc = `{"tools": [
  {"name": "b_tool", "description": "B", "inputSchema": {"type": "object",
    "properties": {"z": {"type": "string", "description": "last letter"}, "a": {"type": "array", "items": {"type": "object"}}},
    "required": ["z"]}},
  {"name": "a_tool", "title": "Titled", "inputSchema": {"type": "object"}},
  {"name": "no_schema"}
]}`
	tools, err := domain.ParseMCPTools("toolsJson", []byte(doc))
	require.NoError(t, err)
	require.Len(t, tools, 3)
	require.Equal(t, "b_tool", tools[0].Name)
	require.Equal(t, []string{"z", "a"}, []string{tools[0].Parameters[0].Name, tools[0].Parameters[1].Name}, "document order")
	require.True(t, tools[0].Parameters[0].Required)
	require.Equal(t, "last letter", tools[0].Parameters[0].Description)
	require.Equal(t, domain.ParamArray, tools[0].Parameters[1].Type)
	require.JSONEq(t, `{"type": "array", "items": {"type": "object"}}`, string(tools[0].Parameters[1].Schema))
	require.Equal(t, "Titled", tools[1].Description, "title stands in for a missing description")
	require.Nil(t, tools[2].InputSchema)

	for _, wrapped := range []string{`[{"name": "x"}]`, `{"jsonrpc": "2.0", "id": 7, "result": {"tools": [{"name": "x"}]}}`} {
		got, err := domain.ParseMCPTools("f", []byte(wrapped))
		require.NoError(t, err, wrapped)
		require.Equal(t, "x", got[0].Name)
	}

	for _, tc := range []struct {
		doc, says    string
		line, column int
	}{
		{"{\"tools\": [\n  {\"name\": 1,}\n]}", "invalid JSON at line 2, column 14", 2, 14},
		{"[{\"name\": \"é\", x}]", "line 1, column 16", 1, 16}, // columns count characters, not bytes
		{"[] []", "unexpected data after the document", 1, 4},
	} {
		_, err := domain.ParseMCPTools("toolsJson", []byte(tc.doc))
		e, ok := domain.AsError(err)
		require.True(t, ok, "%v", err)
		require.Equal(t, domain.CodeBadUserInput, e.Code)
		require.Equal(t, "toolsJson", e.Field)
		require.Contains(t, e.Message, tc.says)
		require.Equal(t, tc.line, e.Details["line"], tc.doc)
		require.Equal(t, tc.column, e.Details["column"], tc.doc)
	}
	for _, tc := range []struct{ doc, says string }{
		{`{"tools": [{"name": ""}]}`, "tools[0].name must not be empty"},
		{`{"tools": [{"name": 5}]}`, "tools[0]"},
		{`{"tools": [{"name": "a"}, {"name": "a"}]}`, "listed twice"},
		{`{"tools": [{"name": "a", "inputSchema": {"type": "object", "properties": {"p": 1}}}]}`, "tools[0].inputSchema.properties.p must be a JSON Schema object"},
		{`{"tools": [{"name": "a", "inputSchema": {"type": "object", "required": "p"}}]}`, "required must be an array"},
		{`{"error": {"code": -32601, "message": "Method not found"}, "jsonrpc": "2.0"}`, "Method not found"},
		{`"tools"`, "not an MCP tools/list result"},
	} {
		_, err := domain.ParseMCPTools("toolsJson", []byte(tc.doc))
		require.Error(t, err, tc.doc)
		require.Contains(t, err.Error(), tc.says, tc.doc)
		require.Equal(t, domain.CodeBadUserInput, domain.ErrorCode(err))
	}
}

func TestCheckJSONObject(t *testing.T) {
	require.NoError(t, domain.CheckJSONObject([]byte(`{"a": [1, {"b": null}]}`)))
	for line, says := range map[string]string{
		``:            "empty",
		`   `:         "empty",
		`[1]`:         "not an object",
		`"s"`:         "not an object",
		`{"a": 1`:     "invalid JSON",
		`{"a": nope}`: "column 8",
	} {
		err := domain.CheckJSONObject([]byte(line))
		require.Error(t, err, line)
		require.Contains(t, err.Error(), says, line)
	}
	if raceEnabled {
		return // allocation counts are not deterministic under -race (see raceEnabled)
	}
	line := []byte(`{"t": 1, "type": "click", "x": [1, 2, 3]}`)
	allocs := testing.AllocsPerRun(100, func() { _ = domain.CheckJSONObject(line) })
	require.Zero(t, allocs, "a valid line costs no allocation")
}

func TestCheckConversation(t *testing.T) {
	mapped := func(name string) bool { return name == "send" }
	n, err := domain.CheckConversation([]byte(`{"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": [{"type": "text", "text": "t"}]},
		{"role": "assistant", "content": null, "tool_calls": [{"id": "1", "type": "function", "function": {"name": "send", "arguments": "{}"}}]},
		{"role": "tool", "tool_call_id": "1", "content": "ok"}, {"role": "assistant", "content": "done"}], "extra": 1}`), mapped)
	require.NoError(t, err)
	require.Equal(t, 5, n)
	for line, says := range map[string]string{
		`{"messages": [{"role": "assistant", "content": "x", "tool_calls": [{"function": {"name": "rm", "arguments": {}}}]}]}`:  `names tool "rm"`,
		`{"messages": [{"role": "assistant", "tool_calls": [{"function": {"arguments": "{}"}}]}]}`:                              "no function name",
		`{"messages": [{"role": "assistant", "content": "x", "tool_calls": [{"function": {"name": "send", "arguments": 3}}]}]}`: "arguments",
		`{"messages": [{"role": "assistant"}]}`:                "no content",
		`{"messages": [{"content": "x"}]}`:                     "no role",
		`{"messages": [{"role": 1, "content": "x"}]}`:          "role must be a string",
		`{"messages": [{"role": "bot", "content": "x"}]}`:      `role "bot"`,
		`{"messages": ["hi"]}`:                                 "message 1 is not an object",
		`{"messages": {}}`:                                     "list of messages",
		`{"messages": [{"role": "tool", "content": {}}]}`:      "content must be",
		`{"messages": [{"role": "user", "tool_calls": null}]}`: "no content",
	} {
		_, err := domain.CheckConversation([]byte(line), mapped)
		require.Error(t, err, line)
		require.Contains(t, err.Error(), says, line)
	}
}

func TestExampleTransitions(t *testing.T) {
	ok := map[[2]domain.ExampleStatus]bool{
		{domain.ExamplePending, domain.ExampleProcessing}:   true,
		{domain.ExamplePending, domain.ExampleFailed}:       true,
		{domain.ExampleProcessing, domain.ExampleCompleted}: true,
		{domain.ExampleProcessing, domain.ExampleFailed}:    true,
	}
	all := []domain.ExampleStatus{domain.ExamplePending, domain.ExampleProcessing, domain.ExampleCompleted, domain.ExampleFailed}
	for _, from := range all {
		for _, to := range all {
			err := domain.CheckExampleTransition(from, to)
			if ok[[2]domain.ExampleStatus{from, to}] {
				require.NoError(t, err, "%s -> %s", from, to)
				continue
			}
			e, isErr := domain.AsError(err)
			require.True(t, isErr, "%s -> %s", from, to)
			require.Equal(t, domain.CodeInvalidTransition, e.Code)
			require.Equal(t, string(from), e.Details["from"])
			require.Equal(t, string(to), e.Details["to"])
		}
	}
}
