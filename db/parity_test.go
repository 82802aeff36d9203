package db_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	_ "github.com/lib/pq"
	"github.com/pressly/goose/v3"
	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite"

	"github.com/taskgraph/taskgraph/db"
)

// gooseTable is goose's own bookkeeping table, left out of every comparison.
const gooseTable = "goose_db_version"

// A dialect under test: how to reach a fresh, empty database and how goose
// and the catalog queries talk to it.
type dialect struct {
	name  string // db.Dir argument
	goose goose.Dialect
	open  func(t *testing.T) *sql.DB
	// columns reads the catalog of the database opened by open.
	columns func(t *testing.T, conn *sql.DB) catalog
}

var (
	sqliteDialect = dialect{
		name: db.DialectSQLite, goose: goose.DialectSQLite3,
		open: openSQLite, columns: sqliteColumns,
	}
	postgresDialect = dialect{
		name: db.DialectPostgres, goose: goose.DialectPostgres,
		open: openPostgres, columns: postgresColumns,
	}
)

// column is what the parity test compares of each column.
type column struct {
	NotNull bool
	// Type is the declared type, normalised to its family (see typeFamily).
	Type string
}

// catalog maps "table.column" to the column.
type catalog map[string]column

func (c catalog) tables() []string {
	seen := map[string]bool{}
	for key := range c {
		table, _, _ := strings.Cut(key, ".")
		seen[table] = true
	}
	out := make([]string, 0, len(seen))
	for table := range seen {
		out = append(out, table)
	}
	sort.Strings(out)
	return out
}

// typeFamily maps a declared column type of either dialect to the family both
// must agree on. The SQLite names matter to the modernc driver (TIMESTAMP
// scans into time.Time, BOOLEAN into bool), so each PostgreSQL type has
// exactly one SQLite counterpart. Unknown types map to "?<type>", which never
// matches the other side and so shows up in the diff.
func typeFamily(dialectName, declared string) string {
	t := strings.ToLower(strings.TrimSpace(declared))
	var families map[string]string
	if dialectName == db.DialectSQLite {
		families = map[string]string{
			"text": "text", "integer": "integer", "real": "real",
			"boolean": "boolean", "timestamp": "timestamp", "blob": "blob",
		}
	} else {
		families = map[string]string{
			// Ids and JSON are TEXT in SQLite.
			"text": "text", "uuid": "text", "jsonb": "text",
			"integer": "integer", "bigint": "integer", "smallint": "integer",
			"double precision": "real", "boolean": "boolean",
			"timestamp with time zone": "timestamp", "bytea": "blob",
		}
	}
	if f, ok := families[t]; ok {
		return f
	}
	return "?" + t
}

func migrations(t *testing.T, dialectName string) fs.FS {
	t.Helper()
	sub, err := fs.Sub(db.Migrations, db.Dir(dialectName))
	require.NoError(t, err)
	return sub
}

func newProvider(t *testing.T, d dialect, conn *sql.DB) *goose.Provider {
	t.Helper()
	p, err := goose.NewProvider(d.goose, conn, migrations(t, d.name),
		goose.WithDisableGlobalRegistry(true))
	require.NoError(t, err)
	// Not p.Close: that closes conn, which the test's cleanup owns.
	return p
}

// migrateUp applies every migration of d to conn and returns the catalog.
func migrateUp(t *testing.T, d dialect, conn *sql.DB) catalog {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := newProvider(t, d, conn).Up(ctx)
	require.NoError(t, err, "%s: goose up", d.name)
	cat := d.columns(t, conn)
	require.NotEmpty(t, cat, "%s: no tables after goose up", d.name)
	return cat
}

func openSQLite(t *testing.T) *sql.DB {
	t.Helper()
	path := filepath.Join(t.TempDir(), "taskgraph.db")
	conn, err := sql.Open("sqlite", "file:"+path+"?_pragma=foreign_keys(1)")
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	var fk int
	require.NoError(t, conn.QueryRow("PRAGMA foreign_keys").Scan(&fk))
	require.Equal(t, 1, fk, "foreign keys are not enforced")
	return conn
}

// postgresURL returns TASKGRAPH_TEST_DATABASE_URL, skipping the test when it
// is unset, unless CI=true, where PostgreSQL is required.
func postgresURL(t *testing.T) string {
	t.Helper()
	dsn := os.Getenv("TASKGRAPH_TEST_DATABASE_URL")
	if dsn == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true but TASKGRAPH_TEST_DATABASE_URL is not set")
		}
		t.Skip("TASKGRAPH_TEST_DATABASE_URL is not set: skipping PostgreSQL")
	}
	return dsn
}

// withSearchPath returns dsn (a URL or a key=value string) with the
// connection's search_path set to schema; lib/pq sends unknown parameters
// to the server as run-time parameters.
func withSearchPath(t *testing.T, dsn, schema string) string {
	t.Helper()
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		require.NoError(t, err, "parse TASKGRAPH_TEST_DATABASE_URL")
		q := u.Query()
		q.Set("search_path", schema)
		u.RawQuery = q.Encode()
		return u.String()
	}
	return dsn + " search_path=" + schema
}

// openPostgres creates a uniquely named schema in the test database, drops it
// when the test ends, and returns a pool whose connections all use it.
func openPostgres(t *testing.T) *sql.DB {
	t.Helper()
	dsn := postgresURL(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	admin, err := sql.Open("postgres", dsn)
	require.NoError(t, err)
	t.Cleanup(func() { _ = admin.Close() })
	require.NoError(t, admin.PingContext(ctx), "PostgreSQL at TASKGRAPH_TEST_DATABASE_URL is unreachable")

	b := make([]byte, 8)
	_, err = rand.Read(b)
	require.NoError(t, err)
	schema := "tg_parity_" + hex.EncodeToString(b)
	_, err = admin.ExecContext(ctx, "CREATE SCHEMA "+schema)
	require.NoError(t, err)
	// Registered after admin's Close, so it runs before it (and after conn's).
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := admin.ExecContext(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})

	conn, err := sql.Open("postgres", withSearchPath(t, dsn, schema))
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	var current sql.NullString
	require.NoError(t, conn.QueryRowContext(ctx, "SELECT current_schema()").Scan(&current))
	require.Equal(t, schema, current.String, "search_path was not applied to the connection")
	return conn
}

func sqliteColumns(t *testing.T, conn *sql.DB) catalog {
	t.Helper()
	rows, err := conn.Query(`
		SELECT m.name, p.name, p."notnull", p.type
		FROM sqlite_master AS m JOIN pragma_table_info(m.name) AS p
		WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite\_%' ESCAPE '\' AND m.name <> ?
		  -- Full-text indexes (FTS5 virtual tables and their shadow tables)
		  -- are SQLite's counterpart of PostgreSQL's GIN indexes, not tables.
		  AND m.name NOT IN (SELECT name FROM pragma_table_list WHERE type IN ('virtual', 'shadow'))`,
		gooseTable)
	require.NoError(t, err)
	defer rows.Close()
	cat := catalog{}
	for rows.Next() {
		var table, name, typ string
		var notNull bool
		require.NoError(t, rows.Scan(&table, &name, &notNull, &typ))
		cat[table+"."+name] = column{NotNull: notNull, Type: typeFamily(db.DialectSQLite, typ)}
	}
	require.NoError(t, rows.Err())
	return cat
}

func postgresColumns(t *testing.T, conn *sql.DB) catalog {
	t.Helper()
	rows, err := conn.Query(`
		SELECT c.table_name, c.column_name, c.is_nullable = 'NO', c.data_type
		FROM information_schema.columns AS c
		JOIN information_schema.tables AS t
		  ON t.table_schema = c.table_schema AND t.table_name = c.table_name
		WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE'
		  AND c.table_name <> $1
		  -- Full-text documents (tsvector) are the counterpart of SQLite's
		  -- FTS5 tables, which the SQLite side leaves out.
		  AND c.data_type <> 'tsvector'`,
		gooseTable)
	require.NoError(t, err)
	defer rows.Close()
	cat := catalog{}
	for rows.Next() {
		var table, name, typ string
		var notNull bool
		require.NoError(t, rows.Scan(&table, &name, &notNull, &typ))
		cat[table+"."+name] = column{NotNull: notNull, Type: typeFamily(db.DialectPostgres, typ)}
	}
	require.NoError(t, rows.Err())
	return cat
}

// diffCatalogs describes every difference between the two catalogs, one line
// each; it is empty when they agree.
func diffCatalogs(sqlite, postgres catalog) []string {
	keys := map[string]bool{}
	for k := range sqlite {
		keys[k] = true
	}
	for k := range postgres {
		keys[k] = true
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)

	describe := func(c column) string {
		if c.NotNull {
			return c.Type + " NOT NULL"
		}
		return c.Type + " NULL"
	}
	var diff []string
	for _, k := range sorted {
		s, inS := sqlite[k]
		p, inP := postgres[k]
		switch {
		case !inP:
			diff = append(diff, fmt.Sprintf("  %-50s only in sqlite   (%s)", k, describe(s)))
		case !inS:
			diff = append(diff, fmt.Sprintf("  %-50s only in postgres (%s)", k, describe(p)))
		case s != p:
			diff = append(diff, fmt.Sprintf("  %-50s sqlite: %s, postgres: %s", k, describe(s), describe(p)))
		}
	}
	return diff
}

// TestMigrationVersionsMatch checks that both trees hold the same goose
// versions, so one number means the same change in either database.
func TestMigrationVersionsMatch(t *testing.T) {
	versions := func(dialectName string) map[int64]string {
		entries, err := fs.ReadDir(db.Migrations, db.Dir(dialectName))
		require.NoError(t, err)
		out := map[int64]string{}
		for _, e := range entries {
			require.False(t, e.IsDir(), "%s: unexpected directory %s", dialectName, e.Name())
			require.Equal(t, ".sql", filepath.Ext(e.Name()), "%s: %s is not a SQL migration", dialectName, e.Name())
			v, err := goose.NumericComponent(e.Name())
			require.NoError(t, err, "%s: %s", dialectName, e.Name())
			prev, dup := out[v]
			require.False(t, dup, "%s: version %d used by %s and %s", dialectName, v, prev, e.Name())
			out[v] = e.Name()
		}
		require.NotEmpty(t, out, "%s: no migrations", dialectName)
		return out
	}
	sqlite, postgres := versions(db.DialectSQLite), versions(db.DialectPostgres)

	var problems []string
	for v, name := range sqlite {
		if _, ok := postgres[v]; !ok {
			problems = append(problems, fmt.Sprintf("  version %d (sqlite/%s) missing from postgres", v, name))
		}
	}
	for v, name := range postgres {
		if _, ok := sqlite[v]; !ok {
			problems = append(problems, fmt.Sprintf("  version %d (postgres/%s) missing from sqlite", v, name))
		}
	}
	if len(problems) > 0 {
		slices.Sort(problems)
		t.Fatalf("migration versions differ:\n%s", strings.Join(problems, "\n"))
	}
}

// TestSchemaParity applies both trees and requires the same tables, columns,
// NOT NULL-ness and type families in SQLite and PostgreSQL.
func TestSchemaParity(t *testing.T) {
	sqlite := migrateUp(t, sqliteDialect, sqliteDialect.open(t))
	postgres := migrateUp(t, postgresDialect, postgresDialect.open(t))

	if diff := diffCatalogs(sqlite, postgres); len(diff) > 0 {
		t.Fatalf("schemas differ (table.column):\n%s", strings.Join(diff, "\n"))
	}
}

// TestMigrationsDownUp applies every migration, rolls all of them back,
// which must leave no tables, and applies them again.
func TestMigrationsDownUp(t *testing.T) {
	for _, d := range []dialect{sqliteDialect, postgresDialect} {
		t.Run(d.name, func(t *testing.T) {
			conn := d.open(t)
			first := migrateUp(t, d, conn)

			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			_, err := newProvider(t, d, conn).DownTo(ctx, 0)
			require.NoError(t, err, "goose down")
			left := d.columns(t, conn)
			require.Empty(t, left.tables(), "tables left after goose down to 0")

			second := migrateUp(t, d, conn)
			require.Equal(t, first, second, "schema differs after up, down, up")
		})
	}
}

// TestDisplayIDCounterUpsert runs the display id allocation statement of the
// store on both dialects: the first call per (project, category) yields 1,
// later ones count up, and other keys are independent.
func TestDisplayIDCounterUpsert(t *testing.T) {
	for _, d := range []dialect{sqliteDialect, postgresDialect} {
		t.Run(d.name, func(t *testing.T) {
			conn := d.open(t)
			migrateUp(t, d, conn)

			const (
				userID    = "0195f0a8-0000-7000-8000-000000000001"
				projectID = "0195f0a8-0000-7000-8000-000000000002"
			)
			now := time.Now().UTC()
			_, err := conn.Exec(`INSERT INTO users (id, slug, name, email, created_at, updated_at)
				VALUES ($1, 'ada', 'Ada', 'ada@example.com', $2, $2)`, userID, now)
			require.NoError(t, err)
			_, err = conn.Exec(`INSERT INTO projects (id, slug, name, owner_id, created_at, updated_at)
				VALUES ($1, 'tg', 'Taskgraph', $2, $3, $3)`, projectID, userID, now)
			require.NoError(t, err)

			next := func(category string) int {
				var v int
				require.NoError(t, conn.QueryRow(`
					INSERT INTO display_id_counters (project_id, category, last_value)
					VALUES ($1, $2, 1)
					ON CONFLICT (project_id, category)
					DO UPDATE SET last_value = display_id_counters.last_value + 1
					RETURNING last_value`, projectID, category).Scan(&v))
				return v
			}
			require.Equal(t, 1, next("FEATURE"))
			require.Equal(t, 2, next("FEATURE"))
			require.Equal(t, 1, next("BUG"))
			require.Equal(t, 3, next("FEATURE"))

			_, err = conn.Exec(`INSERT INTO display_id_counters (project_id, category, last_value)
				VALUES ($1, 'feature', 1)`, projectID)
			require.Error(t, err, "lower-case category must violate the CHECK")
		})
	}
}
