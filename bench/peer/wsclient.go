package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

// The subscription scenario's load generator: websocket connections in the
// graphql-transport-ws protocol, each holding the same subscription several
// times. It is kept cheap, since it shares the cores with the server: one
// reader goroutine per connection, a reused read buffer, and no JSON
// decoding of the events — scanMessage finds the three values it needs in
// one pass.

// wsMessage is the part of a graphql-transport-ws message the pool reads.
type wsMessage struct {
	typ, id, occurredAt []byte // occurredAt: the first such string anywhere in the payload
}

// scanMessage reads a message's top-level "type" and "id" and the first
// "occurredAt" string value at any depth, without decoding the rest. It
// reports false for text that is not a JSON object it can walk.
func scanMessage(b []byte) (wsMessage, bool) {
	var m wsMessage
	depth := 0
	var key []byte // the last key read at any depth, until its value
	expectKey := false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; c {
		case '{':
			depth++
			expectKey = true
		case '}':
			depth--
		case '[':
			depth++
		case ']':
			depth--
		case ',':
			// After a comma inside an object comes a key; inside a list a
			// value (a key is only taken as one when a ':' follows).
			expectKey = true
		case ':':
			expectKey = false
		case '"':
			j := i + 1
			for j < len(b) && b[j] != '"' {
				if b[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(b) {
				return m, false
			}
			s := b[i+1 : j]
			i = j
			if expectKey && nextNonSpace(b, j+1) == ':' {
				key = s
				continue
			}
			switch {
			case depth == 1 && string(key) == "type":
				m.typ = s
			case depth == 1 && string(key) == "id":
				m.id = s
			case m.occurredAt == nil && string(key) == "occurredAt":
				m.occurredAt = s
			}
			key = nil
		}
	}
	return m, depth == 0 && m.typ != nil
}

func nextNonSpace(b []byte, i int) byte {
	for ; i < len(b); i++ {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
		default:
			return b[i]
		}
	}
	return 0
}

// subPool is the connections of one run of the scenario and what arrived
// on them.
type subPool struct {
	conns     []*subConn
	perConn   int
	recording atomic.Bool // latencies are kept only in the timed window
	lastMsg   atomic.Int64
	errs      atomic.Int64 // error messages (a subscription ended by the server)
	completes atomic.Int64 // complete messages
	bad       atomic.Int64 // messages the pool could not read
	firstBad  atomic.Value // string
	firstErr  atomic.Value // string
	wg        sync.WaitGroup
}

// subConn is one websocket: its subscriptions' counts and the latencies it
// saw in the window (µs, receive time − occurredAt).
type subConn struct {
	ws        *websocket.Conn
	delivered []atomic.Int64 // by subscription (id "1" is index 0)
	latMu     sync.Mutex
	latencies []int32
}

// subscribeSpec is what the pool subscribes with.
type subscribeSpec struct {
	url         string // ws://…/graphql
	initPayload map[string]any
	query       string
	variables   map[string]any
	connections int
	perConn     int
}

// openSubPool dials every connection, initialises it (waiting for
// connection_ack) and sends its subscriptions.
func openSubPool(ctx context.Context, s subscribeSpec) (*subPool, error) {
	p := &subPool{perConn: s.perConn}
	p.lastMsg.Store(time.Now().UnixNano())
	dialer := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}, HandshakeTimeout: 30 * time.Second,
		ReadBufferSize: 16 << 10, WriteBufferSize: 16 << 10}
	for range s.connections {
		ws, resp, err := dialer.DialContext(ctx, s.url, http.Header{})
		if err != nil {
			p.close()
			if resp != nil {
				b, _ := io.ReadAll(io.LimitReader(resp.Body, 500))
				return nil, fmt.Errorf("websocket %s: %w (HTTP %d %s)", s.url, err, resp.StatusCode, b)
			}
			return nil, fmt.Errorf("websocket %s: %w", s.url, err)
		}
		if ws.Subprotocol() != "graphql-transport-ws" {
			ws.Close()
			p.close()
			return nil, fmt.Errorf("websocket %s: the server chose subprotocol %q", s.url, ws.Subprotocol())
		}
		c := &subConn{ws: ws, delivered: make([]atomic.Int64, s.perConn)}
		p.conns = append(p.conns, c)
		if err := ws.WriteJSON(map[string]any{"type": "connection_init", "payload": s.initPayload}); err != nil {
			p.close()
			return nil, err
		}
		_ = ws.SetReadDeadline(time.Now().Add(30 * time.Second))
		var ack struct{ Type string }
		if err := ws.ReadJSON(&ack); err != nil || ack.Type != "connection_ack" {
			p.close()
			return nil, fmt.Errorf("websocket %s: no connection_ack (%q, %v)", s.url, ack.Type, err)
		}
		_ = ws.SetReadDeadline(time.Time{})
		for k := range s.perConn {
			msg, _ := json.Marshal(map[string]any{"id": strconv.Itoa(k + 1), "type": "subscribe",
				"payload": graphQLRequest{Query: s.query, Variables: s.variables}})
			if err := ws.WriteMessage(websocket.TextMessage, msg); err != nil {
				p.close()
				return nil, err
			}
		}
		p.wg.Add(1)
		go p.read(c)
	}
	return p, nil
}

// read counts a connection's messages until it closes.
func (p *subPool) read(c *subConn) {
	defer p.wg.Done()
	buf := make([]byte, 0, 4096)
	for {
		_, r, err := c.ws.NextReader()
		if err != nil {
			return
		}
		buf = buf[:0]
		for {
			if len(buf) == cap(buf) {
				buf = append(buf, 0)[:len(buf)]
			}
			n, err := r.Read(buf[len(buf):cap(buf)])
			buf = buf[:len(buf)+n]
			if err == io.EOF {
				break
			}
			if err != nil {
				return
			}
		}
		now := time.Now()
		p.lastMsg.Store(now.UnixNano())
		m, ok := scanMessage(buf)
		if !ok {
			p.noteBad(buf)
			continue
		}
		switch string(m.typ) {
		case "next":
			k, err := strconv.Atoi(string(m.id))
			if err != nil || k < 1 || k > len(c.delivered) {
				p.noteBad(buf)
				continue
			}
			c.delivered[k-1].Add(1)
			if p.recording.Load() && m.occurredAt != nil {
				if at, err := time.Parse(time.RFC3339Nano, string(m.occurredAt)); err == nil {
					us := now.Sub(at).Microseconds()
					c.latMu.Lock()
					c.latencies = append(c.latencies, int32(min(us, 1<<31-1)))
					c.latMu.Unlock()
				}
			}
		case "error":
			if p.errs.Add(1) == 1 {
				p.firstErr.Store(fmt.Sprintf("%.500s", buf))
			}
		case "complete":
			p.completes.Add(1)
		case "ping":
			_ = c.ws.WriteMessage(websocket.TextMessage, []byte(`{"type":"pong"}`))
		case "pong":
		default:
			p.noteBad(buf)
		}
	}
}

func (p *subPool) noteBad(b []byte) {
	if p.bad.Add(1) == 1 {
		p.firstBad.Store(fmt.Sprintf("%.500s", b))
	}
}

// counts is every subscription's delivered events so far.
func (p *subPool) counts() []int64 {
	out := make([]int64, 0, len(p.conns)*p.perConn)
	for _, c := range p.conns {
		for i := range c.delivered {
			out = append(out, c.delivered[i].Load())
		}
	}
	return out
}

// total is the events delivered so far, over all subscriptions, and how
// many subscriptions have none.
func (p *subPool) total() (sum int64, without int) {
	for _, n := range p.counts() {
		sum += n
		if n == 0 {
			without++
		}
	}
	return sum, without
}

// takeLatencies returns and forgets the latencies recorded so far.
func (p *subPool) takeLatencies() []time.Duration {
	var out []time.Duration
	for _, c := range p.conns {
		c.latMu.Lock()
		for _, us := range c.latencies {
			out = append(out, time.Duration(us)*time.Microsecond)
		}
		c.latencies = nil
		c.latMu.Unlock()
	}
	return out
}

// quietFor is how long since the last message arrived.
func (p *subPool) quietFor() time.Duration {
	return time.Since(time.Unix(0, p.lastMsg.Load()))
}

// problems describes error and unreadable messages, or is empty.
func (p *subPool) problems() string {
	var parts []string
	if n := p.errs.Load(); n > 0 {
		first, _ := p.firstErr.Load().(string)
		parts = append(parts, fmt.Sprintf("%d subscriptions ended with an error, the first: %s", n, first))
	}
	if n := p.completes.Load(); n > 0 {
		parts = append(parts, fmt.Sprintf("%d completed by the server", n))
	}
	if n := p.bad.Load(); n > 0 {
		first, _ := p.firstBad.Load().(string)
		parts = append(parts, fmt.Sprintf("%d unexpected messages, the first: %s", n, first))
	}
	return strings.Join(parts, "; ")
}

// close closes every connection and waits for the readers.
func (p *subPool) close() {
	for _, c := range p.conns {
		_ = c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
		_ = c.ws.Close()
	}
	p.wg.Wait()
}
