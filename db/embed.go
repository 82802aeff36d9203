// Package db holds Taskgraph's database migrations and embeds them in the
// binary.
//
// The schema exists twice, once per supported database, in
// migrations/postgres and migrations/sqlite. Both trees are goose SQL
// migrations with the same version numbers, tables and columns; the parity
// test of this package compares the two catalogs after applying them.
package db

import "embed"

// Migrations holds both migration trees. Use Dir to pick the one of a
// dialect, e.g. fs.Sub(Migrations, Dir("sqlite")) for goose.
//
//go:embed migrations
var Migrations embed.FS

// Dialect names accepted by Dir.
const (
	DialectPostgres = "postgres"
	DialectSQLite   = "sqlite"
)

// Dir returns the directory within Migrations that holds the migrations of
// dialect: "migrations/postgres" for "postgres" (also "postgresql", "pgx"),
// "migrations/sqlite" for "sqlite" (also "sqlite3"). It panics on any other
// dialect, which is a programming error.
func Dir(dialect string) string {
	switch dialect {
	case DialectPostgres, "postgresql", "pgx":
		return "migrations/postgres"
	case DialectSQLite, "sqlite3":
		return "migrations/sqlite"
	default:
		panic("db: unknown dialect " + dialect)
	}
}
