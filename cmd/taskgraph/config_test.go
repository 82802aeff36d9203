package main

import (
	"io"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestAllowedOriginsFlag(t *testing.T) {
	t.Setenv("TASKGRAPH_ALLOWED_ORIGINS", "https://a.example.com, http://localhost:5173")
	c, err := parseServe(nil, io.Discard)
	require.NoError(t, err)
	require.Equal(t, []string{"https://a.example.com", "http://localhost:5173"}, c.allowedOrigins)

	c, err = parseServe([]string{"--allowed-origins", "*"}, io.Discard)
	require.NoError(t, err)
	require.Equal(t, []string{"*"}, c.allowedOrigins)

	for _, bad := range []string{"example.com", "https://a.example.com/app", "://x"} {
		_, err := parseServe([]string{"--allowed-origins", bad}, io.Discard)
		require.Error(t, err, bad)
	}
}
