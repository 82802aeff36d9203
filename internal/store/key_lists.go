package store

import "context"

// Batched lookups by key — a level of a nested read: the tasks of a page,
// their relationships, their file impacts — name their keys in an IN list.
// Sent as they come, each such statement has its own text (one placeholder
// per key) and PostgreSQL parses and plans it on every call, which costs
// more than running it. The list is therefore padded to the next power of
// two with its last key (a repeated key changes no IN's answer), so that a
// statement's text depends on its columns and on the size bucket of its
// list only, and such texts are prepared while the cache of them has room.

// maxPaddedKeys is the longest list padded: longer ones (beyond any page)
// go as they are, unprepared, and padding never doubles a list past the
// database's parameter limits.
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

// selectKeys runs query, whose every "IN (?)" takes keys: padded and
// prepared when the padded text is cached or the cache has room, else as it
// is.
func (q *Q) selectKeys(ctx context.Context, dest any, query string, lists int, keys []string) error {
	if len(keys) <= maxPaddedKeys {
		padded, expanded := inLists(query, lists, padKeys(keys))
		if q.db.admitKeyList(q.db.sqlx.Rebind(padded)) {
			return q.selectP(ctx, dest, padded, expanded...)
		}
	}
	query, args := inLists(query, lists, keys)
	return q.selectx(ctx, dest, query, args...)
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
