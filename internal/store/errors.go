package store

import (
	"database/sql"
	"errors"
	"fmt"

	"github.com/lib/pq"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Errors the store reports in terms of what happened, not which database said it.
// The service turns them into domain errors with a message for the user.
var (
	ErrNotFound   = errors.New("store: no such row")
	ErrUnique     = errors.New("store: unique constraint violated")
	ErrForeignKey = errors.New("store: foreign key violated")
	ErrCheck      = errors.New("store: check constraint violated")
	// ErrRetry: the database aborted the transaction (deadlock, serialization
	// failure); running it again can succeed. InTx does so.
	ErrRetry = errors.New("store: transaction aborted, retry")
	// ErrBusy: a row the statement would not wait for (NOWAIT) is locked.
	ErrBusy = errors.New("store: row locked")
)

// mapErr wraps database errors in the store's sentinels, keeping the original text.
func mapErr(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	if u := unavailable(err); u != nil {
		return u
	}
	var pqErr *pq.Error
	if errors.As(err, &pqErr) {
		switch pqErr.Code {
		case "23505":
			return fmt.Errorf("%w: %s", ErrUnique, pqErr.Constraint)
		case "23503":
			return fmt.Errorf("%w: %s", ErrForeignKey, pqErr.Constraint)
		case "23514", "23502":
			return fmt.Errorf("%w: %s", ErrCheck, pqErr.Message)
		case "40P01", "40001":
			return fmt.Errorf("%w: %s", ErrRetry, pqErr.Message)
		case "55P03":
			return fmt.Errorf("%w: %s", ErrBusy, pqErr.Message)
		}
		return err
	}
	var sqErr *sqlite.Error
	if errors.As(err, &sqErr) {
		switch sqErr.Code() {
		case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			return fmt.Errorf("%w: %s", ErrUnique, sqErr.Error())
		case sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
			return fmt.Errorf("%w: %s", ErrForeignKey, sqErr.Error())
		case sqlite3.SQLITE_CONSTRAINT_CHECK, sqlite3.SQLITE_CONSTRAINT_NOTNULL:
			return fmt.Errorf("%w: %s", ErrCheck, sqErr.Error())
		}
	}
	return err
}
