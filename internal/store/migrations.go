package store

import (
	"context"
	"fmt"
	"hash/fnv"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"github.com/taskgraph/taskgraph/db"
)

// The schema's migrations: applied by goose from the embedded trees of
// package db, one replica at a time.

func (d *DB) provider(ctx context.Context) (*goose.Provider, error) {
	sub, err := fs.Sub(db.Migrations, db.Dir(string(d.dialect)))
	if err != nil {
		return nil, err
	}
	dialect := goose.DialectSQLite3
	var opts []goose.ProviderOption
	if d.dialect == Postgres {
		dialect = goose.DialectPostgres
		// Replicas starting together migrate one at a time. The advisory lock is
		// per schema: databases in other schemas of the same server (tests, other
		// tenants) migrate independently instead of queueing behind one lock id
		// with goose's 5-second retry period.
		var schema string
		if err := d.sessionPool().GetContext(ctx, &schema, `SELECT current_schema()`); err != nil {
			return nil, fmt.Errorf("store: read current schema: %w", err)
		}
		h := fnv.New64a()
		_, _ = h.Write([]byte("taskgraph-migrate:" + schema))
		locker, err := lock.NewPostgresSessionLocker(lock.WithLockID(int64(h.Sum64()>>1)), lock.WithLockTimeout(1, 300))
		if err != nil {
			return nil, err
		}
		opts = append(opts, goose.WithSessionLocker(locker))
	}
	// Behind a transaction pooler, on the direct connection: the lock is
	// a session's.
	return goose.NewProvider(dialect, d.sessionPool().DB, sub, opts...)
}

// Migrate applies every pending migration.
func (d *DB) Migrate(ctx context.Context) error {
	p, err := d.provider(ctx)
	if err != nil {
		return fmt.Errorf("store: migrations: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("store: migrate: %w", err)
	}
	return nil
}

// MigrationStatus describes one migration and whether it is applied.
type MigrationStatus struct {
	Version   int64
	Name      string
	Applied   bool
	AppliedAt time.Time
}

// MigrationStatuses lists every known migration.
func (d *DB) MigrationStatuses(ctx context.Context) ([]MigrationStatus, error) {
	p, err := d.provider(ctx)
	if err != nil {
		return nil, err
	}
	st, err := p.Status(ctx)
	if err != nil {
		return nil, fmt.Errorf("store: migration status: %w", err)
	}
	out := make([]MigrationStatus, len(st))
	for i, s := range st {
		out[i] = MigrationStatus{Version: s.Source.Version, Name: filepath.Base(s.Source.Path),
			Applied: s.State == goose.StateApplied, AppliedAt: s.AppliedAt}
	}
	return out, nil
}
