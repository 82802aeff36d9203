package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

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
	// CloseLinger: how long a connection the server closed waits for the
	// peer's answering close frame before its TCP connection is closed
	// anyway (a peer that answers ends it at once).
	CloseLinger time.Duration
}

// Websocket defaults.
const (
	DefaultInitTimeout       = 10 * time.Second
	DefaultPingInterval      = 20 * time.Second
	DefaultWriteTimeout      = 10 * time.Second
	DefaultKeepAliveInterval = 15 * time.Second
	DefaultWSReadLimit       = 64 << 10
	DefaultMaxSubscriptions  = 100
	DefaultCloseLinger       = time.Second
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
	if c.CloseLinger <= 0 {
		c.CloseLinger = DefaultCloseLinger
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
	CloseTooMany          = 4429 // a second connection_init, or too many subscriptions
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
		if auth.FromContext(ctx) != nil && authErrorFrom(ctx) == nil {
			return ctx, nil, nil // the upgrade request carried a valid header
		}
		return refuse(ctx, CloseForbidden, "Forbidden: no token in connection_init")
	}
	authed, err := s.authenticateToken(context.WithValue(ctx, authErrorKey, nil), token)
	if err != nil {
		LoggerFrom(ctx).ErrorContext(ctx, "websocket authentication failed", slog.Any("err", err))
		return refuse(ctx, CloseInternal, "Internal server error")
	}
	if auth.FromContext(authed) == nil || auth.FromContext(authed) == auth.FromContext(ctx) {
		return refuse(ctx, CloseForbidden, "Forbidden: invalid token")
	}
	return authed, nil, nil
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
		types: clientMessages[ws.Subprotocol()], active: map[string]struct{}{}}
	if c.types == nil {
		c.types = clientMessages[""]
	}
	g.metrics.websocketConnections.Inc()
	c.start()
	return c, nil
}

// wsConn adapts one gorilla connection to gqlgen. Beside moving frames it
// enforces what the protocol asks of a server and gqlgen leaves out: the
// init timeout (4408), one connection_init (4429), no subscribe before it
// (4401), unique running ids (4409), a cap on running operations (4429),
// well-formed messages (4400); and it keeps the connection honest: a read
// limit, a deadline on every write, pings and a read deadline that a silent
// peer runs into.
type wsConn struct {
	ws      *websocket.Conn
	cfg     WebsocketConfig
	metrics *metrics
	req     context.Context // ends only when the server shuts down
	types   map[string]bool

	mu        sync.Mutex
	active    map[string]struct{} // ids of running operations
	inited    bool
	closing   bool // our close frame is sent
	peerGone  bool // the peer closed, or the connection broke
	reading   bool // NextReader is reading for gqlgen
	draining  bool // gqlgen is done reading: drain reads for the peer's close frame
	counted   bool // the gauges were decremented
	initTimer *time.Timer
	pingTimer *time.Timer
	linger    *time.Timer
}

var (
	_ transport.WebsocketConn        = (*wsConn)(nil)
	_ transport.WebsocketReadLimiter = (*wsConn)(nil)
)

func (c *wsConn) start() {
	_ = c.ws.SetReadDeadline(time.Now().Add(c.cfg.PongTimeout))
	c.ws.SetPongHandler(func(string) error {
		return c.ws.SetReadDeadline(time.Now().Add(c.cfg.PongTimeout))
	})
	c.mu.Lock()
	defer c.mu.Unlock()
	c.initTimer = time.AfterFunc(c.cfg.InitTimeout, func() {
		c.mu.Lock()
		inited := c.inited
		c.mu.Unlock()
		if !inited {
			c.closeWith(CloseInitTimeout, "Connection initialisation timeout")
		}
	})
	c.pingTimer = time.AfterFunc(c.cfg.PingInterval, c.ping)
}

func (c *wsConn) ping() {
	if err := c.ws.WriteControl(websocket.PingMessage, nil, time.Now().Add(c.cfg.WriteTimeout)); err != nil {
		return // broken: the reader finds out
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.closing && !c.peerGone {
		c.pingTimer.Reset(c.cfg.PingInterval)
	}
}

func (c *wsConn) Subprotocol() string { return c.ws.Subprotocol() }

func (c *wsConn) SetReadLimit(limit int64) { c.ws.SetReadLimit(limit) }

// NextReader returns the next message for gqlgen, after checking it. A
// message that breaks the protocol closes the connection with its code; the
// reader then waits for the peer's close frame and reports the connection
// closed.
func (c *wsConn) NextReader() (int, io.Reader, error) {
	c.mu.Lock()
	if c.draining {
		c.mu.Unlock()
		return 0, nil, transport.ErrWebsocketClosed
	}
	c.reading = true
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.reading = false
		c.mu.Unlock()
	}()
	for {
		mt, data, err := c.ws.ReadMessage()
		if err != nil {
			c.mu.Lock()
			c.peerGone = true
			closing := c.closing
			c.mu.Unlock()
			c.release()
			_ = c.ws.NetConn().Close()
			if closing || websocket.IsCloseError(err, websocket.CloseNormalClosure, websocket.CloseGoingAway, websocket.CloseNoStatusReceived) {
				return 0, nil, transport.ErrWebsocketClosed
			}
			return 0, nil, err
		}
		// Any message shows the peer is alive.
		_ = c.ws.SetReadDeadline(time.Now().Add(c.cfg.PongTimeout))
		c.mu.Lock()
		closing := c.closing
		c.mu.Unlock()
		if closing {
			continue // waiting for the peer's close frame
		}
		if code, reason := c.check(data); code != 0 {
			c.closeWith(code, reason)
			continue
		}
		return mt, bytes.NewReader(data), nil
	}
}

// check applies the protocol rules to a client message; a non-zero code
// closes the connection.
func (c *wsConn) check(data []byte) (int, string) {
	var m struct {
		Type string `json:"type"`
		ID   string `json:"id"`
	}
	if err := json.Unmarshal(data, &m); err != nil || !c.types[m.Type] {
		return CloseBadRequest, "Invalid message received"
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch m.Type {
	case "connection_init":
		if c.inited {
			return CloseTooMany, "Too many initialisation requests"
		}
		c.inited = true
		c.initTimer.Stop()
	case "subscribe", "start":
		switch {
		case !c.inited:
			return CloseUnauthorized, "Unauthorized"
		case m.ID == "":
			return CloseBadRequest, "Invalid message received: subscribe without id"
		}
		if _, running := c.active[m.ID]; running {
			return CloseSubscriberExists, "Subscriber for " + m.ID + " already exists"
		}
		if len(c.active) >= c.cfg.MaxSubscriptions {
			return CloseTooMany, fmt.Sprintf("Too many subscriptions: at most %d at once on one connection", c.cfg.MaxSubscriptions)
		}
		c.active[m.ID] = struct{}{}
		c.metrics.subscriptions.Inc()
	}
	return 0, ""
}

// WriteJSON writes one message with a deadline; a failed write breaks the
// connection, which ends the reader and with it every operation.
func (c *wsConn) WriteJSON(v any) error {
	m, ok := readMessage(v)
	if !ok {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		return c.write(b)
	}
	if m.typ == "complete" && c.req.Err() != nil {
		// The server is shutting down: the operation did not complete, its
		// connection is going away (1001), and the client should resume
		// elsewhere rather than think the stream ended.
		return nil
	}
	if m.id != "" && (m.typ == "complete" || m.typ == "error") {
		c.mu.Lock()
		if _, ok := c.active[m.id]; ok {
			delete(c.active, m.id)
			c.metrics.subscriptions.Dec()
		}
		c.mu.Unlock()
	}
	buf := messageBuffers.Get().(*[]byte)
	defer messageBuffers.Put(buf)
	*buf = m.appendJSON((*buf)[:0])
	return c.write(*buf)
}

func (c *wsConn) write(b []byte) error {
	_ = c.ws.SetWriteDeadline(time.Now().Add(c.cfg.WriteTimeout))
	if err := c.ws.WriteMessage(websocket.TextMessage, b); err != nil {
		c.mu.Lock()
		c.peerGone = true
		c.mu.Unlock()
		_ = c.ws.NetConn().Close()
		return err
	}
	return nil
}

var messageBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// wsMessage is one of gqlgen's (unexported) message structs, read by field:
// every event of every subscription passes here, and encoding it by hand
// spares re-validating the payload gqlgen has just encoded.
type wsMessage struct {
	typ, id string
	payload json.RawMessage
}

// messageFields are the field indexes of gqlgen's message types.
type messageFields struct{ typ, id, payload int }

var messageTypes sync.Map // reflect.Type -> *messageFields (nil: not a message)

func readMessage(v any) (wsMessage, bool) {
	rv := reflect.Indirect(reflect.ValueOf(v))
	if rv.Kind() != reflect.Struct {
		return wsMessage{}, false
	}
	t := rv.Type()
	fi, ok := messageTypes.Load(t)
	if !ok {
		var f *messageFields
		typ, okT := t.FieldByName("Type")
		id, okI := t.FieldByName("ID")
		payload, okP := t.FieldByName("Payload")
		if okT && okI && okP && typ.Type.Kind() == reflect.String && id.Type.Kind() == reflect.String &&
			payload.Type == reflect.TypeFor[json.RawMessage]() {
			f = &messageFields{typ: typ.Index[0], id: id.Index[0], payload: payload.Index[0]}
		}
		fi, _ = messageTypes.LoadOrStore(t, f)
	}
	f := fi.(*messageFields)
	if f == nil {
		return wsMessage{}, false
	}
	return wsMessage{typ: rv.Field(f.typ).String(), id: rv.Field(f.id).String(),
		payload: rv.Field(f.payload).Bytes()}, true
}

// appendJSON encodes the message as gqlgen's struct tags do:
// {"payload":…,"id":…,"type":…}, payload and id omitted when empty.
func (m wsMessage) appendJSON(b []byte) []byte {
	b = append(b, '{')
	if len(m.payload) > 0 {
		b = append(b, `"payload":`...)
		b = append(b, m.payload...)
		b = append(b, ',')
	}
	if m.id != "" {
		b = append(b, `"id":`...)
		b = appendJSONString(b, m.id)
		b = append(b, ',')
	}
	b = append(b, `"type":`...)
	b = appendJSONString(b, m.typ)
	return append(b, '}')
}

// appendJSONString appends s as a JSON string (s is valid UTF-8: it came
// from JSON or from gqlgen's constants).
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}

// WriteClose sends a close frame. gqlgen closes with 1000 when the request
// context ends, which for a hijacked connection means the server is shutting
// down: that is 1001, going away, and clients should reconnect.
func (c *wsConn) WriteClose(code int, message string) error {
	if code == websocket.CloseNormalClosure && c.req.Err() != nil {
		code, message = websocket.CloseGoingAway, "server shutting down"
	}
	c.closeWith(code, message)
	return nil
}

func (c *wsConn) closeWith(code int, message string) {
	c.mu.Lock()
	if c.closing {
		c.mu.Unlock()
		return
	}
	c.closing = true
	c.initTimer.Stop()
	c.pingTimer.Stop()
	gone := c.peerGone
	c.mu.Unlock()
	if !gone {
		_ = c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, closeReason(message)),
			time.Now().Add(c.cfg.WriteTimeout))
	}
	c.lingerClose()
}

// closeReason fits a reason into a close frame (at most 123 bytes, whole
// UTF-8 characters): a client's id in it may be long.
func closeReason(s string) string {
	const limit = 123
	if len(s) <= limit {
		return s
	}
	cut := limit - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// Close closes the TCP connection once the peer has answered our close
// frame, or after CloseLinger, so that the close frame is not lost to a reset.
func (c *wsConn) Close() error {
	c.mu.Lock()
	c.closing = true
	c.initTimer.Stop()
	c.pingTimer.Stop()
	c.mu.Unlock()
	c.lingerClose()
	c.drain()
	c.release()
	return nil
}

func (c *wsConn) lingerClose() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.peerGone {
		_ = c.ws.NetConn().Close()
		return
	}
	if c.linger == nil {
		c.linger = time.AfterFunc(c.cfg.CloseLinger, func() { _ = c.ws.NetConn().Close() })
	}
}

// drain reads for the peer's answer to our close frame once gqlgen has let
// go of the connection (Close) without a read in progress — after a refused
// connection_init, or the end of its read loop — so that the TCP connection
// closes as soon as the peer answers rather than after the linger. A read in
// progress in NextReader does the same on its own.
func (c *wsConn) drain() {
	c.mu.Lock()
	if c.reading || c.draining || c.peerGone {
		c.mu.Unlock()
		return
	}
	c.draining = true
	c.mu.Unlock()
	go func() {
		for {
			// The linger closes the connection, which ends this read.
			if _, _, err := c.ws.ReadMessage(); err != nil {
				break
			}
		}
		c.mu.Lock()
		c.peerGone = true
		if c.linger != nil {
			c.linger.Stop()
		}
		c.mu.Unlock()
		_ = c.ws.NetConn().Close()
	}()
}

// release takes the connection and its running operations off the gauges,
// once.
func (c *wsConn) release() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.counted {
		return
	}
	c.counted = true
	c.metrics.websocketConnections.Dec()
	c.metrics.subscriptions.Sub(float64(len(c.active)))
	clear(c.active)
}
