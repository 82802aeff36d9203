package gqlexec

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/stretchr/testify/require"
)

// TestMarshalTimeAsGqlgen: a time is written as graphql.MarshalTime writes
// it, in its own zone, to a buffer and to any writer; the zero time is
// null; into a buffer with room it allocates nothing but its marshaller.
func TestMarshalTimeAsGqlgen(t *testing.T) {
	zones := []*time.Location{time.UTC, time.FixedZone("x", -5*3600-30*60)}
	for _, tm := range []time.Time{
		time.Date(2026, 11, 29, 6, 50, 1, 123456789, time.UTC),
		time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC),
		time.Date(12345, 6, 7, 8, 9, 10, 11000, time.UTC),
	} {
		for _, z := range zones {
			tm := tm.In(z)
			var want, got bytes.Buffer
			graphql.MarshalTime(tm).MarshalGQL(&want)
			MarshalTime(tm).MarshalGQL(&got)
			require.Equal(t, want.String(), got.String())
			var sb strings.Builder
			MarshalTime(tm).MarshalGQL(&sb)
			require.Equal(t, want.String(), sb.String(), "to a writer that is not a buffer")
		}
	}
	require.Equal(t, graphql.Null, MarshalTime(time.Time{}))
	got, err := UnmarshalTime("2026-11-29T06:50:01.5Z")
	require.NoError(t, err)
	require.Equal(t, time.Date(2026, 11, 29, 6, 50, 1, 5e8, time.UTC), got)
	_, err = UnmarshalTime(3)
	require.Error(t, err)

	tm := time.Date(2026, 11, 29, 6, 50, 1, 123456789, time.UTC)
	var buf bytes.Buffer
	buf.Grow(1 << 10)
	require.Equal(t, 1.0, testing.AllocsPerRun(20, func() {
		buf.Reset()
		MarshalTime(tm).MarshalGQL(&buf)
	}))
}
