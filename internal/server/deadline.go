package server

import (
	"errors"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/gorilla/websocket"
)

// DefaultBodyReadTimeout bounds the time to receive a request body unless
// Config.BodyReadTimeout says otherwise.
const DefaultBodyReadTimeout = 30 * time.Second

// minUploadRate is the slowest upload (bytes per second) a multipart
// request's deadline leaves room for, beyond BodyReadTimeout.
const minUploadRate = 64 << 10

// bodyDeadline gives a request with a body BodyReadTimeout to send it: the
// connection's read deadline is set when the handler starts, so that a client
// trickling a byte every few seconds cannot hold a connection (and a handler)
// for ever; net/http clears it when the body has been read to its end (its
// background read, which notices a client going away, runs without one). The
// server's ReadHeaderTimeout covers the headers, its IdleTimeout the time
// between requests. Requests without a body — the websocket handshake among
// them, whose connection keeps its own per-frame deadlines once upgraded — get
// no deadline.
func (s *server) bodyDeadline(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil && r.Body != http.NoBody && !websocket.IsWebSocketUpgrade(r) {
			// An error means a writer without deadlines (tests' recorders).
			_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(s.cfg.BodyReadTimeout))
		}
		next.ServeHTTP(w, r)
	})
}

// extendBodyDeadline gives an upload's body, which may rightly take longer,
// BodyReadTimeout and a second per minUploadRate bytes of its length from now.
// It runs before any of the body is read.
func (s *server) extendBodyDeadline(w http.ResponseWriter, length int64) {
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(s.cfg.BodyReadTimeout + time.Duration(length/minUploadRate)*time.Second))
}

// isTimeout reports whether err is a read deadline passing.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
}
