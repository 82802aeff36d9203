package testdb

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/lib/pq" // PostgreSQL driver

	"github.com/taskgraph/taskgraph/internal/store"
)

// Postgres creates a database of its own for the test, a clone of the
// migrated template, and returns its URL; the database is dropped when the
// test ends. Where the test server's role may not create databases it falls
// back to EmptyPostgres (the server then migrates).
func Postgres(t testing.TB) string {
	base, admin := postgresAdmin(t)
	tmpl, err := postgresTemplate(base, admin)
	if errors.Is(err, errCannotCreateDatabases) {
		return EmptyPostgres(t)
	} else if err != nil {
		t.Fatalf("postgres template: %v", err)
	}
	name := "tg_test_" + randomHex()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err = admin.ExecContext(ctx, "CREATE DATABASE "+name+" TEMPLATE "+tmpl)
	if pe := (*pq.Error)(nil); errors.As(err, &pe) && pe.Code == "3D000" {
		// The template went stale and was dropped since: made again.
		if tmpl, err = remakePostgresTemplate(base, admin, tmpl); err == nil {
			_, err = admin.ExecContext(ctx, "CREATE DATABASE "+name+" TEMPLATE "+tmpl)
		}
	}
	if err != nil {
		t.Fatalf("create database: %v", err)
	}
	// Stamped, so that a run killed before its cleanup leaves nothing for good.
	if _, err := admin.ExecContext(ctx, "COMMENT ON DATABASE "+name+" IS "+stamp()); err != nil {
		t.Fatalf("comment on database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := admin.ExecContext(ctx, "DROP DATABASE "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
	})
	return withDatabase(base, name)
}

// EmptyPostgres creates a schema of its own for the test, with nothing in
// it, and returns a URL whose connections use it; the schema is dropped when
// the test ends.
func EmptyPostgres(t testing.TB) string {
	base, admin := postgresAdmin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	schema := "tg_test_" + randomHex()
	if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := admin.ExecContext(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("bad %s: %v", EnvURL, err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

var pgAdmin struct {
	once sync.Once
	db   *sql.DB
	err  error
}

// postgresAdmin returns the server's URL and a pool on it shared by the
// process's tests, skipping the test where PostgreSQL is not to be used.
func postgresAdmin(t testing.TB) (string, *sql.DB) {
	base := os.Getenv(EnvURL)
	if base == "" {
		t.Skipf("PostgreSQL: %s is not set", EnvURL)
	}
	if testing.Short() {
		t.Skip("PostgreSQL: left out by -short")
	}
	pgAdmin.once.Do(func() {
		db, err := sql.Open("postgres", base)
		if err != nil {
			pgAdmin.err = err
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := db.PingContext(ctx); err != nil {
			db.Close()
			pgAdmin.err = fmt.Errorf("postgres at %s is unreachable: %w", base, err)
			return
		}
		pgAdmin.db = db
		dropStale(db)
	})
	if pgAdmin.err != nil {
		t.Fatalf("postgres: %v", pgAdmin.err)
	}
	return base, pgAdmin.db
}

var errCannotCreateDatabases = errors.New("the test role may not create databases")

var pgTmpl struct {
	mu   sync.Mutex
	made bool
	name string
	err  error
}

// templateLock serialises the making of templates across test processes.
const templateLock = 0x7467746d706c // "tgtmpl"

// postgresTemplate returns the name of a database holding the current
// migrations, made once on the server and shared by every test process and
// run until a migration changes: under an advisory lock, migrated under a
// name of its own and renamed into place, so no process clones a half-made
// one. Other checkouts may use templates of other migrations at the same
// time: old ones are dropped a day after they were made (dropStale).
func postgresTemplate(base string, admin *sql.DB) (string, error) {
	pgTmpl.mu.Lock()
	defer pgTmpl.mu.Unlock()
	if !pgTmpl.made {
		pgTmpl.name, pgTmpl.err = makePostgresTemplate(base, admin)
		pgTmpl.made = true
	}
	return pgTmpl.name, pgTmpl.err
}

// remakePostgresTemplate makes the template again after gone was found
// missing (unless another test of the process did already).
func remakePostgresTemplate(base string, admin *sql.DB, gone string) (string, error) {
	pgTmpl.mu.Lock()
	defer pgTmpl.mu.Unlock()
	if pgTmpl.err == nil && pgTmpl.name == gone {
		pgTmpl.name, pgTmpl.err = makePostgresTemplate(base, admin)
	}
	return pgTmpl.name, pgTmpl.err
}

func makePostgresTemplate(base string, admin *sql.DB) (string, error) {
	hash, err := migrationsHash("postgres")
	if err != nil {
		return "", err
	}
	name := "tg_tmpl_" + hash
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	conn, err := admin.Conn(ctx)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, templateLock); err != nil {
		return "", err
	}
	defer conn.ExecContext(context.Background(), `SELECT pg_advisory_unlock($1)`, templateLock) //nolint:errcheck
	var n int
	if err := conn.QueryRowContext(ctx, `SELECT COUNT(*) FROM pg_database WHERE datname = $1`, name).Scan(&n); err != nil {
		return "", err
	}
	if n == 1 {
		return name, nil
	}
	build := "tg_tmplbuild_" + randomHex()
	if _, err := conn.ExecContext(ctx, "CREATE DATABASE "+build); err != nil {
		var pe *pq.Error
		if errors.As(err, &pe) && pe.Code == "42501" {
			return "", errCannotCreateDatabases
		}
		return "", err
	}
	if err := migrate(ctx, withDatabase(base, build)); err != nil {
		_, _ = conn.ExecContext(ctx, "DROP DATABASE "+build+" WITH (FORCE)")
		return "", err
	}
	if _, err := conn.ExecContext(ctx, "COMMENT ON DATABASE "+build+" IS "+stamp()); err != nil {
		_, _ = conn.ExecContext(ctx, "DROP DATABASE "+build+" WITH (FORCE)")
		return "", err
	}
	if _, err := conn.ExecContext(ctx, "ALTER DATABASE "+build+" RENAME TO "+name); err != nil {
		_, _ = conn.ExecContext(ctx, "DROP DATABASE "+build+" WITH (FORCE)")
		return "", err
	}
	return name, nil
}

// stamp is the comment a test database or template is made with: when.
func stamp() string { return fmt.Sprintf("'taskgraph test %d'", time.Now().Unix()) }

// staleAfter is how long a test database or template is kept at most: a run
// killed before its cleanup leaves its databases; a template serves the
// runs of its migrations for that long after it was made, then the next run
// that needs it makes it again.
const staleAfter = 24 * time.Hour

// dropStale drops the test databases and templates stamped more than
// staleAfter ago, once per test process; errors are ignored (another
// process may be dropping them too).
func dropStale(admin *sql.DB) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rows, err := admin.QueryContext(ctx, `SELECT datname, COALESCE(shobj_description(oid, 'pg_database'), '') FROM pg_database
		WHERE datname LIKE 'tg\_test\_%' OR datname LIKE 'tg\_tmpl\_%'`)
	if err != nil {
		return
	}
	var stale []string
	for rows.Next() {
		var name, comment string
		var at int64
		if rows.Scan(&name, &comment) != nil {
			continue
		}
		if _, err := fmt.Sscanf(comment, "taskgraph test %d", &at); err == nil && time.Since(time.Unix(at, 0)) > staleAfter {
			stale = append(stale, name)
		}
	}
	rows.Close()
	for _, name := range stale {
		_, _ = admin.ExecContext(ctx, "DROP DATABASE "+pq.QuoteIdentifier(name)+" WITH (FORCE)")
	}
}

func migrate(ctx context.Context, url string) error {
	d, err := store.Open(ctx, url)
	if err != nil {
		return err
	}
	if err := d.Migrate(ctx); err != nil {
		d.Close()
		return err
	}
	return d.Close()
}

// withDatabase is base with its database name replaced.
func withDatabase(base, name string) string {
	u, err := url.Parse(base)
	if err != nil {
		return base
	}
	u.Path = "/" + name
	return u.String()
}

func randomHex() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
