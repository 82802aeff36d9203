package main

import (
	"io"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/server"
	"github.com/taskgraph/taskgraph/internal/store"
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

func TestGCFlags(t *testing.T) {
	t.Setenv("GOGC", "")
	os.Unsetenv("GOGC")
	c, err := parseServe(nil, io.Discard)
	require.NoError(t, err)
	require.Equal(t, defaultGCPercent, c.gcPercent)
	require.Zero(t, c.memoryLimit)

	t.Setenv("GOGC", "150")
	c, err = parseServe([]string{"--memory-limit", "2GiB"}, io.Discard)
	require.NoError(t, err)
	require.Equal(t, -1, c.gcPercent, "GOGC set: the runtime's setting stays")
	require.Equal(t, int64(2<<30), c.memoryLimit)

	for _, bad := range [][]string{{"--gc-percent", "0"}, {"--gc-percent", "-2"}, {"--memory-limit", "lots"}} {
		_, err := parseServe(bad, io.Discard)
		require.Error(t, err, bad)
	}
}

func TestDBMaxConnsFlag(t *testing.T) {
	t.Setenv("TASKGRAPH_DB_MAX_CONNS", "")
	c, err := parseServe(nil, io.Discard)
	require.NoError(t, err)
	require.Equal(t, store.DefaultMaxConns, c.dbMaxConns)

	t.Setenv("TASKGRAPH_DB_MAX_CONNS", "24")
	c, err = parseServe(nil, io.Discard)
	require.NoError(t, err)
	require.Equal(t, 24, c.dbMaxConns)

	for _, bad := range []string{"0", "-1", "1001", "many"} {
		_, err := parseServe([]string{"--db-max-conns", bad}, io.Discard)
		require.Error(t, err, bad)
	}
}

func TestDBPoolerFlags(t *testing.T) {
	const (
		pooler = "postgres://app@pgbouncer:6432/taskgraph"
		direct = "postgres://app@db:5432/taskgraph"
	)
	t.Setenv("TASKGRAPH_DB_POOLER", "")
	t.Setenv("TASKGRAPH_LISTEN_DATABASE", "")
	c, err := parseServe(nil, io.Discard)
	require.NoError(t, err)
	require.Equal(t, store.PoolerNone, c.dbPooler)
	require.Empty(t, c.listenDatabase, "LISTEN on --database")

	c, err = parseServe([]string{"--database", direct, "--listen-database", direct + "?application_name=l"}, io.Discard)
	require.NoError(t, err)
	require.Equal(t, store.PoolerNone, c.dbPooler)

	t.Setenv("TASKGRAPH_DB_POOLER", "transaction")
	t.Setenv("TASKGRAPH_LISTEN_DATABASE", direct)
	c, err = parseServe([]string{"--database", pooler}, io.Discard)
	require.NoError(t, err)
	require.Equal(t, store.PoolerTransaction, c.dbPooler)
	require.Equal(t, direct, c.listenDatabase)

	t.Setenv("TASKGRAPH_DB_POOLER", "")
	t.Setenv("TASKGRAPH_LISTEN_DATABASE", "")
	for _, bad := range [][]string{
		{"--db-pooler", "session"},
		{"--db-pooler", "transaction"},                                                    // SQLite
		{"--db-pooler", "transaction", "--database", pooler},                              // no direct URL
		{"--db-pooler", "transaction", "--database", pooler, "--listen-database", pooler}, // LISTEN through the pooler
		{"--listen-database", "sqlite:x.db"},
	} {
		_, err := parseServe(bad, io.Discard)
		require.Error(t, err, bad)
	}
}

func TestWebsocketCapFlags(t *testing.T) {
	t.Setenv("TASKGRAPH_MAX_WS_CONNECTIONS_PER_USER", "")
	t.Setenv("TASKGRAPH_MAX_SUBSCRIPTIONS_PER_USER", "")
	c, err := parseServe(nil, io.Discard)
	require.NoError(t, err)
	require.Equal(t, server.DefaultMaxConnectionsPerUser, c.maxWSConnsPerUser)
	require.Equal(t, server.DefaultMaxSubscriptionsPerUser, c.maxWSOpsPerUser)

	t.Setenv("TASKGRAPH_MAX_WS_CONNECTIONS_PER_USER", "8")
	t.Setenv("TASKGRAPH_MAX_SUBSCRIPTIONS_PER_USER", "80")
	c, err = parseServe(nil, io.Discard)
	require.NoError(t, err)
	require.Equal(t, 8, c.maxWSConnsPerUser)
	require.Equal(t, 80, c.maxWSOpsPerUser)

	for _, bad := range [][]string{{"--max-ws-connections-per-user", "0"}, {"--max-subscriptions-per-user", "-1"},
		{"--max-ws-connections-per-user", "100001"}} {
		_, err := parseServe(bad, io.Discard)
		require.Error(t, err, bad)
	}
}
