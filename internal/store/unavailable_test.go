package store

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"

	"github.com/lib/pq"
	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/domain"
)

// TestConnectionFailuresAreUnavailable: what the driver reports when the
// database is down, restarting or dropped the connection maps to
// ErrUnavailable, which reads as the domain's UNAVAILABLE; statement errors
// keep their own sentinels.
func TestConnectionFailuresAreUnavailable(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	for _, tc := range []struct {
		name        string
		err         error
		unavailable bool
	}{
		{"admin shutdown", &pq.Error{Code: "57P01", Message: "terminating connection due to administrator command"}, true},
		{"starting up", &pq.Error{Code: "57P03", Message: "the database system is starting up"}, true},
		{"connection exception (pooler)", &pq.Error{Code: "08P01", Message: "server conn crashed?"}, true},
		{"too many connections", &pq.Error{Code: "53300"}, true},
		{"bad connection", driver.ErrBadConn, true},
		{"connection refused", refused, true},
		{"wrapped refusal", fmt.Errorf("store: begin: %w", refused), true},
		{"reset", syscall.ECONNRESET, true},
		{"eof", io.ErrUnexpectedEOF, true},
		{"unique", &pq.Error{Code: "23505", Constraint: "tasks_pkey"}, false},
		{"deadlock", &pq.Error{Code: "40P01"}, false},
		{"syntax", &pq.Error{Code: "42601"}, false},
		{"cancelled", &pq.Error{Code: "57014"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := mapErr(tc.err)
			require.Equal(t, tc.unavailable, errors.Is(err, ErrUnavailable), "%v", err)
			if !tc.unavailable {
				require.Equal(t, domain.CodeInternal, domain.ErrorCode(err))
				return
			}
			require.Equal(t, domain.CodeUnavailable, domain.ErrorCode(err))
			require.ErrorIs(t, err, tc.err, "the driver's error stays for the log")
			require.Same(t, err, mapErr(err), "mapped once")
			// A write sent later keeps it too (later.go).
			require.ErrorIs(t, laterErr(tc.err), ErrUnavailable)
			de, ok := domain.AsError(fmt.Errorf("service: %w", err))
			require.True(t, ok)
			require.Equal(t, domain.UnavailableMessage, de.Message)
		})
	}
	require.ErrorIs(t, mapErr(&pq.Error{Code: "23505"}), ErrUnique)
}
