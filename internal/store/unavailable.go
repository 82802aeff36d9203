package store

import (
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"syscall"

	"github.com/lib/pq"

	"github.com/taskgraph/taskgraph/internal/domain"
)

// ErrUnavailable: the database could not be reached or dropped the
// connection — it is restarting, failing over, or the network to it is
// down. The statement did not complete; the pool replaces the broken
// connections by itself, so running it again after a moment can succeed.
var ErrUnavailable = errors.New("store: database unavailable")

// unavailableError is a connection failure. It is ErrUnavailable, keeps the
// driver's error for the log, and reads as domain.Unavailable() to callers
// that look for a domain error: every layer passes it to the client as
// UNAVAILABLE without knowing the store.
type unavailableError struct{ cause error }

func (e *unavailableError) Error() string   { return "store: database unavailable: " + e.cause.Error() }
func (e *unavailableError) Unwrap() []error { return []error{ErrUnavailable, e.cause} }

// As makes the error a domain error (errors.As with a **domain.Error).
func (e *unavailableError) As(target any) bool {
	if p, ok := target.(**domain.Error); ok {
		*p = domain.Unavailable()
		return true
	}
	return false
}

// unavailable wraps err as ErrUnavailable when it is a connection failure,
// and returns nil otherwise.
func unavailable(err error) error {
	if isConnectionFailure(err) {
		return &unavailableError{cause: err}
	}
	return nil
}

// isConnectionFailure reports whether err says the connection, not the
// statement, failed: no server to connect to, a connection the server closed
// (shutdown, restart, a pooler that lost its server), or one that broke.
func isConnectionFailure(err error) bool {
	if errors.Is(err, ErrUnavailable) {
		return false // wrapped already
	}
	var pqErr *pq.Error
	if errors.As(err, &pqErr) {
		switch {
		case pqErr.Code.Class() == "08": // connection exception (PgBouncer's too)
			return true
		case pqErr.Code == "57P01", pqErr.Code == "57P02", pqErr.Code == "57P03": // admin or crash shutdown, cannot connect now
			return true
		case pqErr.Code == "53300": // too many connections
			return true
		}
		return false
	}
	var netErr *net.OpError
	return errors.Is(err, driver.ErrBadConn) || errors.As(err, &netErr) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}
