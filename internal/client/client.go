// Package client is a small Go client of Taskgraph's GraphQL API: queries and
// mutations over HTTP POST, subscriptions over a graphql-transport-ws
// websocket (gorilla/websocket). `taskgraph watch` and the end-to-end tests
// use it; build agents will too.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
	"go.opentelemetry.io/otel/propagation"
)

// Client talks to one Taskgraph server.
type Client struct {
	// URL is the server's base URL (http://127.0.0.1:8080) or its GraphQL
	// endpoint (…/graphql).
	URL string
	// Token is sent as "Authorization: Bearer <token>" and in connection_init.
	Token string
	// HTTP is used for queries and mutations (default: a client with a 60s
	// timeout).
	HTTP *http.Client
	// Dialer opens websockets (default: websocket.DefaultDialer's settings).
	Dialer *websocket.Dialer
}

// New returns a client of the server at url authenticating with token.
func New(url, token string) *Client {
	return &Client{URL: url, Token: token}
}

func (c *Client) endpoint() (*url.URL, error) {
	u, err := url.Parse(c.URL)
	if err != nil {
		return nil, fmt.Errorf("client: bad server url %q: %w", c.URL, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "ws" && u.Scheme != "wss" {
		return nil, fmt.Errorf("client: bad server url %q: want http://host:port", c.URL)
	}
	if !strings.HasSuffix(u.Path, "/graphql") {
		u.Path = strings.TrimSuffix(u.Path, "/") + "/graphql"
	}
	return u, nil
}

// Error is one GraphQL error of a response.
type Error struct {
	Message    string         `json:"message"`
	Path       []any          `json:"path,omitempty"`
	Extensions map[string]any `json:"extensions,omitempty"`
}

// Code is extensions.code ("" when absent).
func (e *Error) Code() string {
	s, _ := e.Extensions["code"].(string)
	return s
}

func (e *Error) Error() string {
	if c := e.Code(); c != "" {
		return c + ": " + e.Message
	}
	return e.Message
}

// Errors are the errors of one response.
type Errors []*Error

func (es Errors) Error() string {
	msgs := make([]string, len(es))
	for i, e := range es {
		msgs[i] = e.Error()
	}
	return strings.Join(msgs, "; ")
}

// Code is the code of the first error.
func (es Errors) Code() string {
	if len(es) == 0 {
		return ""
	}
	return es[0].Code()
}

// Result is one GraphQL response: a query's, or one event of a subscription.
type Result struct {
	Data   json.RawMessage `json:"data"`
	Errors Errors          `json:"errors,omitempty"`
}

// traceContext writes W3C trace context into a request's headers.
var traceContext propagation.TraceContext

// Do runs a query or mutation and decodes its data into out (when not nil).
// GraphQL errors come back as Errors (out is still filled with what data
// there is).
func (c *Client) Do(ctx context.Context, query string, vars map[string]any, out any) error {
	u, err := c.endpoint()
	if err != nil {
		return err
	}
	if u.Scheme == "ws" || u.Scheme == "wss" {
		u.Scheme = strings.Replace(u.Scheme, "ws", "http", 1)
	}
	body, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	// The caller's span, if ctx holds one, goes with the request as W3C
	// trace context (traceparent): the server's spans join its trace.
	traceContext.Inject(ctx, propagation.HeaderCarrier(req.Header))
	hc := c.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: 60 * time.Second}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return err
	}
	var r Result
	if err := json.Unmarshal(raw, &r); err != nil {
		return fmt.Errorf("client: HTTP %d: %s", resp.StatusCode, bytes.TrimSpace(raw))
	}
	if out != nil && len(r.Data) > 0 && string(r.Data) != "null" {
		if err := json.Unmarshal(r.Data, out); err != nil {
			return fmt.Errorf("client: decoding data: %w", err)
		}
	}
	if len(r.Errors) > 0 {
		return r.Errors
	}
	return nil
}

// CloseError is the close frame that ended a websocket (4403 for a bad
// token, 1001 for a server shutting down, …).
type CloseError struct {
	Code   int
	Reason string
}

func (e *CloseError) Error() string {
	return fmt.Sprintf("websocket closed: %d %s", e.Code, e.Reason)
}

// Conn is one graphql-transport-ws connection, which can carry several
// subscriptions.
type Conn struct {
	ws *websocket.Conn

	wmu sync.Mutex // one writer at a time

	mu     sync.Mutex
	subs   map[string]*Subscription
	nextID int
	err    error         // why the connection ended
	done   chan struct{} // closed when the reader stops

	closeOnce sync.Once
	closing   chan struct{} // closed by Close: the reader stops handing results over
}

// writeTimeout bounds every write of the client.
const writeTimeout = 10 * time.Second

// Dial opens a websocket to the server and authenticates it (connection_init
// with the token, waiting for connection_ack).
func (c *Client) Dial(ctx context.Context) (*Conn, error) {
	u, err := c.endpoint()
	if err != nil {
		return nil, err
	}
	switch u.Scheme {
	case "http":
		u.Scheme = "ws"
	case "https":
		u.Scheme = "wss"
	}
	d := c.Dialer
	if d == nil {
		d = &websocket.Dialer{Proxy: http.ProxyFromEnvironment, HandshakeTimeout: 30 * time.Second}
	}
	dd := *d
	dd.Subprotocols = []string{"graphql-transport-ws"}
	header := http.Header{}
	traceContext.Inject(ctx, propagation.HeaderCarrier(header))
	ws, resp, err := dd.DialContext(ctx, u.String(), header)
	if err != nil {
		if resp != nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			resp.Body.Close()
			return nil, fmt.Errorf("client: websocket handshake: HTTP %d: %s", resp.StatusCode, bytes.TrimSpace(body))
		}
		return nil, fmt.Errorf("client: websocket: %w", err)
	}
	cn := &Conn{ws: ws, subs: map[string]*Subscription{}, done: make(chan struct{}), closing: make(chan struct{})}
	payload := map[string]any{}
	if c.Token != "" {
		payload["Authorization"] = "Bearer " + c.Token
	}
	if err := cn.send(map[string]any{"type": "connection_init", "payload": payload}); err != nil {
		ws.Close()
		return nil, err
	}
	acked := make(chan error, 1)
	go func() {
		// Until the ack, the reader is this goroutine; a deadline from ctx.
		if dl, ok := ctx.Deadline(); ok {
			_ = ws.SetReadDeadline(dl)
		}
		for {
			var m message
			if err := ws.ReadJSON(&m); err != nil {
				acked <- closeErr(err)
				return
			}
			switch m.Type {
			case "connection_ack":
				_ = ws.SetReadDeadline(time.Time{})
				acked <- nil
				return
			case "ping":
				_ = cn.send(map[string]any{"type": "pong"})
			}
		}
	}()
	select {
	case err := <-acked:
		if err != nil {
			ws.Close()
			return nil, err
		}
	case <-ctx.Done():
		ws.Close()
		<-acked
		return nil, ctx.Err()
	}
	go cn.read()
	return cn, nil
}

// message is a graphql-transport-ws message.
type message struct {
	Type    string          `json:"type"`
	ID      string          `json:"id,omitempty"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

func (cn *Conn) send(v any) error {
	cn.wmu.Lock()
	defer cn.wmu.Unlock()
	_ = cn.ws.SetWriteDeadline(time.Now().Add(writeTimeout))
	return cn.ws.WriteJSON(v)
}

// closeErr turns a read error into a *CloseError when the peer closed.
func closeErr(err error) error {
	var ce *websocket.CloseError
	if errors.As(err, &ce) {
		return &CloseError{Code: ce.Code, Reason: ce.Text}
	}
	return err
}

func (cn *Conn) read() {
	var err error
	defer func() {
		cn.mu.Lock()
		cn.err = err
		subs := cn.subs
		cn.subs = map[string]*Subscription{}
		cn.mu.Unlock()
		for _, s := range subs {
			s.finish(err)
		}
		close(cn.done)
		cn.ws.Close()
	}()
	for {
		var m message
		if err = cn.ws.ReadJSON(&m); err != nil {
			err = closeErr(err)
			return
		}
		switch m.Type {
		case "ping":
			if err = cn.send(map[string]any{"type": "pong"}); err != nil {
				return
			}
		case "next", "error", "complete":
			cn.mu.Lock()
			s := cn.subs[m.ID]
			if m.Type != "next" {
				delete(cn.subs, m.ID)
			}
			cn.mu.Unlock()
			if s == nil {
				continue
			}
			switch m.Type {
			case "next":
				var r Result
				if jerr := json.Unmarshal(m.Payload, &r); jerr != nil {
					r.Errors = Errors{{Message: "client: undecodable result: " + jerr.Error()}}
				}
				select {
				case s.results <- &r:
				case <-s.stopped:
				case <-cn.closing:
				}
			case "error":
				var es Errors
				if jerr := json.Unmarshal(m.Payload, &es); jerr != nil || len(es) == 0 {
					es = Errors{{Message: "subscription failed: " + string(m.Payload)}}
				}
				s.finish(es)
			default:
				s.finish(io.EOF)
			}
		}
	}
}

// Err is why the connection ended (nil while it is open).
func (cn *Conn) Err() error {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	return cn.err
}

// Done is closed when the connection has ended.
func (cn *Conn) Done() <-chan struct{} { return cn.done }

// Close closes the connection normally.
func (cn *Conn) Close() error {
	cn.closeOnce.Do(func() { close(cn.closing) })
	cn.wmu.Lock()
	_ = cn.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""),
		time.Now().Add(writeTimeout))
	cn.wmu.Unlock()
	select {
	case <-cn.done:
	case <-time.After(2 * time.Second):
		cn.ws.Close()
		<-cn.done
	}
	return nil
}

// Subscription is one running subscription of a Conn.
type Subscription struct {
	cn      *Conn
	id      string
	results chan *Result
	stopped chan struct{} // closed by Close: nobody reads results any more

	once sync.Once
	end  chan struct{} // closed by finish
	err  error         // io.EOF: completed; Errors: ended by an error message
}

// Subscribe starts a subscription on the connection.
func (cn *Conn) Subscribe(ctx context.Context, query string, vars map[string]any) (*Subscription, error) {
	cn.mu.Lock()
	if cn.err != nil {
		err := cn.err
		cn.mu.Unlock()
		return nil, err
	}
	cn.nextID++
	s := &Subscription{cn: cn, id: strconv.Itoa(cn.nextID), results: make(chan *Result, 64),
		stopped: make(chan struct{}), end: make(chan struct{})}
	cn.subs[s.id] = s
	cn.mu.Unlock()
	payload := map[string]any{"query": query}
	if vars != nil {
		payload["variables"] = vars
	}
	if err := cn.send(map[string]any{"type": "subscribe", "id": s.id, "payload": payload}); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Subscription) finish(err error) {
	s.once.Do(func() {
		s.err = err
		close(s.end)
	})
}

// Next returns the subscription's next result. When it has ended it returns
// io.EOF (completed), Errors (ended by an error, e.g. LIMIT_EXCEEDED with
// extensions.cursor), or the connection's error (a *CloseError when closed).
func (s *Subscription) Next(ctx context.Context) (*Result, error) {
	select {
	case r := <-s.results:
		return r, nil
	default:
	}
	select {
	case r := <-s.results:
		return r, nil
	case <-s.end:
		// Results that arrived before the end come first.
		select {
		case r := <-s.results:
			return r, nil
		default:
		}
		return nil, s.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Close stops the subscription (a complete message to the server).
func (s *Subscription) Close() error {
	select {
	case <-s.stopped:
		return nil
	default:
		close(s.stopped)
	}
	s.cn.mu.Lock()
	_, running := s.cn.subs[s.id]
	delete(s.cn.subs, s.id)
	s.cn.mu.Unlock()
	s.finish(io.EOF)
	if !running {
		return nil
	}
	return s.cn.send(map[string]any{"type": "complete", "id": s.id})
}
