package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/lib/pq"
)

// Batched lookups by key — a level of a nested read: the tasks of a page,
// their relationships, their file impacts — name their keys in a list, and
// their texts are prepared so that the database does not parse and plan
// them on every call (which costs more than running them):
//
//   - On PostgreSQL the list is one array parameter, "col = ANY(?)": the
//     text depends on the columns only. An IN list of n placeholders would
//     not do: PostgreSQL plans such a statement for its values on every
//     call (a custom plan: its generic plan never looks cheaper), 0.24–0.48
//     ms of a 0.4 ms statement; with one array it settles on the generic
//     plan after five calls.
//   - On SQLite, which has no arrays, the IN list is padded to the next
//     power of two with its last key (a repeated key changes no IN's
//     answer), so that a text depends on its columns and on the size
//     bucket of its list only.
//
// Texts are prepared while the cache of them has room (maxKeyListStmts).

// maxPaddedKeys is the longest list padded on SQLite: longer ones (beyond
// any page) go as they are, unprepared, and padding never doubles a list
// past the database's parameter limits.
const maxPaddedKeys = 1024

// maxKeyListStmts bounds the statements prepared for key lists: each is
// prepared on every connection that runs it, and a read's columns follow
// the fields a client asks, so the texts are not bounded by the code. Past
// the bound, new texts go unprepared.
const maxKeyListStmts = 192

// padKeys is keys padded to the next power of two with its last key; keys
// itself when it is one already, empty, or longer than maxPaddedKeys.
func padKeys(keys []string) []string {
	n := len(keys)
	if n == 0 || n > maxPaddedKeys || n&(n-1) == 0 {
		return keys
	}
	size := 1
	for size < n {
		size <<= 1
	}
	out := make([]string, size)
	copy(out, keys)
	for i := n; i < size; i++ {
		out[i] = keys[n-1]
	}
	return out
}

// selectKeys runs query, whose every "IN (?)" takes keys: on PostgreSQL
// as one array each, on SQLite padded (unless longer than maxPaddedKeys:
// then as they are, unprepared); prepared when the cache admits the text.
func (q *Q) selectKeys(ctx context.Context, dest any, query string, lists int, keys []string) error {
	if q.db.dialect == Postgres {
		query, args := anyLists(query, lists, keys)
		return q.selectBounded(ctx, dest, query, false, args...)
	}
	if len(keys) > maxPaddedKeys {
		query, args := inLists(query, lists, keys)
		return q.selectx(ctx, dest, query, args...)
	}
	query, args := inLists(query, lists, padKeys(keys))
	return q.selectBounded(ctx, dest, query, false, args...)
}

// anyLists is query with each of its lists "IN (?)" made "= ANY(?)" over
// keys as one PostgreSQL array; the column's type gives the array's.
func anyLists(query string, lists int, keys []string) (string, []any) {
	if strings.Count(query, " IN (?)") != lists {
		panic(fmt.Sprintf("store: key-list query without its %d IN lists: %s", lists, query)) // programming error
	}
	arr := keyArray(keys)
	args := make([]any, lists)
	for i := range args {
		args[i] = arr
	}
	return strings.ReplaceAll(query, " IN (?)", " = ANY(?)"), args
}

// keyArray is keys as one PostgreSQL array parameter.
func keyArray(keys []string) any { return pq.StringArray(keys) }

// keysCond is the condition that col is one of keys, with its argument: on
// PostgreSQL one array ("= ANY(?)"), so that the text does not vary with
// the number of keys; elsewhere an IN list, which in() expands. One key is
// an equality.
func (q *Q) keysCond(col string, keys []string) (string, any) {
	switch {
	case len(keys) == 1:
		return col + " = ?", keys[0]
	case q.db.dialect == Postgres:
		return col + " = ANY(?)", keyArray(keys)
	}
	return col + " IN (?)", keys
}

// selectBounded runs query through a prepared statement when the key-list
// cache admits its text, else as it is (extraCols as selectRows takes it):
// for texts that vary with what a client asks (columns, filters, list
// sizes), whose number the cache bounds.
func (q *Q) selectBounded(ctx context.Context, dest any, query string, extraCols bool, args ...any) error {
	if q.db.admitKeyList(q.db.sqlx.Rebind(query)) {
		return q.selectPrepared(ctx, dest, query, extraCols, args...)
	}
	return q.selectRows(ctx, dest, query, extraCols, args...)
}

// inLists is query with each of its lists "IN (?)" expanded over keys.
func inLists(query string, lists int, keys []string) (string, []any) {
	args := make([]any, lists)
	for i := range args {
		args[i] = keys
	}
	return in(query, args...)
}

// admitKeyList reports whether query may be prepared: it is prepared (or
// being prepared) already, or the key-list cache has room, which this call
// then takes.
func (d *DB) admitKeyList(query string) bool {
	if _, ok := d.stmts.Load(query); ok {
		return true
	}
	for {
		n := d.keyLists.Load()
		if n >= maxKeyListStmts {
			return false
		}
		if d.keyLists.CompareAndSwap(n, n+1) {
			return true
		}
	}
}
