package mcp

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// askExec plays the API for ask_human: askQuestion answers a PENDING
// question; each read of it answers the next of reads (the last repeats),
// or, with block, waits for the call's context to end.
type askExec struct {
	reads     []string
	block     bool
	reading   chan struct{} // closed when the blocking read starts
	cancelled chan struct{} // closed when it saw its context end

	mu    sync.Mutex
	n     int
	asked map[string]any
	beats int
	auth  string // the Authorization the last operation carried
}

func (e *askExec) authSeen() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.auth
}

func (e *askExec) Execute(ctx context.Context, doc string, vars map[string]any, out any) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.auth = authorizationFrom(ctx)
	var data string
	switch {
	case strings.Contains(doc, "askQuestion"):
		e.asked = vars["in"].(map[string]any)
		data = `{"askQuestion": {"question": {"id": "Q1", "status": "PENDING", "timeoutAction": "USE_DEFAULT"}}}`
	case strings.Contains(doc, "heartbeat"):
		e.beats++
		data = `{"heartbeat": {"directive": "CONTINUE"}}`
	case strings.Contains(doc, "question(id"):
		if e.block {
			e.mu.Unlock()
			close(e.reading)
			<-ctx.Done()
			close(e.cancelled)
			e.mu.Lock()
			return ctx.Err()
		}
		data = e.reads[min(e.n, len(e.reads)-1)]
		e.n++
	default:
		panic("unexpected operation: " + doc)
	}
	return json.Unmarshal([]byte(data), out)
}

func connectOpts(t *testing.T, exec Executor, opts Options, progress func(*sdk.ProgressNotificationClientRequest)) *sdk.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := sdk.NewInMemoryTransports()
	ss, err := NewServer(exec, opts).Connect(ctx, st, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ss.Close() })
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"},
		&sdk.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *sdk.ProgressNotificationClientRequest) { progress(r) }}).Connect(ctx, ct, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// TestAskHumanWaitsForTheAnswer: ask_human asks with the default as its
// timeout action, reports progress while the question is PENDING, keeps the
// agent's lease, and returns the answer.
func TestAskHumanWaitsForTheAnswer(t *testing.T) {
	exec := &askExec{reads: []string{
		`{"question": {"id": "Q1", "status": "PENDING", "timeoutAction": "USE_DEFAULT"}}`,
		`{"question": {"id": "Q1", "status": "PENDING", "timeoutAction": "USE_DEFAULT"}}`,
		`{"question": {"id": "Q1", "status": "ANSWERED", "answer": "green", "timeoutAction": "USE_DEFAULT"}}`,
	}}
	var mu sync.Mutex
	var progress []*sdk.ProgressNotificationParams
	cs := connectOpts(t, exec, Options{PollInterval: time.Millisecond, HeartbeatEvery: time.Nanosecond}, func(r *sdk.ProgressNotificationClientRequest) {
		mu.Lock()
		progress = append(progress, r.Params)
		mu.Unlock()
	})
	params := &sdk.CallToolParams{Name: "ask_human", Arguments: map[string]any{"agentId": "A1", "question": "Blue or green?",
		"options": []string{"blue", "green"}, "defaultAnswer": "blue", "timeoutSeconds": 60}}
	params.SetProgressToken("p1")
	r, err := cs.CallTool(context.Background(), params)
	require.NoError(t, err)
	require.False(t, r.IsError, "%v", r.Content)
	out := r.StructuredContent.(map[string]any)
	require.Equal(t, "ANSWERED", out["status"])
	require.Equal(t, "green", out["answer"])
	require.Equal(t, "Q1", out["questionId"])

	require.Equal(t, "A1", exec.asked["agentId"])
	require.Equal(t, "USE_DEFAULT", exec.asked["timeoutAction"])
	require.Equal(t, "blue", exec.asked["defaultAnswer"])
	require.Len(t, exec.asked["options"], 2)
	require.NotEmpty(t, exec.asked["expiresAt"])
	require.Equal(t, 3, exec.beats, "a heartbeat before each read")
	// Notifications may trail the result: they were sent before it.
	require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(progress) == 3 }, 10*time.Second, time.Millisecond)
	require.Equal(t, "p1", progress[0].ProgressToken)
	require.EqualValues(t, 60, progress[0].Total)
}

// TestAskHumanCancelled: cancelling the call ends the wait: the operation in
// flight sees its context end.
func TestAskHumanCancelled(t *testing.T) {
	exec := &askExec{block: true, reading: make(chan struct{}), cancelled: make(chan struct{})}
	cs := connectOpts(t, exec, Options{PollInterval: time.Millisecond}, func(*sdk.ProgressNotificationClientRequest) {})
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "ask_human", Arguments: map[string]any{"taskId": "VGFzazox", "question": "?"}})
		errc <- err
	}()
	// The read blocks until the call is cancelled.
	select {
	case <-exec.reading:
	case err := <-errc:
		t.Fatalf("the call ended before its wait: %v", err)
	}
	cancel()
	require.Error(t, <-errc)
	select {
	case <-exec.cancelled:
	case <-time.After(time.Minute):
		t.Fatal("the server kept waiting after the call was cancelled")
	}
	require.Equal(t, "EXPIRE", exec.asked["timeoutAction"], "no default answer: the question expires")
}

// TestAskHumanNeedsOneSubject: exactly one of agentId and taskId.
func TestAskHumanNeedsOneSubject(t *testing.T) {
	exec := &askExec{}
	cs := connectOpts(t, exec, Options{}, func(*sdk.ProgressNotificationClientRequest) {})
	r, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "ask_human", Arguments: map[string]any{"question": "?"}})
	require.NoError(t, err)
	require.True(t, r.IsError)
	require.True(t, strings.HasPrefix(r.Content[0].(*sdk.TextContent).Text, "BAD_USER_INPUT: give exactly one of agentId and taskId"))
	r, err = cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "ask_human", Arguments: map[string]any{"question": "?", "agentId": "a", "timeoutSeconds": 3601}})
	require.NoError(t, err)
	require.True(t, r.IsError, "timeoutSeconds is bounded")
	require.Nil(t, exec.asked)
}
