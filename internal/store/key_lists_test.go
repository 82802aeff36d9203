package store

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPadKeys: a list grows to the next power of two with its last key; a
// power of two, an empty list and one past maxPaddedKeys stay as they are.
func TestPadKeys(t *testing.T) {
	keys := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprint("k", i)
		}
		return out
	}
	require.Empty(t, padKeys(nil))
	require.Equal(t, []string{"k0"}, padKeys(keys(1)))
	require.Equal(t, []string{"k0", "k1", "k2", "k2"}, padKeys(keys(3)))
	require.Equal(t, keys(8), padKeys(keys(8)))
	got := padKeys(keys(100))
	require.Len(t, got, 128)
	require.Equal(t, keys(100), got[:100])
	for _, k := range got[100:] {
		require.Equal(t, "k99", k)
	}
	require.Len(t, padKeys(keys(maxPaddedKeys)), maxPaddedKeys)
	require.Len(t, padKeys(keys(maxPaddedKeys+1)), maxPaddedKeys+1)
}

// TestKeyListStatementsBounded: past maxKeyListStmts texts a new one is not
// admitted to the prepared cache; one already there still is.
func TestKeyListStatementsBounded(t *testing.T) {
	d := &DB{}
	for i := range maxKeyListStmts {
		require.True(t, d.admitKeyList(fmt.Sprint("SELECT ", i)))
	}
	require.False(t, d.admitKeyList("SELECT past the bound"))
	d.stmts.Store("SELECT cached", preparing{})
	require.True(t, d.admitKeyList("SELECT cached"))
}
