package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// Server timeouts. No read or write timeout: subscriptions stream for hours;
// request bodies are bounded by the body limit instead.
const (
	readHeaderTimeout = 10 * time.Second
	idleTimeout       = 120 * time.Second
	shutdownTimeout   = 30 * time.Second
)

// shutdownKey finds, in a request's context, the context that ends when the
// server has shut down (websockets close then).
type shutdownKey struct{}

// Serve serves h on ln until ctx ends, then shuts down gracefully: it stops
// accepting, lets in-flight requests finish (at most 30s, then closes them),
// and returns. Request contexts carry ctx's values but are not cancelled by it;
// they are cancelled after the drain, which also ends hijacked (websocket)
// connections that shutdown does not track. It returns nil after a clean
// shutdown.
func Serve(ctx context.Context, ln net.Listener, h http.Handler, log *slog.Logger) error {
	if log == nil {
		log = slog.Default()
	}
	base, cancelBase := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelBase()
	// Websockets outlive their handlers; they end with base.
	base = context.WithValue(base, shutdownKey{}, base)

	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: readHeaderTimeout,
		IdleTimeout:       idleTimeout,
		BaseContext:       func(net.Listener) context.Context { return base },
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	log.InfoContext(ctx, "listening", slog.String("addr", ln.Addr().String()))

	select {
	case err := <-errc:
		// Serve only returns early on a listener failure.
		return fmt.Errorf("serve %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}

	log.InfoContext(base, "shutting down", slog.Duration("timeout", shutdownTimeout))
	shutdownCtx, cancel := context.WithTimeout(base, shutdownTimeout)
	defer cancel()
	err := srv.Shutdown(shutdownCtx)
	cancelBase()
	if err != nil {
		_ = srv.Close()
		<-errc
		return fmt.Errorf("graceful shutdown: %w", err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve %s: %w", ln.Addr(), err)
	}
	log.InfoContext(base, "server stopped")
	return nil
}
