package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/gorilla/websocket"

	"github.com/taskgraph/taskgraph/internal/domain"
)

// wsConn adapts one gorilla connection to gqlgen. Beside moving frames it
// enforces what the protocol asks of a server and gqlgen leaves out: the
// init timeout (4408), one connection_init (4429), no subscribe before it
// (4401), unique running ids (4409), a cap on running operations (4429),
// well-formed messages (4400), the quota of its principal (wsquota.go); and it keeps the connection honest: a read
// limit, a deadline on every write, pings and a read deadline that a silent
// peer runs into.
type wsConn struct {
	ws      *websocket.Conn
	cfg     WebsocketConfig
	metrics *metrics
	req     context.Context // ends only when the server shuts down
	types   map[string]bool

	mu          sync.Mutex
	wmu         sync.Mutex      // guards the data frames' writing (wswrite.go): gqlgen's and the refusals check writes
	written     *sync.Cond      // on wmu: pending frames were written
	pending     []byte          // frames waiting for the write in progress
	spare       []byte          // the last written buffer, reused
	flushing    bool            // a write is on the socket
	writeErr    error           // the first write error: the connection is broken
	writeClosed bool            // the close frame is (being) sent: no more data frames
	active      map[string]bool // ids of running operations; true: counted against the quota
	quota       *wsQuotas       // set once connection_init is admitted
	quotaKey    string
	inited      bool
	closing     bool          // our close frame is sent
	peerGone    bool          // the peer closed, or the connection broke
	reading     bool          // NextReader is reading for gqlgen
	draining    bool          // gqlgen is done reading: drain reads for the peer's close frame
	counted     bool          // the gauges were decremented
	released    func()        // run once the connection is released (revocation watch)
	closeAfter  *closeRequest // a close owed once the current operation is answered
	// The id of the subscribe message just read, and the operations bound
	// to their ids (wsdirect.go): gqlgen creates an operation's context
	// right after reading its message, before reading the next.
	lastSubscribe string
	opIDs         map[*graphql.OperationContext]string
	initTimer     *time.Timer
	pingTimer     *time.Timer
	linger        *time.Timer
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
		code, reason, refusedID := c.check(data)
		if code != 0 {
			c.closeWith(code, reason)
			continue
		}
		if refusedID != "" {
			c.refuseOperation(refusedID, reason)
			continue
		}
		return mt, bytes.NewReader(data), nil
	}
}

// check applies the protocol rules to a client message; a non-zero code
// closes the connection, a refusedID refuses that operation alone (reason
// says why) and the connection goes on.
func (c *wsConn) check(data []byte) (code int, reason, refusedID string) {
	var m struct {
		Type string `json:"type"`
		ID   string `json:"id"`
	}
	if err := json.Unmarshal(data, &m); err != nil || !c.types[m.Type] {
		return CloseBadRequest, "Invalid message received", ""
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch m.Type {
	case "connection_init":
		if c.inited {
			return CloseTooMany, "Too many initialisation requests", ""
		}
		c.inited = true
		c.initTimer.Stop()
	case "subscribe", "start":
		switch {
		case !c.inited:
			return CloseUnauthorized, "Unauthorized", ""
		case m.ID == "":
			return CloseBadRequest, "Invalid message received: subscribe without id", ""
		}
		if _, running := c.active[m.ID]; running {
			return CloseSubscriberExists, "Subscriber for " + m.ID + " already exists", ""
		}
		if len(c.active) >= c.cfg.MaxSubscriptions {
			c.metrics.websocketRefusals.WithLabelValues(refusedOperationsPerConnection).Inc()
			return CloseTooMany, fmt.Sprintf("Too many subscriptions: at most %d at once on one connection", c.cfg.MaxSubscriptions), ""
		}
		counted := c.quota != nil
		if counted && !c.quota.startOp(c.quotaKey) {
			c.metrics.websocketRefusals.WithLabelValues(refusedOperationsPerUser).Inc()
			return 0, fmt.Sprintf("too many subscriptions: at most %d running at once per token or user", c.cfg.MaxSubscriptionsPerUser), m.ID
		}
		c.active[m.ID] = counted
		c.lastSubscribe = m.ID
		c.metrics.subscriptions.Inc()
	}
	return 0, "", ""
}

// admit counts the connection against key's quota once connection_init is
// authenticated; false: key holds the most connections already.
func (c *wsConn) admit(q *wsQuotas, key string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.counted || c.quota != nil {
		return true // already released (the peer left), or admitted
	}
	if !q.openConn(key) {
		return false
	}
	c.quota, c.quotaKey = q, key
	return true
}

// refuseOperation answers a subscribe the quota refused with an error
// message for its id: the operation never starts, the connection and its
// other operations go on, and the client may subscribe again later.
func (c *wsConn) refuseOperation(id, message string) {
	c.metrics.countError(string(domain.CodeLimitExceeded))
	payload, _ := json.Marshal([]map[string]any{{
		"message":    message,
		"extensions": map[string]any{"code": string(domain.CodeLimitExceeded)},
	}})
	_ = c.write(wsMessage{typ: "error", id: id, payload: payload}.appendJSON(nil))
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
		if counted, ok := c.active[m.id]; ok {
			delete(c.active, m.id)
			c.metrics.subscriptions.Dec()
			if counted {
				c.quota.endOp(c.quotaKey)
			}
		}
		c.mu.Unlock()
	}
	buf := messageBuffers.Get().(*[]byte)
	defer messageBuffers.Put(buf)
	*buf = m.appendJSON((*buf)[:0])
	err := c.write(*buf)
	if m.typ == "complete" || m.typ == "error" {
		c.mu.Lock()
		pending := c.closeAfter
		c.closeAfter = nil
		c.mu.Unlock()
		if pending != nil {
			c.closeWith(pending.code, pending.reason)
		}
	}
	return err
}

// closeAfterOperation closes the connection with code once the operation in
// progress has been answered (its complete or error is written), so that the
// client reads why before the close.
func (c *wsConn) closeAfterOperation(code int, reason string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closeAfter = &closeRequest{code: code, reason: reason}
}

// closeRequest is a close the connection owes once an operation is answered.
type closeRequest struct {
	code   int
	reason string
}

// wsMessage is one of gqlgen's (unexported) message structs, read by field:
// every event of every subscription passes here, and encoding it by hand
// spares re-validating the payload gqlgen has just encoded.
type wsMessage struct {
	typ, id string
	payload json.RawMessage
}

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
		c.closeWrites()
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
	if c.released != nil {
		go c.released() // it takes the watch's lock, which may be held while closing c
	}
	c.metrics.websocketConnections.Dec()
	c.metrics.subscriptions.Sub(float64(len(c.active)))
	if c.quota != nil {
		for _, counted := range c.active {
			if counted {
				c.quota.endOp(c.quotaKey)
			}
		}
		c.quota.closeConn(c.quotaKey)
	}
	clear(c.active)
}

// onRelease adds f to what runs once the connection is released.
func (c *wsConn) onRelease(f func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if prev := c.released; prev != nil {
		c.released = func() { prev(); f() }
		return
	}
	c.released = f
}
