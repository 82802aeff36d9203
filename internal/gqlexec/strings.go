package gqlexec

import (
	"bytes"
	"io"

	"github.com/99designs/gqlgen/graphql"
)

// StringAt writes the string it points to as graphql.MarshalString writes
// it. A *StringAt is a pointer, so a Marshaler made of a struct field's
// address costs no allocation, where graphql.MarshalString made a closure
// for every string written (1,400 a read of 100 tasks with their links and
// file impacts). The string is read when the response is written, not
// when the field is resolved: only for objects nothing changes in between
// (graph.stringAt leaves a mutation's fields to graphql.MarshalString).
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
