package testdb

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"

	"github.com/taskgraph/taskgraph/db"
)

// migrationsHash names the migrations of dialect by their content, so that a
// template made from them is reused until a migration changes.
func migrationsHash(dialect string) (string, error) {
	h := sha256.New()
	err := fs.WalkDir(db.Migrations, db.Dir(dialect), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(db.Migrations, path)
		if err != nil {
			return err
		}
		h.Write([]byte(path + "\x00"))
		h.Write(b)
		return nil
	})
	return hex.EncodeToString(h.Sum(nil))[:16], err
}
