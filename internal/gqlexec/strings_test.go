package gqlexec

import (
	"bytes"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/stretchr/testify/require"
)

// TestStringAtAsGqlgen: a string is written byte for byte as
// graphql.MarshalString writes it — quotes, backslashes, every control
// character, Unicode, invalid UTF-8 (a lone lead byte before a quote among
// them) — to a buffer and to any writer; a nil *string is null; a field's
// address makes a Marshaler without allocating.
func TestStringAtAsGqlgen(t *testing.T) {
	cases := []string{"", "plain", `"quoted"`, `back\slash`, "tab\tcr\rlf\n", "ünïcödé ✓ 🚀",
		"\xe2\x22x", "\xff\xfe", "a\x00b\x1fc\x7fd", "</script>&", strings.Repeat("x", 5000) + "\"end"}
	for c := range byte(0x80) {
		cases = append(cases, "a"+string([]byte{c})+"b")
	}
	for _, s := range cases {
		var want, got bytes.Buffer
		graphql.MarshalString(s).MarshalGQL(&want)
		(*StringAt)(&s).MarshalGQL(&got)
		require.Equal(t, want.String(), got.String(), "%q", s)
		var sb strings.Builder
		OptionalStringAt(&s).MarshalGQL(&sb)
		require.Equal(t, want.String(), sb.String(), "%q, to a writer that is not a buffer", s)
	}
	require.Equal(t, graphql.Null, OptionalStringAt(nil))
	obj := struct{ Title string }{"title"}
	var m graphql.Marshaler
	require.Zero(t, testing.AllocsPerRun(100, func() { m = (*StringAt)(&obj.Title) }))
	buf := bytes.NewBuffer(make([]byte, 0, 64))
	require.Zero(t, testing.AllocsPerRun(100, func() { buf.Reset(); m.MarshalGQL(buf) }))
}
