package server

import (
	"context"
	"log/slog"
	"net/http"
	"time"
)

// readyTimeout bounds the readiness probe: a database that answers later is
// not ready.
const readyTimeout = 2 * time.Second

// healthz reports that the process serves HTTP.
func healthz(w http.ResponseWriter, _ *http.Request) {
	writeText(w, http.StatusOK, "ok")
}

// readyz reports whether the database answers. The cause of a failure goes to
// the log, never to the (unauthenticated) caller.
func (s *server) readyz() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.cfg.Ready != nil {
			ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
			defer cancel()
			if err := callReady(ctx, s.cfg.Ready); err != nil {
				LoggerFrom(ctx).WarnContext(ctx, "readiness check failed", slog.String("error", err.Error()))
				writeText(w, http.StatusServiceUnavailable, "database unreachable")
				return
			}
		}
		writeText(w, http.StatusOK, "ok")
	})
}

func writeText(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(body))
}

// callReady runs ready but stops waiting when ctx ends, in case ready ignores
// its context.
func callReady(ctx context.Context, ready func(context.Context) error) error {
	done := make(chan error, 1)
	go func() { done <- ready(ctx) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}
