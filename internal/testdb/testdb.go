// Package testdb gives tests fresh databases: a new SQLite file always, and a new
// PostgreSQL schema when TASKGRAPH_TEST_DATABASE_URL is set. Under CI=true a
// missing or unreachable PostgreSQL fails the test instead of skipping it.
package testdb

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	_ "github.com/lib/pq" // PostgreSQL driver
)

// Case is one database to run a test against.
type Case struct {
	Name string // "sqlite" or "postgres"
	URL  func(t testing.TB) string
}

// EnvURL names the PostgreSQL server tests may use.
const EnvURL = "TASKGRAPH_TEST_DATABASE_URL"

// Cases lists the databases to run against: SQLite, then PostgreSQL. Without
// TASKGRAPH_TEST_DATABASE_URL (or under -short) the PostgreSQL case skips, so
// the run's summary names what it left out; under CI=true it must run.
func Cases(t testing.TB) []Case {
	if os.Getenv(EnvURL) == "" && os.Getenv("CI") == "true" {
		t.Fatalf("%s is not set; under CI=true PostgreSQL tests must run", EnvURL)
	}
	return []Case{{Name: "sqlite", URL: SQLite}, {Name: "postgres", URL: Postgres}}
}

// Run runs f as a subtest once per database.
func Run(t *testing.T, f func(t *testing.T, url string)) {
	for _, c := range Cases(t) {
		t.Run(c.Name, func(t *testing.T) { f(t, c.URL(t)) })
	}
}

// SQLite returns the URL of a new SQLite file in the test's temp directory.
func SQLite(t testing.TB) string {
	return "sqlite:" + filepath.Join(t.TempDir(), "taskgraph.db")
}

// Postgres creates a schema of its own for the test and returns a URL whose
// connections use it; the schema is dropped when the test ends.
func Postgres(t testing.TB) string {
	base := os.Getenv(EnvURL)
	if base == "" {
		t.Skipf("PostgreSQL: %s is not set", EnvURL)
	}
	if testing.Short() {
		t.Skip("PostgreSQL: left out by -short")
	}
	admin, err := sql.Open("postgres", base)
	if err != nil {
		t.Fatalf("postgres: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := admin.PingContext(ctx); err != nil {
		admin.Close()
		t.Fatalf("postgres at %s is unreachable: %v", base, err)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "tg_test_" + hex.EncodeToString(b[:])
	if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		admin.Close()
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := admin.ExecContext(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
		admin.Close()
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
