package mcp

import (
	"context"
	"crypto/rand"
	"net/http"
	"sync"
)

// requestHeader carries, from Handler to the tool handlers, the id under
// which the HTTP request's context is kept. Whatever a client sends in it is
// replaced.
const requestHeader = "X-Taskgraph-Mcp-Request"

// requestContexts ties tool calls to the POST that carries them. In the
// SDK's stateless mode a call's context is not the request's (for protocol
// revisions before 2026-07-28), so a client that goes away would leave a
// waiting ask_human polling until its timeout; with this, the call ends
// with its request.
type requestContexts struct {
	mu sync.Mutex
	m  map[string]context.Context
}

func newRequestContexts() *requestContexts {
	return &requestContexts{m: map[string]context.Context{}}
}

// wrap keeps each request's context for the tool calls it carries.
func (rc *requestContexts) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := rand.Text()
		rc.mu.Lock()
		rc.m[id] = r.Context()
		rc.mu.Unlock()
		defer func() {
			rc.mu.Lock()
			delete(rc.m, id)
			rc.mu.Unlock()
		}()
		r.Header.Set(requestHeader, id)
		next.ServeHTTP(w, r)
	})
}

// bind returns ctx, also ended when the HTTP request carrying the call ends.
func (rc *requestContexts) bind(ctx context.Context, h http.Header) (context.Context, context.CancelFunc) {
	if rc == nil || h == nil {
		return ctx, func() {}
	}
	rc.mu.Lock()
	reqCtx := rc.m[h.Get(requestHeader)]
	rc.mu.Unlock()
	if reqCtx == nil {
		return ctx, func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(reqCtx, cancel)
	return ctx, func() {
		stop()
		cancel()
	}
}
