package store

import (
	"context"
	"database/sql"
	"hash/fnv"
	"time"
)

// Leadership is a lock one replica holds at a time (TryLeaderLock).
type Leadership struct {
	conn *sql.Conn
	lost chan struct{}
	stop chan struct{}
}

// Lost is closed when the lock is lost (its connection broke) or released.
func (l *Leadership) Lost() <-chan struct{} { return l.lost }

// Release gives the lock up.
func (l *Leadership) Release() {
	select {
	case <-l.stop:
	default:
		close(l.stop)
	}
}

// TryLeaderLock takes the lock named name unless another replica holds it:
// on PostgreSQL a session advisory lock on a connection of its own (a direct
// one behind a transaction pooler, which would hand the session on), checked
// every few seconds; on SQLite (one server per database file) it is always
// granted. Nil: another replica holds it.
func (d *DB) TryLeaderLock(ctx context.Context, name string) (*Leadership, error) {
	l := &Leadership{lost: make(chan struct{}), stop: make(chan struct{})}
	if d.dialect != Postgres {
		go func() {
			<-l.stop
			close(l.lost)
		}()
		return l, nil
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(name))
	key := int64(h.Sum64() >> 1)
	conn, err := d.sessionPool().Conn(ctx) // behind a transaction pooler, a direct connection

	if err != nil {
		return nil, mapErr(err)
	}
	var ok bool
	if err := conn.QueryRowContext(ctx, `SELECT pg_try_advisory_lock($1)`, key).Scan(&ok); err != nil || !ok {
		_ = conn.Close()
		return nil, mapErr(err)
	}
	l.conn = conn
	go func() {
		defer close(l.lost)
		t := time.NewTicker(5 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-l.stop:
				uctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				_, _ = conn.ExecContext(uctx, `SELECT pg_advisory_unlock($1)`, key)
				cancel()
				_ = conn.Close()
				return
			case <-t.C:
				if err := conn.PingContext(ctx); err != nil {
					_ = conn.Close()
					return
				}
			}
		}
	}()
	return l, nil
}
