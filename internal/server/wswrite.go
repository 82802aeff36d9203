package server

import (
	"encoding/binary"
	"runtime"
	"time"

	"github.com/gorilla/websocket"
)

// Data frames are written coalesced, by a goroutine of the connection's:
// a frame is appended to the connection's pending buffer, and the goroutine
// writes everything pending in one system call, then what came meanwhile,
// until nothing is left. gqlgen writes the messages of a connection one at a
// time under a lock of its own; the subscriptions of one connection receive
// an event at the same moment, so a connection of a hundred subscriptions
// writes an event in a few calls instead of a hundred, and none of its
// operations waits on the socket. Each frame is written whole, in order;
// control frames (pings, the close) go through gorilla, whose writes are
// single calls too, so frames never interleave.

// maxPendingWrites bounds the bytes waiting for a connection's socket: a
// writer finding more waits until they are written, so a peer that does not
// read holds up its own operations (and their queues fill), never memory.
const maxPendingWrites = 256 << 10

// keepWriteBuffer is the largest pending buffer a connection keeps between
// writes; a larger one, grown by a burst, is let go.
const keepWriteBuffer = 16 << 10

// write queues b as one text frame for the connection's writer. An error is
// the connection's first write error (it is then closed); a frame written
// after the close frame is refused.
func (c *wsConn) write(b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	for len(c.pending) > maxPendingWrites && c.writeErr == nil && !c.writeClosed {
		c.written.Wait()
	}
	switch {
	case c.writeErr != nil:
		return c.writeErr
	case c.writeClosed:
		return websocket.ErrCloseSent
	}
	c.pending = appendTextFrame(c.pending, b)
	if !c.flushing {
		c.flushing = true
		go c.flush()
	}
	return nil
}

// flush writes the pending frames until none is left.
func (c *wsConn) flush() {
	// Let the writers already woken (the connection's other subscriptions
	// of the same event) queue their frames first.
	runtime.Gosched()
	c.wmu.Lock()
	defer c.wmu.Unlock()
	for len(c.pending) > 0 && c.writeErr == nil {
		buf := c.pending
		c.pending = c.spare[:0]
		c.wmu.Unlock()
		nc := c.ws.NetConn()
		_ = nc.SetWriteDeadline(time.Now().Add(c.cfg.WriteTimeout))
		_, err := nc.Write(buf)
		c.wmu.Lock()
		if cap(buf) <= keepWriteBuffer {
			c.spare = buf[:0]
		} else {
			c.spare = nil
		}
		if err != nil {
			c.writeErr = err
			c.mu.Lock()
			c.peerGone = true
			c.mu.Unlock()
			_ = nc.Close()
		}
		c.written.Broadcast()
	}
	c.flushing = false
	c.pending = nil
	c.written.Broadcast()
}

// closeWrites waits until the pending frames are written (or writing
// failed), then refuses any more: the close frame goes after them.
func (c *wsConn) closeWrites() {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	for (c.flushing || len(c.pending) > 0) && c.writeErr == nil {
		c.written.Wait()
	}
	c.writeClosed = true
	c.written.Broadcast()
}

// appendTextFrame appends b as one unmasked, final text frame (RFC 6455
// 5.2: a server's frames are not masked).
func appendTextFrame(dst, b []byte) []byte {
	const finText = 0x81
	switch n := len(b); {
	case n < 126:
		dst = append(dst, finText, byte(n))
	case n <= 0xffff:
		dst = append(dst, finText, 126)
		dst = binary.BigEndian.AppendUint16(dst, uint16(n))
	default:
		dst = append(dst, finText, 127)
		dst = binary.BigEndian.AppendUint64(dst, uint64(n))
	}
	return append(dst, b...)
}
