// Package testdb gives tests fresh databases: a new SQLite file always, and a new
// PostgreSQL database when TASKGRAPH_TEST_DATABASE_URL is set. Under CI=true a
// missing or unreachable PostgreSQL fails the test instead of skipping it.
//
// A fresh database comes migrated (callers may migrate again: a no-op),
// cloned from a template that holds the current migrations (template.go):
// migrating costs a second or more per database under the race detector, a
// clone milliseconds. RunEmpty gives databases with nothing applied.
package testdb

import (
	"os"
	"testing"
)

// Case is one database to run a test against.
type Case struct {
	Name string // "sqlite" or "postgres"
	// URL makes a fresh, migrated database.
	URL func(t testing.TB) string
	// Empty makes a fresh database with no migration applied.
	Empty func(t testing.TB) string
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
	return []Case{{Name: "sqlite", URL: SQLite, Empty: EmptySQLite}, {Name: "postgres", URL: Postgres, Empty: EmptyPostgres}}
}

// Run runs f as a subtest once per database, each fresh and migrated.
func Run(t *testing.T, f func(t *testing.T, url string)) {
	for _, c := range Cases(t) {
		t.Run(c.Name, func(t *testing.T) { f(t, c.URL(t)) })
	}
}

// RunEmpty runs f as a subtest once per database, each fresh with no
// migration applied: for the tests of migrating itself.
func RunEmpty(t *testing.T, f func(t *testing.T, url string)) {
	for _, c := range Cases(t) {
		t.Run(c.Name, func(t *testing.T) { f(t, c.Empty(t)) })
	}
}
