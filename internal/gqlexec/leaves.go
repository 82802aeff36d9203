package gqlexec

import (
	"bytes"
	"io"
	"strconv"
	"time"

	"github.com/99designs/gqlgen/graphql"
)

// Scalar leaves written from the address of the struct field that holds
// them: a pointer converted to a Marshaler costs no allocation, where
// gqlgen's marshallers make a closure (or box a value) for each value of a
// response. internal/tools/execpass puts graph's helpers over these in the
// functions of fields read straight from a struct field.

// StringAt writes the string it points to as graphql.MarshalString writes
// it (whose closures were 1,400 allocations a read of 100 tasks with their
// links and file impacts). The string is read when the response is
// written, not when the field is resolved: only for objects nothing
// changes in between (graph.fieldAt leaves a mutation's fields to gqlgen's
// marshallers).
type StringAt string

// MarshalGQL writes *s quoted and escaped as gqlgen does.
func (s *StringAt) MarshalGQL(w io.Writer) { WriteQuotedString(w, string(*s)) }

// WriteQuotedString writes s as a JSON string, byte for byte as gqlgen's
// graphql.MarshalString: `"`, `\`, and the control characters escaped
// (tab, CR and LF by name, the others as \u00XX), everything else —
// invalid UTF-8 included — as it is. The escaped characters are ASCII,
// which never occurs inside a multi-byte sequence, so scanning bytes finds
// what gqlgen's scan of runes finds. A string with nothing to escape goes
// to a response's buffer in one write.
func WriteQuotedString(w io.Writer, s string) {
	i := 0
	for i < len(s) && !needsEscape(s[i]) {
		i++
	}
	if buf, ok := w.(*bytes.Buffer); ok && i == len(s) {
		buf.Grow(len(s) + 2)
		buf.WriteByte('"')
		buf.WriteString(s)
		buf.WriteByte('"')
		return
	}
	_, _ = io.WriteString(w, `"`)
	start := 0
	for ; i < len(s); i++ {
		c := s[i]
		if !needsEscape(c) {
			continue
		}
		_, _ = io.WriteString(w, s[start:i])
		switch c {
		case '\t':
			_, _ = io.WriteString(w, `\t`)
		case '\r':
			_, _ = io.WriteString(w, `\r`)
		case '\n':
			_, _ = io.WriteString(w, `\n`)
		case '\\':
			_, _ = io.WriteString(w, `\\`)
		case '"':
			_, _ = io.WriteString(w, `\"`)
		default:
			_, _ = w.Write([]byte{'\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf]})
		}
		start = i + 1
	}
	_, _ = io.WriteString(w, s[start:])
	_, _ = io.WriteString(w, `"`)
}

const hexDigits = "0123456789ABCDEF"

func needsEscape(c byte) bool { return c < 0x20 || c == '\\' || c == '"' }

// OptionalStringAt is graphql.MarshalString(*p) without its allocation,
// graphql.Null for nil (gqlgen's nullable String).
func OptionalStringAt(p *string) graphql.Marshaler {
	if p == nil {
		return graphql.Null
	}
	return (*StringAt)(p)
}

// IntAt writes the int it points to as graphql.MarshalInt writes it.
type IntAt int

// MarshalGQL writes *i in decimal.
func (i *IntAt) MarshalGQL(w io.Writer) {
	if buf, ok := w.(*bytes.Buffer); ok {
		buf.Write(strconv.AppendInt(buf.AvailableBuffer(), int64(*i), 10))
		return
	}
	_, _ = io.WriteString(w, strconv.FormatInt(int64(*i), 10))
}

// OptionalIntAt is graphql.MarshalInt(*p) without its allocation,
// graphql.Null for nil (gqlgen's nullable Int).
func OptionalIntAt(p *int) graphql.Marshaler {
	if p == nil {
		return graphql.Null
	}
	return (*IntAt)(p)
}

// TimeAt writes the time it points to as MarshalTime does (the schema's
// Time); its callers have checked that the time is not zero, which
// MarshalTime answers with null.
type TimeAt time.Time

// MarshalGQL writes *t as an RFC 3339 string with nanoseconds.
func (t *TimeAt) MarshalGQL(w io.Writer) { timeValue{time.Time(*t)}.MarshalGQL(w) }

// OptionalTimeAt is MarshalTime(*p) without its allocation: graphql.Null for
// nil or the zero time (gqlgen's nullable Time).
func OptionalTimeAt(p *time.Time) graphql.Marshaler {
	if p == nil || p.IsZero() {
		return graphql.Null
	}
	return (*TimeAt)(p)
}

// Boolean is graphql.MarshalBoolean(b) without its allocation: one
// marshaller for each value.
func Boolean(b bool) graphql.Marshaler {
	if b {
		return booleans[1]
	}
	return booleans[0]
}

var booleans = [2]graphql.Marshaler{graphql.MarshalBoolean(false), graphql.MarshalBoolean(true)}
