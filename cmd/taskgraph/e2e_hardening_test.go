package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/testdb"
)

// logBuffer collects the server's JSON log lines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// lines decodes the log lines written so far.
func (b *logBuffer) lines(t testing.TB) []map[string]any {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(b.buf.String()), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &m), l)
		out = append(out, m)
	}
	return out
}

// atLevel returns the lines logged at level ("ERROR", "WARN", …).
func (b *logBuffer) atLevel(t testing.TB, level string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range b.lines(t) {
		if l["level"] == level {
			out = append(out, l)
		}
	}
	return out
}

// TestSubscriptionEndIsNotAnError: subscriptions that clients end — complete
// right after subscribe, or a connection closed while events are being
// resolved — are not logged as errors (they were: "graphql internal error"
// with "context canceled" at ERROR, from resolvers whose context ended).
func TestSubscriptionEndIsNotAnError(t *testing.T) {
	t.Parallel()
	testdb.Run(t, func(t *testing.T, url string) {
		logs := &logBuffer{}
		s, stop := startServerWith(t, url, serverOptions{logs: logs})
		p := s.createProject(t, s.AdminToken, "logs")
		from := s.eventCursor(t, s.AdminToken, p)
		for i := 0; i < 20; i++ {
			s.createTask(t, s.AdminToken, p, "t", nil)
		}
		for i := 0; i < 5; i++ {
			// Completed at once: the subscribe resolver is still running.
			r := s.mustDialRaw(t)
			r.init(M{"token": s.AdminToken})
			r.send(r.subscribeMsg("1", p))
			r.send(M{"type": "complete", "id": "1"})
			// Closed while the events of a catch-up are resolved.
			r2 := s.mustDialRaw(t)
			r2.init(M{"token": s.AdminToken})
			sub := r2.subscribeMsg("1", p)
			sub["payload"].(M)["variables"].(M)["after"] = from
			r2.send(sub)
			m, err := r2.read()
			require.NoError(t, err)
			require.Equal(t, "next", m["type"])
			require.NoError(t, r2.ws.Close())
			r.send(M{"type": "ping"})
			for m["type"] != "pong" { // the end of operation 1 may come first
				m, err = r.read()
				require.NoError(t, err)
			}
			require.NoError(t, r.ws.Close())
		}
		stop()
		require.Empty(t, logs.atLevel(t, "ERROR"))
		require.NotEmpty(t, logs.lines(t), "the log was captured")
	})
}
