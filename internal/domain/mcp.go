package domain

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxCatalogName is the longest name of a catalog entity or parameter.
const MaxCatalogName = 200

// MCPTool is one tool of an MCP tools/list result, as the catalog keeps it.
type MCPTool struct {
	Name        string
	Description string
	// InputSchema is the tool's inputSchema in canonical form (CanonicalJSON);
	// nil when the tool has none.
	InputSchema JSON
	Parameters  []MCPParameter
}

// MCPParameter is one top-level property of a tool's input schema.
type MCPParameter struct {
	Name        string
	Description string
	Type        ParameterType
	Required    bool
	Schema      JSON // the property's schema, canonical
}

// ParseMCPTools parses the result of an MCP server's tools/list request: an
// object {"tools": [...]}, the whole JSON-RPC response {"result": {"tools":
// [...]}}, or a bare array of tools. Each tool is {name, description,
// inputSchema: {type: "object", properties: {...}, required: [...]}}; every
// top-level property becomes a parameter, in document order, its JSON Schema
// type mapped by ParameterTypeOf.
//
// Errors are BAD_USER_INPUT on field. Invalid JSON carries the line and column
// (1-based, in characters) in the message and in Details["line"],
// Details["column"]; a document that is JSON but not a tools/list result names
// the path at fault ("tools[2].inputSchema.properties").
func ParseMCPTools(field string, doc []byte) ([]MCPTool, error) {
	if err := checkJSONDocument(field, doc); err != nil {
		return nil, err
	}
	bad := func(format string, args ...any) error { return InputError(field, format, args...) }
	trimmed := bytes.TrimSpace(doc)
	var rawTools json.RawMessage
	switch {
	case len(trimmed) > 0 && trimmed[0] == '[':
		rawTools = trimmed
	case len(trimmed) > 0 && trimmed[0] == '{':
		var top struct {
			Tools  json.RawMessage `json:"tools"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(trimmed, &top); err != nil {
			return nil, bad("the document is not an MCP tools/list result: %s", typeErrorText(err))
		}
		switch {
		case top.Tools != nil:
			rawTools = top.Tools
		case top.Result != nil:
			var result struct {
				Tools json.RawMessage `json:"tools"`
			}
			if err := json.Unmarshal(top.Result, &result); err != nil || result.Tools == nil {
				return nil, bad("result has no tools list: expected {\"result\": {\"tools\": [...]}}")
			}
			rawTools = result.Tools
		case top.Error != nil:
			return nil, bad("the document is a JSON-RPC error response (%q), not a tools/list result", top.Error.Message)
		default:
			return nil, bad("the document has no tools: expected {\"tools\": [...]}, a JSON-RPC response with result.tools, or an array of tools")
		}
	default:
		return nil, bad("the document is not an MCP tools/list result: expected an object with tools or an array of tools")
	}
	var items []json.RawMessage
	if err := json.Unmarshal(rawTools, &items); err != nil {
		return nil, bad("tools must be an array")
	}
	out := make([]MCPTool, 0, len(items))
	seen := map[string]int{}
	for i, raw := range items {
		path := fmt.Sprintf("tools[%d]", i)
		t, err := parseMCPTool(path, raw)
		if err != nil {
			return nil, bad("%s", err)
		}
		if prev, dup := seen[t.Name]; dup {
			return nil, bad("%s: tool %q is listed twice (also at tools[%d])", path, t.Name, prev)
		}
		seen[t.Name] = i
		out = append(out, t)
	}
	return out, nil
}

func parseMCPTool(path string, raw json.RawMessage) (MCPTool, error) {
	var w struct {
		Name        *string         `json:"name"`
		Title       *string         `json:"title"`
		Description *string         `json:"description"`
		InputSchema json.RawMessage `json:"inputSchema"`
	}
	if bytes.TrimSpace(raw)[0] != '{' {
		return MCPTool{}, fmt.Errorf("%s must be an object", path)
	}
	if err := json.Unmarshal(raw, &w); err != nil {
		return MCPTool{}, fmt.Errorf("%s: %s", path, typeErrorText(err))
	}
	if w.Name == nil {
		return MCPTool{}, fmt.Errorf("%s has no name", path)
	}
	name, err := checkCatalogName(path+".name", *w.Name)
	if err != nil {
		return MCPTool{}, err
	}
	t := MCPTool{Name: name}
	switch {
	case w.Description != nil:
		t.Description = strings.TrimSpace(*w.Description)
	case w.Title != nil:
		t.Description = strings.TrimSpace(*w.Title)
	}
	if len(w.InputSchema) == 0 || string(w.InputSchema) == "null" {
		return t, nil
	}
	path += ".inputSchema"
	var schema map[string]json.RawMessage
	if err := json.Unmarshal(w.InputSchema, &schema); err != nil {
		return MCPTool{}, fmt.Errorf("%s must be a JSON Schema object", path)
	}
	if t.InputSchema, err = CanonicalJSON(w.InputSchema); err != nil {
		return MCPTool{}, fmt.Errorf("%s: %w", path, err)
	}
	if typ, ok := schema["type"]; ok {
		var s string
		if json.Unmarshal(typ, &s) != nil || s != "object" {
			return MCPTool{}, fmt.Errorf("%s.type must be \"object\": a tool's arguments are an object", path)
		}
	}
	required := map[string]bool{}
	if raw, ok := schema["required"]; ok && string(raw) != "null" {
		var names []string
		if err := json.Unmarshal(raw, &names); err != nil {
			return MCPTool{}, fmt.Errorf("%s.required must be an array of property names", path)
		}
		for _, n := range names {
			required[n] = true
		}
	}
	props, ok := schema["properties"]
	if !ok || string(props) == "null" {
		return t, nil
	}
	keys, values, err := orderedObject(props)
	if err != nil {
		return MCPTool{}, fmt.Errorf("%s.properties %w", path, err)
	}
	for i, key := range keys {
		ppath := fmt.Sprintf("%s.properties.%s", path, key)
		name, err := checkCatalogName(ppath, key)
		if err != nil {
			return MCPTool{}, err
		}
		var prop map[string]any
		dec := json.NewDecoder(bytes.NewReader(values[i]))
		dec.UseNumber()
		if err := dec.Decode(&prop); err != nil || prop == nil {
			return MCPTool{}, fmt.Errorf("%s must be a JSON Schema object", ppath)
		}
		canon, err := CanonicalJSON(values[i])
		if err != nil {
			return MCPTool{}, fmt.Errorf("%s: %w", ppath, err)
		}
		p := MCPParameter{Name: name, Type: ParameterTypeOf(prop), Required: required[key], Schema: canon}
		if d, ok := prop["description"].(string); ok {
			p.Description = strings.TrimSpace(d)
		} else if d, ok := prop["title"].(string); ok {
			p.Description = strings.TrimSpace(d)
		}
		t.Parameters = append(t.Parameters, p)
	}
	return t, nil
}

// ParameterTypeOf maps a property's JSON Schema to a parameter type:
// "string" STRING, "integer" INTEGER, "number" NUMBER, "boolean" BOOLEAN,
// "object" OBJECT, "array" ARRAY. A type list with "null" counts as its other
// member (["string", "null"] is STRING); ["integer", "number"] is NUMBER.
// Without a type the schema's shape decides: properties -> OBJECT, items ->
// ARRAY, enum or const -> the type of its values, anyOf/oneOf/allOf -> the
// type its branches agree on. Anything else — no type, an unknown type, or a
// union of different types — is OBJECT: such a parameter takes arbitrary JSON,
// and OBJECT is the catalog's type for a structured JSON value (STRING would
// claim a constraint the schema does not make).
func ParameterTypeOf(schema map[string]any) ParameterType {
	if t, ok := typeOfSchema(schema); ok {
		return t
	}
	return ParamObject
}

func typeOfSchema(schema map[string]any) (ParameterType, bool) {
	switch v := schema["type"].(type) {
	case string:
		return jsonType(v)
	case []any:
		var names []string
		for _, x := range v {
			if s, ok := x.(string); ok && s != "null" {
				names = append(names, s)
			}
		}
		return agree(names)
	}
	if _, ok := schema["properties"]; ok {
		return ParamObject, true
	}
	if _, ok := schema["items"]; ok {
		return ParamArray, true
	}
	if values, ok := schema["enum"].([]any); ok {
		return valuesType(values)
	}
	if c, ok := schema["const"]; ok {
		return valuesType([]any{c})
	}
	for _, key := range []string{"anyOf", "oneOf", "allOf"} {
		branches, ok := schema[key].([]any)
		if !ok {
			continue
		}
		var types []ParameterType
		for _, b := range branches {
			bm, ok := b.(map[string]any)
			if !ok {
				return "", false
			}
			if s, _ := bm["type"].(string); s == "null" {
				continue
			}
			t, ok := typeOfSchema(bm)
			if !ok {
				return "", false
			}
			types = append(types, t)
		}
		return agreeTypes(types)
	}
	return "", false
}

func jsonType(name string) (ParameterType, bool) {
	switch name {
	case "string":
		return ParamString, true
	case "integer":
		return ParamInteger, true
	case "number":
		return ParamNumber, true
	case "boolean":
		return ParamBoolean, true
	case "object":
		return ParamObject, true
	case "array":
		return ParamArray, true
	}
	return "", false
}

func agree(names []string) (ParameterType, bool) {
	var types []ParameterType
	for _, n := range names {
		t, ok := jsonType(n)
		if !ok {
			return "", false
		}
		types = append(types, t)
	}
	return agreeTypes(types)
}

// agreeTypes is the one type all of types are, counting INTEGER as a NUMBER
// when both occur.
func agreeTypes(types []ParameterType) (ParameterType, bool) {
	if len(types) == 0 {
		return "", false
	}
	out := types[0]
	for _, t := range types[1:] {
		switch {
		case t == out:
		case t.Feeds(out):
		case out.Feeds(t):
			out = t
		default:
			return "", false
		}
	}
	return out, true
}

func valuesType(values []any) (ParameterType, bool) {
	var types []ParameterType
	for _, v := range values {
		switch x := v.(type) {
		case nil:
			continue
		case string:
			types = append(types, ParamString)
		case bool:
			types = append(types, ParamBoolean)
		case json.Number:
			if _, err := x.Int64(); err == nil {
				types = append(types, ParamInteger)
			} else {
				types = append(types, ParamNumber)
			}
		case float64:
			types = append(types, ParamNumber)
		case map[string]any:
			types = append(types, ParamObject)
		case []any:
			types = append(types, ParamArray)
		}
	}
	return agreeTypes(types)
}

// orderedObject reads a JSON object's keys in document order with their values.
func orderedObject(raw json.RawMessage) ([]string, []json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, nil, errors.New("must be an object")
	}
	var (
		keys   []string
		values []json.RawMessage
		seen   = map[string]bool{}
	)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, errors.New("must be an object")
		}
		key := tok.(string) // object keys are strings
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, errors.New("must be an object")
		}
		if seen[key] {
			return nil, nil, fmt.Errorf("lists %q twice", key)
		}
		seen[key] = true
		keys, values = append(keys, key), append(values, v)
	}
	return keys, values, nil
}

// CanonicalJSON re-encodes a JSON value with sorted object keys, no
// insignificant space and numbers as written, so that two encodings of the
// same value (PostgreSQL's JSONB reformats what it stores) compare equal.
func CanonicalJSON(raw []byte) (JSON, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return JSON(bytes.TrimRight(buf.Bytes(), "\n")), nil
}

func checkCatalogName(path, s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", fmt.Errorf("%s must not be empty", path)
	}
	if utf8.RuneCountInString(s) > MaxCatalogName {
		return "", fmt.Errorf("%s is longer than %d characters", path, MaxCatalogName)
	}
	return s, nil
}

// typeErrorText describes a json.Unmarshal type error by the JSON path at fault.
func typeErrorText(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field != "" {
			return fmt.Sprintf("%s must be a %s, not a %s", te.Field, kindName(te.Type.Kind().String()), te.Value)
		}
		return fmt.Sprintf("expected a %s, found a %s", kindName(te.Type.Kind().String()), te.Value)
	}
	return err.Error()
}

func kindName(k string) string {
	switch k {
	case "ptr", "string":
		return "string"
	case "slice":
		return "array"
	case "map", "struct":
		return "object"
	}
	return k
}

// checkJSONDocument returns BAD_USER_INPUT on field with the line and column
// of the first syntax error of doc, if any; a document holding more than one
// value is refused at the start of the second.
func checkJSONDocument(field string, doc []byte) error {
	if len(bytes.TrimSpace(doc)) == 0 {
		return InputError(field, "%s is empty: expected a JSON document", field)
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	var v json.RawMessage
	err := dec.Decode(&v)
	if err == nil {
		off := dec.InputOffset()
		if rest := bytes.TrimSpace(doc[off:]); len(rest) > 0 {
			at := int64(len(doc) - len(bytes.TrimLeft(doc[off:], " \t\r\n")))
			line, col := Position(doc, at)
			return &Error{Code: CodeBadUserInput, Field: field,
				Message: fmt.Sprintf("invalid JSON at line %d, column %d: unexpected data after the document", line, col),
				Details: map[string]any{"line": line, "column": col}}
		}
		return nil
	}
	var se *json.SyntaxError
	offset := int64(len(doc))
	msg := err.Error()
	if errors.As(err, &se) {
		offset, msg = se.Offset-1, se.Error()
	} else if err.Error() == "unexpected EOF" {
		msg = "unexpected end of JSON input"
	}
	line, col := Position(doc, offset)
	return &Error{Code: CodeBadUserInput, Field: field,
		Message: fmt.Sprintf("invalid JSON at line %d, column %d: %s", line, col, msg),
		Details: map[string]any{"line": line, "column": col}}
}

// Position is the 1-based line and column (in characters) of byte offset in
// doc; an offset at or past the end is the position just after the last byte.
func Position(doc []byte, offset int64) (line, column int) {
	if offset < 0 {
		offset = 0
	}
	if offset > int64(len(doc)) {
		offset = int64(len(doc))
	}
	before := doc[:offset]
	line = bytes.Count(before, []byte("\n")) + 1
	start := bytes.LastIndexByte(before, '\n') + 1
	return line, utf8.RuneCount(before[start:]) + 1
}
