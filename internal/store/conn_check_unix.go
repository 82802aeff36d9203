//go:build unix

package store

import (
	"errors"
	"syscall"
)

// alive reports whether an idle connection's socket has nothing to read:
// not closed by the peer, and no bytes pending (conn_check.go).
func alive(raw syscall.RawConn) bool {
	if raw == nil {
		return true
	}
	ok := true
	var buf [1]byte
	err := raw.Read(func(fd uintptr) bool {
		n, err := syscall.Read(int(fd), buf[:])
		switch {
		case n > 0: // bytes nobody asked for
			ok = false
		case err == nil: // end of file
			ok = false
		case errors.Is(err, syscall.EAGAIN), errors.Is(err, syscall.EWOULDBLOCK), errors.Is(err, syscall.EINTR):
		default: // reset, or another error of the socket
			ok = false
		}
		return true // never wait for the socket to become readable
	})
	return ok && err == nil
}
