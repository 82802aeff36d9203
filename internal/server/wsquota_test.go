package server

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/auth"
)

func TestWSQuotas(t *testing.T) {
	q := newWSQuotas(2, 3)
	require.False(t, q.startOp("a"), "no operation without an open connection")
	require.True(t, q.openConn("a"))
	require.True(t, q.openConn("a"))
	require.False(t, q.openConn("a"))
	require.True(t, q.openConn("b"), "another principal has a count of its own")
	for range 3 {
		require.True(t, q.startOp("a"))
	}
	require.False(t, q.startOp("a"))
	require.True(t, q.startOp("b"))
	q.endOp("a")
	require.True(t, q.startOp("a"))
	for range 3 {
		q.endOp("a")
	}
	q.closeConn("a")
	q.closeConn("a")
	conns, ops := q.usage("a")
	require.Zero(t, conns)
	require.Zero(t, ops)
	require.NotContains(t, q.by, "a", "a principal holding nothing is forgotten")
}

func TestQuotaKey(t *testing.T) {
	require.Equal(t, "token:t1", quotaKey(&auth.Principal{UserID: "u1", TokenID: "t1"}))
	require.Equal(t, "user:u1", quotaKey(&auth.Principal{UserID: "u1"}), "JWT users have no token: counted by user")
}
