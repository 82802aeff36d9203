package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestServeSmoke(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		var out struct{ Viewer struct{ Slug string } }
		s.mustDo(t, s.AdminToken, `{ viewer { slug } }`, nil, &out)
		require.Equal(t, "admin", out.Viewer.Slug)
		s.requireCode(t, "", `{ viewer { slug } }`, nil, "UNAUTHENTICATED")
	})
}
