package main

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
)

// sqlProxy forwards PostgreSQL connections from one server to the database
// and counts the SQL statements the server sends: each simple-protocol Query
// message ('Q') and each extended-protocol Execute message ('E'). BEGIN and
// COMMIT count like any other statement. One proxy serves one server, so the
// count is that server's alone. Replies go back unread.
type sqlProxy struct {
	ln         net.Listener
	upstream   string // host:port of PostgreSQL
	statements atomic.Int64

	mu     sync.Mutex
	closed bool
	conns  map[net.Conn]struct{}
	ports  map[int]bool // local ports of the open connections to PostgreSQL
	wg     sync.WaitGroup
}

// startSQLProxy listens on a free loopback port and forwards to upstream.
func startSQLProxy(upstream string) (*sqlProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &sqlProxy{ln: ln, upstream: upstream, conns: map[net.Conn]struct{}{}, ports: map[int]bool{}}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the host:port servers connect to instead of PostgreSQL's.
func (p *sqlProxy) Addr() string { return p.ln.Addr().String() }

// Statements is the number of statements sent through the proxy so far.
func (p *sqlProxy) Statements() int64 { return p.statements.Load() }

// Close stops listening and closes every forwarded connection.
func (p *sqlProxy) Close() {
	_ = p.ln.Close()
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// OwnsClientPort reports whether a backend whose client connected from
// port is one of this proxy's, so one of its server's.
func (p *sqlProxy) OwnsClientPort(port int) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ports[port]
}

// track adds a forwarded pair to the connections Close closes, and the
// server side's local port to ports; false once closed.
func (p *sqlProxy) track(client, server net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.conns[client], p.conns[server] = struct{}{}, struct{}{}
	if a, ok := server.LocalAddr().(*net.TCPAddr); ok {
		p.ports[a.Port] = true
	}
	return true
}

func (p *sqlProxy) untrack(client, server net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.conns, client)
	delete(p.conns, server)
	if a, ok := server.LocalAddr().(*net.TCPAddr); ok {
		delete(p.ports, a.Port)
	}
}

func (p *sqlProxy) accept() {
	defer p.wg.Done()
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.forward(client)
		}()
	}
}

func (p *sqlProxy) forward(client net.Conn) {
	defer client.Close()
	server, err := net.Dial("tcp", p.upstream)
	if err != nil {
		return
	}
	defer server.Close()
	if !p.track(client, server) {
		return
	}
	defer p.untrack(client, server)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = io.Copy(client, server)
		_ = client.Close()
	}()
	_ = countMessages(client, server, &p.statements)
	_ = server.Close()
	<-done
}

// Protocol codes of the untyped messages a client may send before its
// startup message.
const (
	sslRequestCode    = 80877103
	gssEncRequestCode = 80877104
	cancelRequestCode = 80877102
)

// maxMessage bounds one message's length; PostgreSQL's own limit is 1 GiB.
const maxMessage = 1 << 30

// countMessages copies a client's side of the PostgreSQL protocol from src to
// dst, adding each Query and Execute message to n. The first messages are
// untyped (length, then code): SSL and GSS encryption requests, answered by
// the server with one byte, then the startup or cancel message. Every
// message after that is typed: one byte, then a length that counts itself.
func countMessages(src io.Reader, dst io.Writer, n *atomic.Int64) error {
	r := bufio.NewReaderSize(src, 32<<10)
	w := bufio.NewWriterSize(dst, 32<<10)
	var head [8]byte
	for startup := true; startup; {
		if _, err := io.ReadFull(r, head[:8]); err != nil {
			return err
		}
		size := binary.BigEndian.Uint32(head[:4])
		code := binary.BigEndian.Uint32(head[4:8])
		if size < 8 || size > maxMessage {
			return fmt.Errorf("startup message of %d bytes", size)
		}
		if err := copyMessage(w, r, head[:8], int64(size)-8); err != nil {
			return err
		}
		switch code {
		case sslRequestCode, gssEncRequestCode:
			// The server answers with one byte; the client goes on unencrypted.
		case cancelRequestCode:
			return flushAll(w, r, dst)
		default:
			startup = false
		}
		if err := w.Flush(); err != nil {
			return err
		}
	}
	for {
		if _, err := io.ReadFull(r, head[:5]); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		size := binary.BigEndian.Uint32(head[1:5])
		if size < 4 || size > maxMessage {
			return fmt.Errorf("message %q of %d bytes", head[0], size)
		}
		if head[0] == 'Q' || head[0] == 'E' {
			n.Add(1)
		}
		if err := copyMessage(w, r, head[:5], int64(size)-4); err != nil {
			return err
		}
		// Flush when the client has nothing more buffered: it waits for a reply.
		if r.Buffered() == 0 {
			if err := w.Flush(); err != nil {
				return err
			}
		}
	}
}

func copyMessage(w *bufio.Writer, r *bufio.Reader, head []byte, body int64) error {
	if _, err := w.Write(head); err != nil {
		return err
	}
	_, err := io.CopyN(w, r, body)
	return err
}

// flushAll forwards the rest of the stream as it is.
func flushAll(w *bufio.Writer, r *bufio.Reader, dst io.Writer) error {
	if err := w.Flush(); err != nil {
		return err
	}
	_, err := io.Copy(dst, r)
	return err
}
