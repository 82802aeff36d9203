package server

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/taskgraph/taskgraph/internal/auth"
	"github.com/taskgraph/taskgraph/internal/domain"
)

// A websocket is authenticated once, at connection_init; its token can be
// revoked (or its user deleted) while it stays open. Two things keep such a
// socket from acting on it:
//
//   - every operation a socket starts checks that its token still lives
//     (tokenStillLive), so none starts after the revocation commits;
//   - a watch checks the tokens of every open socket of this process in one
//     statement per interval and closes those whose token is gone with 4403,
//     ending their running subscriptions. Every replica runs its own watch
//     over the one database, so a revocation through any replica reaches the
//     sockets of all of them within the interval.

// DefaultTokenCheckInterval is how often the open sockets' tokens are checked.
const DefaultTokenCheckInterval = 500 * time.Millisecond

// socketRef carries a websocket's connection from its upgrade (Accept) to its
// connection_init (websocketInit), which run with the same request context.
type socketRef struct{ conn *wsConn }

type socketRefKey struct{}

func socketRefFrom(ctx context.Context) *socketRef {
	ref, _ := ctx.Value(socketRefKey{}).(*socketRef)
	return ref
}

// sockets are the open, authenticated websockets by the token that opened them.
type sockets struct {
	live  func(ctx context.Context, tokenIDs []string) (map[string]bool, error)
	every time.Duration
	log   *slog.Logger

	mu       sync.Mutex
	byConn   map[*wsConn]string
	watching bool
}

func newSockets(live func(context.Context, []string) (map[string]bool, error), every time.Duration, log *slog.Logger) *sockets {
	return &sockets{live: live, every: every, log: log, byConn: map[*wsConn]string{}}
}

// add watches c, opened with tokenID; the watch runs while any socket is open.
func (s *sockets) add(c *wsConn, tokenID string) {
	if s.live == nil || c == nil || tokenID == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.byConn[c] = tokenID
	c.onRelease(func() { s.remove(c) })
	if !s.watching {
		s.watching = true
		go s.watch()
	}
}

func (s *sockets) remove(c *wsConn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.byConn, c)
}

// watch checks the open sockets' tokens every interval, until none is open.
func (s *sockets) watch() {
	t := time.NewTicker(s.every)
	defer t.Stop()
	for range t.C {
		s.mu.Lock()
		if len(s.byConn) == 0 {
			s.watching = false
			s.mu.Unlock()
			return
		}
		ids := make([]string, 0, len(s.byConn))
		seen := map[string]bool{}
		for _, id := range s.byConn {
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
		s.mu.Unlock()
		live, err := s.checkAll(ids)
		if err != nil {
			s.log.Warn("checking the tokens of open websockets failed; will retry", slog.Any("err", err))
			continue
		}
		s.mu.Lock()
		var revoked []*wsConn
		for c, id := range s.byConn {
			if seen[id] && !live[id] {
				revoked = append(revoked, c)
				delete(s.byConn, c)
			}
		}
		s.mu.Unlock()
		for _, c := range revoked {
			c.closeWith(CloseForbidden, "Forbidden: the token was revoked")
		}
	}
}

// checkAll asks about ids in batches, so one statement's parameters stay
// bounded however many sockets are open.
func (s *sockets) checkAll(ids []string) (map[string]bool, error) {
	const batch = 500
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out := map[string]bool{}
	for len(ids) > 0 {
		n := min(batch, len(ids))
		live, err := s.live(ctx, ids[:n])
		if err != nil {
			return nil, err
		}
		for id, ok := range live {
			out[id] = ok
		}
		ids = ids[n:]
	}
	return out, nil
}

// tokenStillLive refuses an operation a websocket starts after its token was
// revoked, and closes the socket with 4403.
type tokenStillLive struct{ s *sockets }

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = tokenStillLive{}

func (tokenStillLive) ExtensionName() string                   { return "TokenStillLive" }
func (tokenStillLive) Validate(graphql.ExecutableSchema) error { return nil }

func (t tokenStillLive) MutateOperationContext(ctx context.Context, _ *graphql.OperationContext) *gqlerror.Error {
	p := auth.FromContext(ctx)
	if t.s.live == nil || ctx.Value(websocketKey{}) == nil || p == nil || p.TokenID == "" {
		return nil // HTTP requests authenticate each time
	}
	live, err := t.s.live(ctx, []string{p.TokenID})
	if err != nil {
		return gqlerror.Errorf("internal error")
	}
	if live[p.TokenID] {
		return nil
	}
	if ref := socketRefFrom(ctx); ref != nil && ref.conn != nil {
		ref.conn.closeAfterOperation(CloseForbidden, "Forbidden: the token was revoked")
	}
	e := gqlerror.Errorf("the token was revoked")
	e.Extensions = map[string]any{"code": string(domain.CodeUnauthenticated)}
	return e
}
