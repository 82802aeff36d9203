package store

import (
	"context"
	"time"

	"github.com/lib/pq"
)

// WithDialer has the main pool's PostgreSQL connections dialled by d.
func WithDialer(d pq.Dialer) Option { return func(o *openOptions) { o.dialer = d } }

// SynchronousCommit reads synchronous_commit on the main pool and on the
// display counters' pool ("" for the counters on SQLite, which has none).
func (d *DB) SynchronousCommit(ctx context.Context) (main, counters string, err error) {
	if d.dialect != Postgres {
		return "", "", nil
	}
	if err := d.sqlx.GetContext(ctx, &main, `SHOW synchronous_commit`); err != nil {
		return "", "", err
	}
	err = d.counters.GetContext(ctx, &counters, `SHOW synchronous_commit`)
	return main, counters, err
}

// PreparedTexts is the number of statement texts the main pool has
// prepared or is preparing.
func (d *DB) PreparedTexts() int {
	n := 0
	d.stmts.Range(func(any, any) bool { n++; return true })
	return n
}

// ClockSpread is how far the clock's last reading of the database's may be
// off: half that reading's round trip.
func (d *DB) ClockSpread() time.Duration {
	d.clock.mu.RLock()
	defer d.clock.mu.RUnlock()
	return d.clock.spread
}
