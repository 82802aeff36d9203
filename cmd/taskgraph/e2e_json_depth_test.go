package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/domain"
)

// deepJSON is a value nested n objects deep.
func deepJSON(n int) any {
	var v any = "leaf"
	for range n {
		v = M{"a": v}
	}
	return v
}

// JSON inputs nest at most domain.MaxJSONDepth levels, refused the same way
// on both databases: before, 1,000 levels of session state were INTERNAL on
// SQLite (its JSON CHECK constraint) and stored on PostgreSQL.
func TestJSONDepthLimit(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		f := newSessionFixture(t, s, nil)
		for _, n := range []int{domain.MaxJSONDepth + 1, 1000} {
			r, err := f.save(1, "state", deepJSON(n))
			require.NoError(t, err)
			require.Equal(t, "BAD_USER_INPUT", r.code(), "%d levels: %+v", n, r.Errors)
			require.Contains(t, r.Errors[0].Message, "nested more than")
			require.Equal(t, "input.state", r.ext("field"))
		}
		require.Equal(t, 1, f.states(t).N("stateVersion"), "nothing was stored")
		r, err := f.save(1, "state", deepJSON(domain.MaxJSONDepth-1))
		require.NoError(t, err)
		require.Empty(t, r.Errors, "%d levels are fine", domain.MaxJSONDepth-1)
	})
}
