package testdb

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/taskgraph/taskgraph/internal/store"
)

// EmptySQLite returns the URL of a new SQLite file in the test's temp
// directory, with nothing applied.
func EmptySQLite(t testing.TB) string {
	return "sqlite:" + filepath.Join(t.TempDir(), "taskgraph.db")
}

// SQLite returns the URL of a new, migrated SQLite file in the test's temp
// directory: a copy of the template.
func SQLite(t testing.TB) string {
	tmpl, err := sqliteTemplate()
	if err != nil {
		t.Fatalf("sqlite template: %v", err)
	}
	path := filepath.Join(t.TempDir(), "taskgraph.db")
	if err := copyFile(tmpl, path); err != nil {
		t.Fatalf("sqlite: copy the template: %v", err)
	}
	return "sqlite:" + path
}

var sqliteTmpl struct {
	once sync.Once
	path string
	err  error
}

// sqliteTemplate returns the path of a migrated SQLite file, made once for
// the current migrations in the system's temp directory and shared by every
// test process (made under a name of its own, then renamed into place).
func sqliteTemplate() (string, error) {
	sqliteTmpl.once.Do(func() {
		sqliteTmpl.path, sqliteTmpl.err = makeSQLiteTemplate()
	})
	return sqliteTmpl.path, sqliteTmpl.err
}

func makeSQLiteTemplate() (string, error) {
	hash, err := migrationsHash("sqlite")
	if err != nil {
		return "", err
	}
	dir := filepath.Join(os.TempDir(), "taskgraph-testdb")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, "sqlite-"+hash+".db")
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	build, err := os.MkdirTemp(dir, "build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(build)
	tmp := filepath.Join(build, "template.db")
	ctx := context.Background()
	d, err := store.Open(ctx, "sqlite:"+tmp)
	if err != nil {
		return "", err
	}
	if err := d.Migrate(ctx); err != nil {
		d.Close()
		return "", err
	}
	if err := d.Close(); err != nil {
		return "", err
	}
	// One file to copy: out of WAL mode, with everything checkpointed into
	// it. The store puts each copy back in WAL mode when it opens it.
	plain, err := sql.Open("sqlite", "file:"+tmp)
	if err != nil {
		return "", err
	}
	_, err = plain.Exec(`PRAGMA journal_mode=DELETE`)
	if cerr := plain.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("leave WAL mode: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return "", err
	}
	return path, nil
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
