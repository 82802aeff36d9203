package main

import (
	"encoding/base64"
	"testing"

	"github.com/stretchr/testify/require"
)

// Offset cursors (lessons rank by relevance, so their pages go by position)
// refuse offsets past any list the same way on both databases: before,
// off:9223372036854775807 was INTERNAL on PostgreSQL (OFFSET + LIMIT out of
// range) and page 1 on SQLite.
func TestOffsetCursorsBounded(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		pid := s.createProject(t, s.AdminToken, "offsets")
		for _, raw := range []string{"off:9223372036854775807", "off:99999999999999999999", "off:-1", "off:2000000000"} {
			after := base64.RawURLEncoding.EncodeToString([]byte(raw))
			r := s.requireCode(t, s.AdminToken, `query($p: ID!, $after: String) { lessons(projectId: $p, first: 5, after: $after) { nodes { id } } }`,
				M{"p": pid, "after": after}, "BAD_USER_INPUT")
			require.Equal(t, "after", r.ext("field"), raw)
		}
		ok := base64.RawURLEncoding.EncodeToString([]byte("off:1000"))
		s.query(t, s.AdminToken, `query($p: ID!, $after: String) { lessons(projectId: $p, first: 5, after: $after) { nodes { id } } }`,
			M{"p": pid, "after": ok})
	})
}
