package store

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// clockResync is how often the process re-reads PostgreSQL's clock.
const clockResync = 30 * time.Second

// dbClock follows the database's clock between readings with the process's
// monotonic clock, so that every replica stamps what people write by one
// clock, the database's, without a round trip per write.
type dbClock struct {
	mu      sync.RWMutex
	base    time.Time     // the database's clock at the last reading
	at      time.Time     // when (process, monotonic) base was read
	spread  time.Duration // half the reading's round trip: how far base may be off
	syncing atomic.Bool
}

// Clock is the time by the database's clock, UTC at microsecond precision as
// stored: on PostgreSQL its clock as last read plus the time elapsed since
// (re-read every 30 seconds, off the caller's path), on SQLite — an embedded
// database whose clock is the process's — time.Now. Writes that must stamp
// the moment a statement ran after waiting for locks use Q.Now instead.
func (d *DB) Clock() time.Time {
	if d.dialect == SQLite {
		return time.Now().UTC().Truncate(time.Microsecond)
	}
	c := &d.clock
	c.mu.RLock()
	base, at := c.base, c.at
	c.mu.RUnlock()
	if base.IsZero() {
		// Never read (the database was down at Open): the process's clock
		// until a reading succeeds.
		d.resyncClock()
		return time.Now().UTC().Truncate(time.Microsecond)
	}
	if time.Since(at) > clockResync {
		d.resyncClock()
	}
	return base.Add(time.Since(at)).UTC().Truncate(time.Microsecond)
}

// resyncClock re-reads the database's clock in the background, once at a time.
func (d *DB) resyncClock() {
	if !d.clock.syncing.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer d.clock.syncing.Store(false)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = d.syncClock(ctx)
	}()
}

// syncClock reads PostgreSQL's clock three times and keeps the reading of the
// shortest round trip, placed at its middle. It bypasses the statement
// counter: it is the server's housekeeping, not a request's work.
func (d *DB) syncClock(ctx context.Context) error {
	var best time.Duration = -1
	var base, at time.Time
	for range 3 {
		var t time.Time
		t0 := time.Now()
		if err := d.sqlx.QueryRowContext(ctx, `SELECT clock_timestamp()`).Scan(&t); err != nil {
			return err
		}
		rtt := time.Since(t0)
		if best < 0 || rtt < best {
			best, base, at = rtt, t, t0.Add(rtt/2)
		}
	}
	d.clock.mu.Lock()
	d.clock.base, d.clock.at, d.clock.spread = base, at, best/2
	d.clock.mu.Unlock()
	return nil
}
