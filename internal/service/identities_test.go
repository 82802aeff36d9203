package service

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/domain"
)

func TestIdentitySlug(t *testing.T) {
	for in, want := range map[string]string{
		"Ada.Lovelace": "ada-lovelace", "  ": "", "__x__": "x", "Émile Zola": "mile-zola", "a--b": "a-b",
	} {
		got := identitySlug(in)
		require.Equal(t, want, got, in)
		if got != "" {
			require.NoError(t, domain.CheckSlug("slug", got), in)
		}
	}
	require.Equal(t, "ada", freeSlug("ada", []string{"ada-lovelace"}))
	require.Equal(t, "ada-3", freeSlug("ada", []string{"ada", "ada-2", "ada-x"}))
}
