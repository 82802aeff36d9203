package store

import (
	"context"
	"net"
	"syscall"
	"time"

	"github.com/lib/pq"
)

// A connection the pool kept idle may have died meanwhile: PostgreSQL
// restarted, or a backend was terminated. lib/pq finds out at the next
// statement. When that was BEGIN, database/sql retried it on another
// connection; a transaction's first statement now carries its work
// (lazy_begin.go), and a failure there fails the transaction. So a
// connection is checked as the pool hands it out again (ResetSession), with
// one non-blocking read of its socket and no round trip: an idle connection
// to PostgreSQL has nothing to read, and end of file or pending bytes (the
// FATAL a terminated backend sends before it closes) mean it is gone, and
// the pool takes another.

// dialSlotKey carries, in the context of a connect, where checkedDialer
// leaves the connection it opened.
type dialSlotKey struct{}

// checkedDialer dials as lib/pq does (or through inner, when set) and
// leaves each connection it opens in its connect's slot.
type checkedDialer struct{ inner pq.Dialer }

func (d checkedDialer) Dial(network, address string) (net.Conn, error) {
	return d.DialContext(context.Background(), network, address)
}

func (d checkedDialer) DialTimeout(network, address string, timeout time.Duration) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return d.DialContext(ctx, network, address)
}

func (d checkedDialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	var (
		c   net.Conn
		err error
	)
	switch inner := d.inner.(type) {
	case nil:
		c, err = (&net.Dialer{}).DialContext(ctx, network, address)
	case pq.DialerContext:
		c, err = inner.DialContext(ctx, network, address)
	default:
		if deadline, ok := ctx.Deadline(); ok {
			c, err = inner.DialTimeout(network, address, time.Until(deadline))
		} else {
			c, err = inner.Dial(network, address)
		}
	}
	if slot, ok := ctx.Value(dialSlotKey{}).(*net.Conn); ok && err == nil {
		*slot = c
	}
	return c, err
}

// rawOf is c's socket for the check; nil when c has none to offer (a
// wrapped connection), and then the check passes.
func rawOf(c net.Conn) syscall.RawConn {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return nil
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	return raw
}
