package server

import (
	"bufio"
	"context"
	"crypto/rand"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"strconv"
	"sync"
	"time"
)

// RequestIDHeader carries the request id in and out.
const RequestIDHeader = "X-Request-Id"

const maxRequestIDLen = 128

type ctxKey int

const (
	requestIDKey ctxKey = iota
	loggerKey
	requestInfoKey
	authErrorKey
)

// RequestID returns the id of the request ctx belongs to, or "".
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey).(string)
	return id
}

// LoggerFrom returns the request's logger (it carries request_id), or
// slog.Default() outside a request.
func LoggerFrom(ctx context.Context) *slog.Logger {
	if l, ok := ctx.Value(loggerKey).(*slog.Logger); ok && l != nil {
		return l
	}
	return slog.Default()
}

// validRequestID accepts a client's id only when it is short printable ASCII,
// so that it can go into logs and headers untouched.
func validRequestID(id string) bool {
	if id == "" || len(id) > maxRequestIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		if id[i] < 0x21 || id[i] > 0x7e {
			return false
		}
	}
	return true
}

func newRequestID() string { return rand.Text() }

// requestInfo is filled in by inner layers (route, GraphQL operation) and read
// by observe when the request ends. A pointer in the context, so it is shared.
type requestInfo struct {
	mu        sync.Mutex
	route     string
	operation string
}

func (i *requestInfo) setRoute(r string) {
	i.mu.Lock()
	i.route = r
	i.mu.Unlock()
}

func (i *requestInfo) setOperation(op string) {
	i.mu.Lock()
	if i.operation == "" {
		i.operation = op
	}
	i.mu.Unlock()
}

func (i *requestInfo) get() (route, operation string) {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.route, i.operation
}

func requestInfoFrom(ctx context.Context) *requestInfo {
	info, _ := ctx.Value(requestInfoKey).(*requestInfo)
	return info
}

// observe gives every request an id and a logger, recovers panics, writes one
// access log line and counts the request.
func (s *server) observe(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := r.Header.Get(RequestIDHeader)
		if !validRequestID(id) {
			id = newRequestID()
		}
		w.Header().Set(RequestIDHeader, id)
		log := s.log.With(slog.String("request_id", id))
		info := &requestInfo{}
		ctx := r.Context()
		ctx = context.WithValue(ctx, requestIDKey, id)
		ctx = context.WithValue(ctx, loggerKey, log)
		ctx = context.WithValue(ctx, requestInfoKey, info)
		rec := &statusRecorder{ResponseWriter: w}
		ctx, span := startRequestSpan(ctx, r)

		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				log.ErrorContext(ctx, "panic serving request", slog.Any("panic", p), slog.String("stack", string(debug.Stack())))
				if !rec.wroteHeader {
					http.Error(rec, "internal error", http.StatusInternalServerError)
				}
			}
			route, op := info.get()
			if route == "" {
				route = routeOther
			}
			status := rec.statusCode()
			took := time.Since(start)
			if route == routeGraphQL && r.Method == http.MethodPost && s.cfg.RequestDone != nil {
				s.cfg.RequestDone(took)
			}
			endRequestSpan(span, r.Method, route, status)
			s.metrics.httpRequests.WithLabelValues(route, strconv.Itoa(status)).Inc()

			attrs := []slog.Attr{
				slog.String("method", r.Method),
				slog.String("path", r.URL.Path),
				slog.Int("status", status),
				slog.Duration("duration", took),
			}
			if op != "" {
				attrs = append(attrs, slog.String("operation", op))
			}
			// Probes and scrapes arrive every few seconds; keep them out of
			// the Info stream unless they fail.
			level := slog.LevelInfo
			if (route == routeHealthz || route == routeReadyz || route == routeMetrics) && status < 400 {
				level = slog.LevelDebug
			}
			log.LogAttrs(ctx, level, "http request", attrs...)
		}()

		next.ServeHTTP(rec, r.WithContext(ctx))
	})
}

// statusRecorder remembers the status code. It keeps Flush and Hijack
// reachable because the websocket and streaming transports type-assert them.
type statusRecorder struct {
	http.ResponseWriter
	status      int
	wroteHeader bool
}

func (w *statusRecorder) WriteHeader(code int) {
	if !w.wroteHeader && code >= 200 {
		w.status = code
		w.wroteHeader = true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusRecorder) Write(b []byte) (int, error) {
	if !w.wroteHeader {
		w.status = http.StatusOK
		w.wroteHeader = true
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusRecorder) statusCode() int {
	if !w.wroteHeader {
		return http.StatusOK
	}
	return w.status
}

// Flush implements http.Flusher.
func (w *statusRecorder) Flush() {
	if !w.wroteHeader {
		w.status = http.StatusOK
		w.wroteHeader = true
	}
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

// Hijack implements http.Hijacker (websocket upgrades).
func (w *statusRecorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, rw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err == nil && !w.wroteHeader {
		w.status = http.StatusSwitchingProtocols
		w.wroteHeader = true
	}
	return conn, rw, err
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *statusRecorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }
