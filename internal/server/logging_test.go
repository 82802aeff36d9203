package server

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
)

func TestValidRequestID(t *testing.T) {
	tests := []struct {
		id   string
		want bool
	}{
		{"abc-123", true},
		{"0f8fad5b-d9cb-469f-a165-70867728950e", true},
		{strings.Repeat("x", 128), true},
		{"", false},
		{strings.Repeat("x", 129), false},
		{"has space", false},
		{"new\nline", false},
		{"tab\t", false},
		{"ünïcode", false},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, validRequestID(tt.id), "%q", tt.id)
	}
	require.True(t, validRequestID(newRequestID()))
}

func TestRequestIDAndAccessLog(t *testing.T) {
	tests := []struct {
		name     string
		incoming string
		keep     bool
	}{
		{name: "honoured", incoming: "client-id-42", keep: true},
		{name: "generated when absent"},
		{name: "replaced when too long", incoming: strings.Repeat("a", 200)},
		{name: "replaced when not printable", incoming: "evil\x00id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := setup(t)
			r := newPost(`{"query":"query WhoAmI { viewer }"}`, tokenGood)
			if tt.incoming != "" {
				r.Header.Set(RequestIDHeader, tt.incoming)
			}
			res, _ := b.do(t, r)
			id := res.Header.Get(RequestIDHeader)
			require.True(t, validRequestID(id))
			if tt.keep {
				require.Equal(t, tt.incoming, id)
			} else {
				require.NotEqual(t, tt.incoming, id)
			}

			lines := b.logs.find(t, "http request")
			require.Len(t, lines, 1)
			l := lines[0]
			require.Equal(t, "INFO", l["level"])
			require.Equal(t, id, l["request_id"])
			require.Equal(t, "POST", l["method"])
			require.Equal(t, "/graphql", l["path"])
			require.EqualValues(t, 200, l["status"])
			require.Equal(t, "WhoAmI", l["operation"])
			require.Contains(t, l, "duration")
		})
	}
}

func TestLoggerFrom(t *testing.T) {
	require.Same(t, slog.Default(), LoggerFrom(context.Background()))
	require.Empty(t, RequestID(context.Background()))

	logs := &syncBuffer{}
	s := &server{log: slog.New(slog.NewJSONHandler(logs, nil)), metrics: newMetrics(prometheus.NewRegistry(), nil)}
	var seen string
	h := s.observe(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = RequestID(r.Context())
		LoggerFrom(r.Context()).InfoContext(r.Context(), "inside")
	}))
	r := httptest.NewRequest(http.MethodGet, "/x", nil)
	r.Header.Set(RequestIDHeader, "rid-1")
	h.ServeHTTP(httptest.NewRecorder(), r)

	require.Equal(t, "rid-1", seen)
	inside := logs.find(t, "inside")
	require.Len(t, inside, 1)
	require.Equal(t, "rid-1", inside[0]["request_id"])
}

func TestObserveRecoversPanics(t *testing.T) {
	logs := &syncBuffer{}
	s := &server{log: slog.New(slog.NewJSONHandler(logs, nil)), metrics: newMetrics(prometheus.NewRegistry(), nil)}
	h := s.observe(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("handler bug") }))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))

	require.Equal(t, http.StatusInternalServerError, rec.Code)
	require.NotContains(t, rec.Body.String(), "handler bug")
	logged := logs.find(t, "panic serving request")
	require.Len(t, logged, 1)
	require.Equal(t, "handler bug", logged[0]["panic"])
	require.NotEmpty(t, logged[0]["stack"])
	access := logs.find(t, "http request")
	require.Len(t, access, 1)
	require.EqualValues(t, 500, access[0]["status"])
}

// The websocket transport needs http.Hijacker and streaming needs http.Flusher
// through the status recorder.
func TestObserveKeepsHijackAndFlush(t *testing.T) {
	s := &server{log: slog.New(slog.NewTextHandler(io.Discard, nil)), metrics: newMetrics(prometheus.NewRegistry(), nil)}
	h := s.observe(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/flush" {
			_, _ = w.Write([]byte("part"))
			w.(http.Flusher).Flush()
			return
		}
		conn, rw, err := w.(http.Hijacker).Hijack()
		if err != nil {
			panic(err)
		}
		defer conn.Close()
		_, _ = rw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: test\r\n\r\nhello")
		_ = rw.Flush()
	}))
	srv := httptest.NewServer(h)
	defer srv.Close()

	res, err := http.Get(srv.URL + "/flush")
	require.NoError(t, err)
	body, _ := io.ReadAll(res.Body)
	_ = res.Body.Close()
	require.Equal(t, "part", string(body))

	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.Write([]byte("GET /ws HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: test\r\n\r\n"))
	require.NoError(t, err)
	status, err := bufio.NewReader(conn).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "HTTP/1.1 101 Switching Protocols\r\n", status)
}
