package store

import (
	"errors"
	"fmt"
	neturl "net/url"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
)

// Pooler is what stands between the server and PostgreSQL on --database.
type Pooler string

// The poolers Open knows.
const (
	// PoolerNone: --database reaches PostgreSQL itself (or a pooler in
	// session mode); a connection keeps its session for its whole life.
	PoolerNone Pooler = "none"
	// PoolerTransaction: --database reaches a pooler in transaction mode
	// (PgBouncer's pool_mode = transaction), which hands each transaction —
	// and each statement outside one — whichever server connection is free.
	// Nothing may outlive a transaction on a connection: no named prepared
	// statements, no session settings, no session advisory locks, no LISTEN.
	PoolerTransaction Pooler = "transaction"
)

// ParsePooler reads a --db-pooler value.
func ParsePooler(s string) (Pooler, error) {
	switch p := Pooler(strings.TrimSpace(s)); p {
	case PoolerNone, PoolerTransaction:
		return p, nil
	}
	return "", fmt.Errorf("%q is not a pooler: want none or transaction", s)
}

// WithPooler tells Open what --database reaches (default PoolerNone).
func WithPooler(p Pooler) Option { return func(o *openOptions) { o.pooler = p } }

// DirectURL is the URL of a direct PostgreSQL connection, for what needs a
// session of its own: the event listener (LISTEN) always; behind a
// transaction pooler also the leader locks (session advisory locks) and
// migrations (whose lock is one). Empty: the database URL.
func DirectURL(url string) Option { return func(o *openOptions) { o.directURL = url } }

// directConns is the size of the direct pool behind a transaction pooler: a
// leader lock holds one connection for as long as it is held, and a
// migration holds its lock on one while it migrates on another.
const directConns = 4

// openDirect opens the direct pool that session work uses behind a
// transaction pooler (connecting on first use).
func openDirect(url string) (*sqlx.DB, error) {
	if url == "" {
		return nil, errors.New("store: behind a transaction pooler a direct PostgreSQL URL is needed (LISTEN, leader locks, migrations)")
	}
	if !isPostgresURL(url) {
		return nil, fmt.Errorf("store: direct database url %q: want postgres://…", redact(url))
	}
	dsn, err := postgresDSN(url)
	if err != nil {
		return nil, err
	}
	x, err := sqlx.Open("postgres", dsn)
	if err != nil {
		return nil, fmt.Errorf("store: open the direct connection: %w", err)
	}
	x.SetMaxOpenConns(directConns)
	x.SetMaxIdleConns(1)
	x.SetConnMaxIdleTime(5 * time.Minute)
	return x, nil
}

func isPostgresURL(url string) bool {
	return strings.HasPrefix(url, "postgres://") || strings.HasPrefix(url, "postgresql://")
}

// sessionPool is the pool of session work (leader locks, migrations): the
// direct one behind a transaction pooler, else the main one.
func (d *DB) sessionPool() *sqlx.DB {
	if d.direct != nil {
		return d.direct
	}
	return d.sqlx
}

// Pooler reports what --database reaches.
func (d *DB) Pooler() Pooler { return d.pooler }

// transactionPooled reports whether a connection's session may not outlive
// its transaction.
func (d *DB) transactionPooled() bool { return d.pooler == PoolerTransaction }

// checkPooledDSN refuses a database url whose driver settings need a session
// behind a transaction pooler: lib/pq sends a statement with arguments in one
// round trip (parse, bind, execute) only with binary_parameters on; without
// it the unnamed statement is parsed in one round trip and bound in the
// next, which the pooler may send to another server connection.
func checkPooledDSN(url string) error {
	u, err := neturl.Parse(url)
	if err != nil {
		return fmt.Errorf("store: database url %q: %w", redact(url), err)
	}
	if v := u.Query().Get("binary_parameters"); v != "" && v != "yes" {
		return fmt.Errorf("store: behind a transaction pooler binary_parameters must be yes (each statement in one round trip), not %q", v)
	}
	return nil
}
