package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// canonicalRead is a nested read's answer in a form every server's answer
// to the same shape shares, one line per task in list order, so that two
// answers compare row for row:
//
//   - PostGraphile's wrappers go: a connection ({"nodes": [...]}) is its
//     list, a list item ({"task": {...}}) its task;
//   - ids go (Taskgraph's are global ids, PostGraphile's and the floor's
//     the rows' UUIDs; display ids identify the rows);
//   - keys are sorted, numbers and times written one way (a time in UTC);
//   - children (lists below the tasks) keep their order when ordered,
//     else are sorted (servers order them differently).
//
// It also counts the objects (tasks, relationships, targets, impacts) and
// the scalar values the answer holds.
type canonicalRead struct {
	lines   []string // one per task
	objects int
	values  int
}

func (c *canonicalRead) String() string { return strings.Join(c.lines, "\n") + "\n" }

// canonicalize reads an answer to a read shape.
func canonicalize(body []byte, ordered bool) (*canonicalRead, error) {
	var d struct {
		TaskList *struct {
			Tasks struct {
				Nodes []any `json:"nodes"`
			} `json:"tasks"`
		} `json:"taskList"`
	}
	if err := decodeData(body, &d); err != nil {
		return nil, err
	}
	if d.TaskList == nil {
		return nil, fmt.Errorf("taskList is null")
	}
	c := &canonicalRead{}
	for _, n := range d.TaskList.Tasks.Nodes {
		if m, ok := n.(map[string]any); ok && len(m) == 1 && m["task"] != nil {
			n = m["task"] // PostGraphile's list item
		}
		var b strings.Builder
		c.write(&b, n, ordered)
		c.lines = append(c.lines, b.String())
	}
	return c, nil
}

func (c *canonicalRead) write(b *strings.Builder, v any, ordered bool) {
	switch v := v.(type) {
	case map[string]any:
		if nodes, ok := v["nodes"].([]any); ok && len(v) == 1 {
			c.write(b, nodes, ordered)
			return
		}
		c.objects++
		keys := make([]string, 0, len(v))
		for k := range v {
			if k != "id" {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(k)
			b.WriteByte(':')
			c.write(b, v[k], ordered)
		}
		b.WriteByte('}')
	case []any:
		items := make([]string, len(v))
		for i, e := range v {
			var eb strings.Builder
			c.write(&eb, e, ordered)
			items[i] = eb.String()
		}
		if !ordered {
			slices.Sort(items)
		}
		b.WriteByte('[')
		b.WriteString(strings.Join(items, ","))
		b.WriteByte(']')
	default:
		c.values++
		b.WriteString(canonicalScalar(v))
	}
}

// canonicalScalar writes a JSON scalar: numbers by value (1 and 1.0 are
// the same), times as RFC 3339 in UTC, other strings quoted.
func canonicalScalar(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return strconv.FormatBool(v)
	case json.Number:
		if f, err := v.Float64(); err == nil {
			return strconv.FormatFloat(f, 'g', -1, 64)
		}
		return v.String()
	case string:
		if len(v) >= 20 && v[4] == '-' && v[10] == 'T' {
			if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
				return t.UTC().Format(time.RFC3339Nano)
			}
		}
		return strconv.Quote(v)
	default:
		return fmt.Sprintf("%v", v)
	}
}

// decodeNumbers is decodeData keeping numbers as written.
func decodeNumbers(raw json.RawMessage, into any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	return dec.Decode(into)
}
