package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"
)

// Server timeouts. No read or write timeout: subscriptions stream for hours;
// request bodies are bounded by the body limit instead.
const (
	readHeaderTimeout = 10 * time.Second
	idleTimeout       = 120 * time.Second
	shutdownTimeout   = 30 * time.Second
	// websocketCloseTimeout bounds the wait for websockets to close after the
	// drain (a close frame, the peer's answer or WebsocketConfig.CloseLinger).
	websocketCloseTimeout = 5 * time.Second
)

// shutdownKey finds a request's *shutdown in its context.
type shutdownKey struct{}

// shutdown is what websockets, which outlive their handlers, need of Serve:
// a context that ends when the server has drained (they close then), and a
// count Serve waits on before it returns.
type shutdown struct {
	ctx        context.Context
	websockets sync.WaitGroup
}

// Serve serves h on ln until ctx ends, then shuts down gracefully: it stops
// accepting, lets in-flight requests finish (at most 30s, then closes them),
// and returns. Request contexts carry ctx's values but are not cancelled by it;
// they are cancelled after the drain, which also ends hijacked (websocket)
// connections that shutdown does not track; Serve waits (a few seconds at
// most) for those to close. It returns nil after a clean shutdown.
func Serve(ctx context.Context, ln net.Listener, h http.Handler, log *slog.Logger) error {
	if log == nil {
		log = slog.Default()
	}
	base, cancelBase := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelBase()
	sd := &shutdown{ctx: base}
	base = context.WithValue(base, shutdownKey{}, sd)

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
	// Every handler has returned, so no websocket is added any more.
	closed := make(chan struct{})
	go func() {
		sd.websockets.Wait()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(websocketCloseTimeout):
		log.WarnContext(base, "websockets still closing after the timeout", slog.Duration("timeout", websocketCloseTimeout))
	}
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
