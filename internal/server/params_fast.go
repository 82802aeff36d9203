package server

import (
	"encoding/json"
	"unicode/utf8"

	"github.com/99designs/gqlgen/graphql"
)

// fastParams decodes the usual POST body — a JSON object whose query is a
// string and whose variables, operationName and extensions, when present,
// are of their types — in one pass over the body, into the parameters
// decodeParams would give: the same keys matched exactly, the last of a
// repeated key winning, numbers as json.Number, objects as map[string]any,
// arrays as []any, and only the body's first JSON value read. It answers
// false for anything else, and for what it leaves to encoding/json rather
// than repeat its rules: a \u escape, a byte that is not valid UTF-8, a
// control character in a string, nesting deeper than maxFastDepth, a
// syntax error. decodeParams then decodes the body as before.
//
// Why: encoding/json scans a value twice (to find its end, then to decode
// it) and allocates a string for every number. An embedding of 768 values
// took 170 µs to decode, a tenth of a create; here the strings and numbers
// of the body are slices of one copy of it.
func fastParams(body []byte) (*graphql.RawParams, bool) {
	r := fastReader{s: string(body)}
	r.space()
	var p graphql.RawParams
	var query *string
	ok := r.members(func(key string) bool {
		var ok bool
		switch key {
		case "query":
			var s string
			if s, ok = r.str(); ok {
				query = &s
			}
		case "operationName":
			p.OperationName, ok = "", true
			if !r.null() {
				p.OperationName, ok = r.str()
			}
		case "variables", "extensions":
			var m map[string]any
			ok = true
			if !r.null() {
				m, ok = r.object(0)
			}
			if key == "variables" {
				p.Variables = m
			} else {
				p.Extensions = m
			}
		default:
			_, ok = r.value(0)
		}
		return ok
	})
	if !ok || query == nil {
		return nil, false
	}
	p.Query = *query
	return &p, true
}

// maxFastDepth is the nesting fastParams decodes; deeper goes to
// encoding/json.
const maxFastDepth = 64

// fastReader reads JSON from s at i.
type fastReader struct {
	s string
	i int
}

// space skips JSON whitespace.
func (r *fastReader) space() {
	for r.i < len(r.s) {
		switch r.s[r.i] {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return
		}
	}
}

// spaceThen skips whitespace and reports true, for use in conditions.
func (r *fastReader) spaceThen() bool {
	r.space()
	return true
}

// eat consumes c if it comes next.
func (r *fastReader) eat(c byte) bool {
	if r.i < len(r.s) && r.s[r.i] == c {
		r.i++
		return true
	}
	return false
}

// literal consumes word if it comes next.
func (r *fastReader) literal(word string) bool {
	if len(r.s)-r.i >= len(word) && r.s[r.i:r.i+len(word)] == word {
		r.i += len(word)
		return true
	}
	return false
}

func (r *fastReader) null() bool { return r.literal("null") }

// value reads any JSON value.
func (r *fastReader) value(depth int) (any, bool) {
	if r.i >= len(r.s) {
		return nil, false
	}
	switch c := r.s[r.i]; {
	case c == '"':
		return r.str()
	case c == '{':
		return r.object(depth)
	case c == '[':
		return r.array(depth)
	case c == '-' || (c >= '0' && c <= '9'):
		return r.number()
	case r.literal("true"):
		return true, true
	case r.literal("false"):
		return false, true
	case r.null():
		return nil, true
	}
	return nil, false
}

// object reads a JSON object (r at its '{') into a map.
func (r *fastReader) object(depth int) (map[string]any, bool) {
	if depth >= maxFastDepth {
		return nil, false
	}
	m := map[string]any{}
	ok := r.members(func(key string) bool {
		v, ok := r.value(depth + 1)
		m[key] = v
		return ok
	})
	return m, ok
}

// members reads a JSON object (r at its '{'), calling member with r at each
// member's value; member reads the value and reports whether it could.
func (r *fastReader) members(member func(key string) bool) bool {
	if !r.eat('{') {
		return false
	}
	for first := true; ; first = false {
		r.space()
		if r.eat('}') {
			return true
		}
		if !first && !(r.eat(',') && r.spaceThen()) {
			return false
		}
		key, ok := r.str()
		if !ok {
			return false
		}
		r.space()
		if !r.eat(':') {
			return false
		}
		r.space()
		if !member(key) {
			return false
		}
	}
}

// array reads a JSON array (r at its '[').
func (r *fastReader) array(depth int) ([]any, bool) {
	if depth >= maxFastDepth || !r.eat('[') {
		return nil, false
	}
	list := []any{}
	for first := true; ; first = false {
		r.space()
		if r.eat(']') {
			return list, true
		}
		if !first && !(r.eat(',') && r.spaceThen()) {
			return nil, false
		}
		v, ok := r.value(depth + 1)
		if !ok {
			return nil, false
		}
		list = append(list, v)
	}
}

// number reads a JSON number as the json.Number of its text, checking its
// grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (r *fastReader) number() (json.Number, bool) {
	s, start := r.s, r.i
	i := start
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	default:
		if i = digits(s, i); i == start || s[i-1] == '-' {
			return "", false
		}
	}
	if i < len(s) && s[i] == '.' {
		j := digits(s, i+1)
		if j == i+1 {
			return "", false
		}
		i = j
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		j := digits(s, i)
		if j == i {
			return "", false
		}
		i = j
	}
	r.i = i
	return json.Number(s[start:i]), true
}

// digits returns the index after the decimal digits of s from i.
func digits(s string, i int) int {
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}

// str reads a JSON string (r at its '"'). A string without escapes is a
// slice of the body; one with the two-character escapes is unescaped into a
// new one; a \u escape, a control character or invalid UTF-8 answers false.
func (r *fastReader) str() (string, bool) {
	if !r.eat('"') {
		return "", false
	}
	start := r.i
	ascii := true
	for r.i < len(r.s) {
		switch c := r.s[r.i]; {
		case c == '"':
			s := r.s[start:r.i]
			r.i++
			if !ascii && !utf8.ValidString(s) {
				return "", false
			}
			return s, true
		case c == '\\':
			return r.escaped(start, ascii)
		case c < 0x20:
			return "", false
		case c >= utf8.RuneSelf:
			ascii = false
		}
		r.i++
	}
	return "", false
}

// escaped continues str from the first backslash of a string that began at
// start.
func (r *fastReader) escaped(start int, ascii bool) (string, bool) {
	out := make([]byte, 0, r.i-start+16)
	out = append(out, r.s[start:r.i]...)
	for r.i < len(r.s) {
		c := r.s[r.i]
		switch {
		case c == '"':
			r.i++
			if !ascii && !utf8.Valid(out) {
				return "", false
			}
			return string(out), true
		case c < 0x20:
			return "", false
		case c == '\\':
			if r.i+1 >= len(r.s) {
				return "", false
			}
			var b byte
			switch r.s[r.i+1] {
			case '"', '\\', '/':
				b = r.s[r.i+1]
			case 'b':
				b = '\b'
			case 'f':
				b = '\f'
			case 'n':
				b = '\n'
			case 'r':
				b = '\r'
			case 't':
				b = '\t'
			default: // \u, or not an escape
				return "", false
			}
			out = append(out, b)
			r.i += 2
			continue
		case c >= utf8.RuneSelf:
			ascii = false
		}
		out = append(out, c)
		r.i++
	}
	return "", false
}
