package domain

import (
	"bytes"
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"io"
)

// Strings is a list of strings kept in one JSON column (JSONB / TEXT).
type Strings []string

// Value stores the list as a JSON array; nil is stored as [].
func (s Strings) Value() (driver.Value, error) {
	if s == nil {
		return "[]", nil
	}
	b, err := json.Marshal([]string(s))
	return string(b), err
}

// Scan reads a JSON array column.
func (s *Strings) Scan(src any) error {
	b, err := jsonBytes(src)
	if err != nil || b == nil {
		*s = Strings{}
		return err
	}
	var out []string
	if err := json.Unmarshal(b, &out); err != nil {
		return fmt.Errorf("scan Strings: %w", err)
	}
	if out == nil {
		out = []string{}
	}
	*s = out
	return nil
}

// JSON is free-form JSON: a column value and the GraphQL JSON scalar.
type JSON json.RawMessage

// Value stores the raw JSON; empty is stored as null.
func (j JSON) Value() (driver.Value, error) {
	if len(j) == 0 {
		return nil, nil
	}
	return string(j), nil
}

// Scan reads a JSON column.
func (j *JSON) Scan(src any) error {
	b, err := jsonBytes(src)
	if err != nil {
		return err
	}
	if b == nil {
		*j = nil
		return nil
	}
	*j = append(JSON(nil), b...)
	return nil
}

// MarshalGQL writes the JSON as the scalar's value.
func (j JSON) MarshalGQL(w io.Writer) {
	if len(j) == 0 {
		_, _ = w.Write([]byte("null"))
		return
	}
	_, _ = w.Write(j)
}

// MaxJSONDepth bounds how deeply a JSON input (session state, payloads,
// messages, configs) may nest, the same on both databases: SQLite's JSON
// functions refuse more than 1,000 levels, PostgreSQL takes more, and no
// record of agent work needs more than a few dozen.
const MaxJSONDepth = 64

// jsonDepth is how deeply v nests (a scalar is 0), counted up to limit+1.
func jsonDepth(v any, limit int) int {
	if limit < 0 {
		return 1
	}
	d := 0
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			d = max(d, jsonDepth(e, limit-1))
		}
		return d + 1
	case []any:
		for _, e := range x {
			d = max(d, jsonDepth(e, limit-1))
		}
		return d + 1
	}
	return 0
}

// UnmarshalGQL accepts any GraphQL input value nested at most MaxJSONDepth
// levels and keeps it as JSON.
func (j *JSON) UnmarshalGQL(v any) error {
	if jsonDepth(v, MaxJSONDepth) > MaxJSONDepth {
		return &Error{Code: CodeBadUserInput, Message: fmt.Sprintf("JSON nested more than %d levels deep", MaxJSONDepth),
			Details: map[string]any{"maxDepth": MaxJSONDepth}}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("JSON scalar: %w", err)
	}
	*j = b
	return nil
}

func jsonBytes(src any) ([]byte, error) {
	switch v := src.(type) {
	case nil:
		return nil, nil
	case []byte:
		return bytes.Clone(v), nil
	case string:
		return []byte(v), nil
	default:
		return nil, fmt.Errorf("cannot scan %T as JSON", src)
	}
}

// jsonValue stores v, a list or an object, as a JSON column value (a nil
// list as []).
func jsonValue(v any) (driver.Value, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	if string(b) == "null" {
		return "[]", nil
	}
	return string(b), nil
}

// jsonScan reads a JSON column into dst (NULL leaves dst as it is).
func jsonScan(src, dst any) error {
	b, err := jsonBytes(src)
	if err != nil || b == nil {
		return err
	}
	return json.Unmarshal(b, dst)
}
