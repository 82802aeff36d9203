package store

import (
	"errors"
	"fmt"
	neturl "net/url"
	"strings"
)

// Connection strings: what Open and the listener pass to the drivers.

// postgresDSN is url with lib/pq's binary_parameters on unless url sets it:
// a statement with arguments is then sent as one round trip (parse, bind,
// execute) instead of two (parse and describe, then bind and execute). Only
// []byte arguments change form (sent as binary), and the store passes those
// to BYTEA columns alone; JSON values are passed as text.
func postgresDSN(url string) (string, error) {
	u, err := neturl.Parse(url)
	if err != nil {
		return "", fmt.Errorf("store: database url %q: %w", redact(url), err)
	}
	q := u.Query()
	if q.Get("binary_parameters") == "" {
		q.Set("binary_parameters", "yes")
		u.RawQuery = q.Encode()
	}
	return u.String(), nil
}

// countersDSN is dsn for the display counters' pool: its commits do not
// wait for the disk (synchronous_commit off). A number is used only by a
// transaction that commits after the number did, and PostgreSQL writes its
// log in order: once that transaction's commit is on disk, so is the
// number's. A crash can lose only numbers that nothing committed used.
func countersDSN(dsn string) string {
	u, err := neturl.Parse(dsn)
	if err != nil {
		return dsn // postgresDSN parsed it already
	}
	q := u.Query()
	q.Set("synchronous_commit", "off")
	u.RawQuery = q.Encode()
	return u.String()
}

// redact hides a password in a database url for error messages.
func redact(url string) string {
	if at := strings.Index(url, "@"); at > 0 {
		if scheme := strings.Index(url, "://"); scheme > 0 && scheme < at {
			return url[:scheme+3] + "…" + url[at:]
		}
	}
	return url
}

// ListenerDSN is the connection string of a dedicated PostgreSQL connection
// (LISTEN/NOTIFY), named appName in pg_stat_activity: on the direct URL when
// one was given (DirectURL), else on the database URL. SQLite has none.
func (d *DB) ListenerDSN(appName string) (string, error) {
	if d.dialect != Postgres {
		return "", errors.New("store: LISTEN needs PostgreSQL")
	}
	base := d.url
	if d.directURL != "" {
		base = d.directURL
	}
	u, err := neturl.Parse(base)
	if err != nil {
		return "", fmt.Errorf("store: database url: %w", err)
	}
	q := u.Query()
	q.Set("application_name", appName)
	u.RawQuery = q.Encode()
	return u.String(), nil
}
