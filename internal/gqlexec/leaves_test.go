package gqlexec

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

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

// TestIntTimeBooleanAtAsGqlgen: ints, times and booleans are written as
// gqlgen's marshallers (and MarshalTime) write them, to a buffer and to any
// writer; nil and the zero time are null; an address makes a Marshaler
// without allocating.
func TestIntTimeBooleanAtAsGqlgen(t *testing.T) {
	write := func(m graphql.Marshaler) (string, string) {
		var buf bytes.Buffer
		var sb strings.Builder
		m.MarshalGQL(&buf)
		m.MarshalGQL(&sb)
		return buf.String(), sb.String()
	}
	same := func(want, got graphql.Marshaler, what any) {
		t.Helper()
		w, _ := write(want)
		g1, g2 := write(got)
		require.Equal(t, w, g1, "%v", what)
		require.Equal(t, w, g2, "%v, to a writer that is not a buffer", what)
	}
	for _, i := range []int{0, 1, -1, 42, math.MaxInt, math.MinInt} {
		same(graphql.MarshalInt(i), (*IntAt)(&i), i)
		same(graphql.MarshalInt(i), OptionalIntAt(&i), i)
	}
	for _, tm := range []time.Time{time.Date(2026, 11, 29, 6, 50, 1, 123456789, time.UTC),
		time.Date(1, 1, 1, 0, 0, 0, 1, time.FixedZone("x", -5*3600-30*60))} {
		same(graphql.MarshalTime(tm), (*TimeAt)(&tm), tm)
		same(graphql.MarshalTime(tm), OptionalTimeAt(&tm), tm)
	}
	for _, b := range []bool{true, false} {
		same(graphql.MarshalBoolean(b), Boolean(b), b)
	}
	var zero time.Time
	require.Equal(t, graphql.Null, OptionalTimeAt(&zero))
	require.Equal(t, graphql.Null, OptionalTimeAt(nil))
	require.Equal(t, graphql.Null, OptionalIntAt(nil))
	obj := struct {
		N int
		T time.Time
	}{7, time.Now()}
	var m graphql.Marshaler
	require.Zero(t, testing.AllocsPerRun(100, func() {
		m = (*IntAt)(&obj.N)
		m = (*TimeAt)(&obj.T)
		m = OptionalIntAt(&obj.N)
		m = Boolean(obj.N > 3)
	}))
	_ = m
}
