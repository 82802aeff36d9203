package mcp

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestHTTPDisconnectEndsWait: over POST /mcp (stateless), a client that goes
// away while ask_human waits ends the wait: the operation in flight sees its
// context end, and no poll outlives the request.
func TestHTTPDisconnectEndsWait(t *testing.T) {
	exec := &askExec{block: true, reading: make(chan struct{}), cancelled: make(chan struct{})}
	srv := httptest.NewServer(Handler(exec, Options{PollInterval: time.Millisecond}))
	defer srv.Close()

	ctx, cancel := context.WithCancel(context.Background())
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask_human","arguments":{"taskId":"VGFzazox","question":"?"},"_meta":{"progressToken":1}}}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	req.Header.Set("Authorization", "Bearer t0k")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	go func() { _, _ = bufio.NewReader(resp.Body).ReadString(0) }()
	select {
	case <-exec.reading:
	case <-time.After(time.Minute):
		t.Fatal("ask_human never polled")
	}
	require.Equal(t, "Bearer t0k", exec.authSeen())
	cancel() // the client goes away
	select {
	case <-exec.cancelled:
	case <-time.After(time.Minute):
		t.Fatal("the wait outlived its request")
	}
}
