package server

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/gorilla/websocket"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/taskgraph/taskgraph/internal/auth"
	"github.com/taskgraph/taskgraph/internal/domain"
)

// WebsocketConfig configures GraphQL over websockets: GET /graphql with
// Upgrade, subprotocols graphql-transport-ws and legacy graphql-ws. Zero
// values take the defaults.
type WebsocketConfig struct {
	// AllowedOrigins are the origins ("https://app.example.com") whose pages
	// may open websockets besides the server's own; "*" allows any. Clients
	// that send no Origin (programs, not browsers) are always allowed.
	AllowedOrigins []string
	// InitTimeout: connection_init must arrive within it, else close 4408.
	InitTimeout time.Duration
	// PingInterval: how often the server sends a websocket ping.
	PingInterval time.Duration
	// PongTimeout: a peer from which nothing (not even a pong) arrives for
	// this long is dead; its connection is closed.
	PongTimeout time.Duration
	// WriteTimeout bounds the write of every frame.
	WriteTimeout time.Duration
	// KeepAliveInterval: how often legacy graphql-ws clients get "ka".
	KeepAliveInterval time.Duration
	// ReadLimit is the largest message a client may send (bytes).
	ReadLimit int64
	// MaxSubscriptions is the most operations a connection may have running
	// at once; one more closes it with 4429.
	MaxSubscriptions int
	// MaxConnectionsPerUser is the most websockets one principal (an API
	// token, or an OpenID Connect user) may hold open on this process; the
	// connection_init of one more is refused, closing it with 4429.
	MaxConnectionsPerUser int
	// MaxSubscriptionsPerUser is the most operations one principal may have
	// running on the websockets of this process, over all its connections;
	// one more is answered with an error message (LIMIT_EXCEEDED) and the
	// connection goes on.
	MaxSubscriptionsPerUser int
	// CloseLinger: how long a connection the server closed waits for the
	// peer's answering close frame before its TCP connection is closed
	// anyway (a peer that answers ends it at once).
	CloseLinger time.Duration
	// TokenCheckInterval: how often the tokens of open connections are
	// checked; a connection whose token was revoked is closed with 4403.
	TokenCheckInterval time.Duration
	// SharedQueue bounds the responses waiting for one member of a shared
	// subscription (multiplex.go); default DefaultSharedQueue.
	SharedQueue int
}

// Websocket defaults.
const (
	DefaultInitTimeout       = 10 * time.Second
	DefaultPingInterval      = 20 * time.Second
	DefaultWriteTimeout      = 10 * time.Second
	DefaultKeepAliveInterval = 15 * time.Second
	DefaultWSReadLimit       = 64 << 10
	DefaultMaxSubscriptions  = 100
	// A dashboard holds a few websockets and agents one each; 50 connections
	// and 500 running operations per principal leave them far from the caps
	// while one tenant cannot hold thousands.
	DefaultMaxConnectionsPerUser   = 50
	DefaultMaxSubscriptionsPerUser = 500
	DefaultCloseLinger             = time.Second
)

func (c WebsocketConfig) withDefaults() WebsocketConfig {
	if c.InitTimeout <= 0 {
		c.InitTimeout = DefaultInitTimeout
	}
	if c.PingInterval <= 0 {
		c.PingInterval = DefaultPingInterval
	}
	if c.PongTimeout <= 0 {
		c.PongTimeout = 2*c.PingInterval + c.PingInterval/2
	}
	if c.WriteTimeout <= 0 {
		c.WriteTimeout = DefaultWriteTimeout
	}
	if c.KeepAliveInterval <= 0 {
		c.KeepAliveInterval = DefaultKeepAliveInterval
	}
	if c.ReadLimit <= 0 {
		c.ReadLimit = DefaultWSReadLimit
	}
	if c.MaxSubscriptions <= 0 {
		c.MaxSubscriptions = DefaultMaxSubscriptions
	}
	if c.MaxConnectionsPerUser <= 0 {
		c.MaxConnectionsPerUser = DefaultMaxConnectionsPerUser
	}
	if c.MaxSubscriptionsPerUser <= 0 {
		c.MaxSubscriptionsPerUser = DefaultMaxSubscriptionsPerUser
	}
	if c.CloseLinger <= 0 {
		c.CloseLinger = DefaultCloseLinger
	}
	if c.TokenCheckInterval <= 0 {
		c.TokenCheckInterval = DefaultTokenCheckInterval
	}
	return c
}

// Close codes (graphql-transport-ws's, used for legacy graphql-ws too).
const (
	CloseBadRequest       = 4400 // a message that is not JSON or of no known type
	CloseUnauthorized     = 4401 // subscribe before connection_init
	CloseForbidden        = 4403 // connection_init without a valid token
	CloseInitTimeout      = 4408 // no connection_init in time
	CloseSubscriberExists = 4409 // subscribe with an id that is running
	CloseTooMany          = 4429 // a second connection_init, too many operations on one connection, or too many connections of one principal
	CloseInternal         = 4500 // authentication could not be decided (database down)
)

const (
	subprotocolTransportWS = "graphql-transport-ws"
	subprotocolGraphQLWS   = "graphql-ws"
)

// clientMessages are the message types a client may send, per subprotocol
// ("" is legacy graphql-ws, as gqlgen treats it).
var clientMessages = map[string]map[string]bool{
	subprotocolTransportWS: {"connection_init": true, "ping": true, "pong": true, "subscribe": true, "complete": true},
	subprotocolGraphQLWS:   {"connection_init": true, "start": true, "stop": true, "connection_terminate": true},
	"":                     {"connection_init": true, "start": true, "stop": true, "connection_terminate": true},
}

// websocketKey marks the context of operations that arrived over a websocket.
type websocketKey struct{}

// websocketTransport is gqlgen's websocket transport behind the checks gqlgen
// does not make: a real upgrade request, and an allowed origin.
type websocketTransport struct {
	inner transport.Websocket
	s     *server
}

func (s *server) newWebsocketTransport() websocketTransport {
	cfg := s.cfg.Websocket
	limit := cfg.ReadLimit
	return websocketTransport{s: s, inner: transport.Websocket{
		Implementation: &gorillaWebsocket{cfg: cfg, log: s.log, metrics: s.metrics,
			pool: &sync.Pool{}},
		InitFunc: s.websocketInit,
		// The adapter enforces the init timeout itself, to close with 4408.
		KeepAlivePingInterval: cfg.KeepAliveInterval,
		PayloadReadLimit:      &limit,
		ErrorFunc: func(ctx context.Context, err error) {
			// Mostly peers that went away mid-write; worth a debug line only.
			LoggerFrom(ctx).DebugContext(ctx, "websocket error", slog.Any("err", err))
		},
	}}
}

var _ graphql.Transport = websocketTransport{}

func (t websocketTransport) Supports(r *http.Request) bool { return t.inner.Supports(r) }

func (t websocketTransport) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	if !websocket.IsWebSocketUpgrade(r) {
		writeGraphQLError(w, http.StatusBadRequest, codeBadRequest, "expected a websocket upgrade (Connection: Upgrade, Upgrade: websocket)")
		return
	}
	if !t.s.originAllowed(r) {
		t.s.metrics.countError(string(domain.CodeForbidden))
		writeGraphQLError(w, http.StatusForbidden, string(domain.CodeForbidden),
			"cross-origin websocket refused: the origin is not in the server's --allowed-origins")
		return
	}
	exec = t.s.mux.wrap(exec)
	r = r.WithContext(context.WithValue(r.Context(), socketRefKey{}, &socketRef{}))
	sd, _ := r.Context().Value(shutdownKey{}).(*shutdown)
	if sd == nil {
		t.inner.Do(w, r, exec) // not under Serve (tests): the handler serves the socket
		return
	}
	// Hand the connection to a goroutine of its own and let the handler
	// return: net/http then drops what it holds for the request (its
	// connection state, buffers, the handler's deep stack), which an idle
	// subscriber would otherwise keep for hours. The request context ends
	// with the handler, so the socket's context ends with the server instead.
	ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	stop := context.AfterFunc(sd.ctx, cancel)
	hw := &hijackSignal{ResponseWriter: w, hijacked: make(chan struct{})}
	done := make(chan struct{})
	sd.websockets.Add(1)
	go serveWebsocket(t.inner, hw, r.WithContext(ctx), exec, done, cancel, stop, &sd.websockets)
	select {
	case <-hw.hijacked: // w is no longer used
	case <-done: // refused: gqlgen has answered through w
	}
}

// hijackSignal tells the handler when the upgrade has taken the connection.
type hijackSignal struct {
	http.ResponseWriter
	hijacked chan struct{}
}

func (h *hijackSignal) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, rw, err := http.NewResponseController(h.ResponseWriter).Hijack()
	if err == nil {
		close(h.hijacked)
	}
	return c, rw, err
}

func (h *hijackSignal) Unwrap() http.ResponseWriter { return h.ResponseWriter }

// serveWebsocket runs gqlgen's websocket transport for one connection. A
// function of its own, not a closure, so that nothing of the request's
// handler (its response writer, the original request) stays reachable while
// the connection lives.
func serveWebsocket(ws transport.Websocket, w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor,
	done chan<- struct{}, cancel context.CancelFunc, stop func() bool, open *sync.WaitGroup,
) {
	defer open.Done()
	defer close(done)
	defer cancel()
	defer stop()
	ws.Do(w, r, exec)
}

// originAllowed refuses cross-site websocket hijacking: a browser page of
// another origin must be allowed explicitly. Programs send no Origin.
func (s *server) originAllowed(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	if strings.EqualFold(u.Host, r.Host) {
		return true
	}
	for _, allowed := range s.cfg.Websocket.AllowedOrigins {
		if allowed == "*" || strings.EqualFold(strings.TrimSuffix(allowed, "/"), origin) {
			return true
		}
	}
	return false
}

// websocketInit authenticates connection_init: {"Authorization": "Bearer
// <token>"} or {"token": "<token>"}. Without a valid token (or a valid
// Authorization header on the upgrade request) the connection is closed with
// 4403 before any operation runs.
func (s *server) websocketInit(ctx context.Context, payload transport.InitPayload) (context.Context, *transport.InitPayload, error) {
	ctx = context.WithValue(ctx, websocketKey{}, true)
	token := auth.BearerToken(payload.Authorization())
	if token == "" {
		token = strings.TrimSpace(payload.GetString("token"))
	}
	if token == "" {
		if p := auth.FromContext(ctx); p != nil && authErrorFrom(ctx) == nil {
			if !s.admitSocket(ctx, p) {
				return s.refuseTooManySockets(ctx)
			}
			s.watchSocket(ctx, p)
			return ctx, nil, nil // the upgrade request carried a valid header
		}
		return refuse(ctx, CloseForbidden, "Forbidden: no token in connection_init")
	}
	authed, err := s.authenticateToken(context.WithValue(ctx, authErrorKey, nil), token)
	if err != nil {
		if domain.ErrorCode(err) == domain.CodeUnavailable {
			LoggerFrom(ctx).WarnContext(ctx, "websocket authentication failed", slog.Any("err", err))
			return refuse(ctx, CloseInternal, "Service unavailable: the database cannot be reached; retry later")
		}
		LoggerFrom(ctx).ErrorContext(ctx, "websocket authentication failed", slog.Any("err", err))
		return refuse(ctx, CloseInternal, "Internal server error")
	}
	if auth.FromContext(authed) == nil || auth.FromContext(authed) == auth.FromContext(ctx) {
		return refuse(ctx, CloseForbidden, "Forbidden: invalid token")
	}
	if !s.admitSocket(authed, auth.FromContext(authed)) {
		return s.refuseTooManySockets(ctx)
	}
	s.watchSocket(authed, auth.FromContext(authed))
	return authed, nil, nil
}

// admitSocket counts the connection of ctx against its principal's quota
// (wsquota.go); false: the principal holds the most connections already.
func (s *server) admitSocket(ctx context.Context, p *auth.Principal) bool {
	ref := socketRefFrom(ctx)
	if ref == nil || ref.conn == nil {
		return true
	}
	return ref.conn.admit(s.wsQuotas, quotaKey(p))
}

func (s *server) refuseTooManySockets(ctx context.Context) (context.Context, *transport.InitPayload, error) {
	s.metrics.websocketRefusals.WithLabelValues(refusedConnectionsPerUser).Inc()
	return refuse(ctx, CloseTooMany, fmt.Sprintf("Too many connections: at most %d open websockets per token or user",
		s.cfg.Websocket.MaxConnectionsPerUser))
}

// watchSocket puts the connection of ctx under the revocation watch of its
// token (revocation.go).
func (s *server) watchSocket(ctx context.Context, p *auth.Principal) {
	if ref := socketRefFrom(ctx); ref != nil {
		s.sockets.add(ref.conn, p.TokenID)
		closeAtExpiry(ref.conn, p)
	}
}

// refuse makes connection_init fail: the connection closes with code and
// reason (a legacy graphql-ws client also gets reason as connection_error).
func refuse(ctx context.Context, code int, reason string) (context.Context, *transport.InitPayload, error) {
	ctx = transport.AppendCloseReason(transport.WithWebsocketCloseCode(ctx, code), reason)
	return ctx, nil, errors.New(reason)
}

// subscriptionsOnWebsocket refuses subscriptions on the HTTP transports: they
// stream, which needs the websocket.
type subscriptionsOnWebsocket struct{}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = subscriptionsOnWebsocket{}

func (subscriptionsOnWebsocket) ExtensionName() string                   { return "SubscriptionsOnWebsocket" }
func (subscriptionsOnWebsocket) Validate(graphql.ExecutableSchema) error { return nil }

func (subscriptionsOnWebsocket) MutateOperationContext(ctx context.Context, opCtx *graphql.OperationContext) *gqlerror.Error {
	if opCtx.Operation == nil || opCtx.Operation.Operation != ast.Subscription || ctx.Value(websocketKey{}) != nil {
		return nil
	}
	err := gqlerror.Errorf("subscriptions need a websocket: GET /graphql with Upgrade: websocket (graphql-transport-ws)")
	err.Extensions = map[string]any{"code": codeBadRequest}
	return err
}

// gorillaWebsocket is gqlgen's WebsocketImplementation on gorilla/websocket.
type gorillaWebsocket struct {
	cfg     WebsocketConfig
	log     *slog.Logger
	metrics *metrics
	pool    *sync.Pool // write buffers, held only while writing
}

func (g *gorillaWebsocket) Accept(w http.ResponseWriter, r *http.Request, opts transport.WebsocketAcceptOptions) (transport.WebsocketConn, error) {
	// Prefer the current protocol when a client offers both.
	var protocols []string
	for _, p := range []string{subprotocolTransportWS, subprotocolGraphQLWS} {
		for _, offered := range opts.Subprotocols {
			if p == offered {
				protocols = append(protocols, p)
			}
		}
	}
	up := websocket.Upgrader{
		HandshakeTimeout: g.cfg.WriteTimeout,
		// A small read buffer of its own (net/http's 4 KiB one is let go):
		// client messages are small, and larger ones read through it all
		// the same.
		ReadBufferSize:  256,
		WriteBufferPool: g.pool,
		Subprotocols:    protocols,
		CheckOrigin:     func(*http.Request) bool { return true }, // checked before, with --allowed-origins
		Error:           func(http.ResponseWriter, *http.Request, int, error) {},
	}
	ws, err := up.Upgrade(w, r, opts.ResponseHeader)
	if err != nil {
		return nil, err
	}
	// gqlgen keeps the request's headers for the connection's lifetime, to
	// hand them to operations; ours read none, and an idle subscriber need
	// not hold a browser's cookies and user agent for hours.
	r.Header = http.Header{}
	c := &wsConn{ws: ws, cfg: g.cfg, metrics: g.metrics, req: r.Context(),
		types: clientMessages[ws.Subprotocol()], active: map[string]bool{}}
	if c.types == nil {
		c.types = clientMessages[""]
	}
	c.written = sync.NewCond(&c.wmu)
	g.metrics.websocketConnections.Inc()
	if ref := socketRefFrom(r.Context()); ref != nil {
		ref.conn = c
	}
	c.start()
	return c, nil
}

var messageBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// messageFields are the field indexes of gqlgen's message types.
type messageFields struct{ typ, id, payload int }

var messageTypes sync.Map // reflect.Type -> *messageFields (nil: not a message)
