package server

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// gqlgenMessage has the shape of gqlgen's (unexported) websocket messages.
type gqlgenMessage struct {
	Payload json.RawMessage `json:"payload,omitempty"`
	ID      string          `json:"id,omitempty"`
	Type    messageTypeName `json:"type"`
}

type messageTypeName string

func TestMessageEncodingMatchesJSON(t *testing.T) {
	for _, m := range []gqlgenMessage{
		{Type: "connection_ack"},
		{Type: "next", ID: "1", Payload: json.RawMessage(`{"data":{"x":1}}`)},
		{Type: "complete", ID: `we"ird\id` + "\x01"},
		{Type: "error", ID: "é", Payload: json.RawMessage(`[{"message":"m"}]`)},
	} {
		want, err := json.Marshal(&m)
		require.NoError(t, err)
		msg, ok := readMessage(&m)
		require.True(t, ok)
		require.JSONEq(t, string(want), string(msg.appendJSON(nil)))
		require.Equal(t, string(m.Type), msg.typ)
		require.Equal(t, m.ID, msg.id)
	}
	_, ok := readMessage(map[string]any{"type": "x"})
	require.False(t, ok)
}

func TestOriginAllowed(t *testing.T) {
	s := &server{cfg: Config{Websocket: WebsocketConfig{AllowedOrigins: []string{"https://app.example.com/"}}}}
	for _, tc := range []struct {
		host, origin string
		ok           bool
	}{
		{"api.example.com", "", true},
		{"api.example.com", "https://api.example.com", true},
		{"api.example.com:8080", "http://API.example.com:8080", true},
		{"api.example.com", "https://app.example.com", true},
		{"api.example.com", "https://evil.example.com", false},
		{"api.example.com", "https://app.example.com.evil.com", false},
		{"api.example.com", "null", false},
	} {
		r := httptest.NewRequest("GET", "http://"+tc.host+"/graphql", nil)
		r.Host = tc.host
		if tc.origin != "" {
			r.Header.Set("Origin", tc.origin)
		}
		require.Equal(t, tc.ok, s.originAllowed(r), "%s from %s", tc.host, tc.origin)
	}
	any := &server{cfg: Config{Websocket: WebsocketConfig{AllowedOrigins: []string{"*"}}}}
	r := httptest.NewRequest("GET", "http://api.example.com/graphql", nil)
	r.Header.Set("Origin", "https://anything.example.org")
	require.True(t, any.originAllowed(r))
}

func TestCloseReasonFitsAFrame(t *testing.T) {
	require.Equal(t, "short", closeReason("short"))
	long := closeReason("Subscriber for " + strings.Repeat("é", 100) + " already exists")
	require.LessOrEqual(t, len(long), 123)
	require.True(t, utf8.ValidString(long))
	require.True(t, strings.HasSuffix(long, "…"))
}
