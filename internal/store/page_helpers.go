package store

import (
	"context"
	"time"

	"github.com/taskgraph/taskgraph/internal/domain"
)

// insertChunk is how many rows one multi-row INSERT carries: well below the
// bind-parameter limits of SQLite (32766) and PostgreSQL (65535).
const insertChunk = 500

// inChunks calls insert with successive parts of rows, none when rows is empty.
func inChunks[T any](rows []T, insert func([]T) error) error {
	for len(rows) > 0 {
		n := min(len(rows), insertChunk)
		if err := insert(rows[:n]); err != nil {
			return err
		}
		rows = rows[n:]
	}
	return nil
}

// namePage pages rows of a catalog table by name (names are unique within a
// parent, ids break ties across parents).
func namePage[T any](alias, table string, name func(T) string, id func(T) string, page domain.PageArgs) *pageQuery[T] {
	return &pageQuery[T]{
		selectCols: alias + ".*", from: table + " " + alias, idCol: alias + ".id",
		key:   sortKey{col: alias + ".name", kind: keyString},
		keyOf: func(r T) any { return name(r) }, idOf: id,
		page: page,
	}
}

// createdPage pages rows by creation time.
func createdPage[T any](alias, table string, created func(T) time.Time, id func(T) string, page domain.PageArgs) *pageQuery[T] {
	return &pageQuery[T]{
		selectCols: alias + ".*", from: table + " " + alias, idCol: alias + ".id",
		key:   sortKey{col: alias + ".created_at", kind: keyTime},
		keyOf: func(r T) any { return created(r) }, idOf: id,
		page: page,
	}
}

// rootPage runs a page query without parents and gives it a lazy total.
func rootPage[T any](ctx context.Context, q *Q, pq *pageQuery[T]) (domain.Page[T], error) {
	pages, err := pq.fetch(ctx, q)
	if err != nil {
		return domain.Page[T]{}, err
	}
	pg := pages[""]
	pg.Total = func(ctx context.Context) (int, error) {
		n, err := pq.count(ctx, q.db.pool())
		return n[""], err
	}
	return pg, nil
}

// childPages runs a page query per parent.
func childPages[T any](ctx context.Context, q *Q, pq *pageQuery[T], col string, parents []string, parentOf func(T) string) (map[string]domain.Page[T], error) {
	pq.parentCol, pq.parents, pq.parentOf = col, parents, parentOf
	return pq.fetch(ctx, q)
}

// childCounts counts a page query's rows per parent.
func childCounts[T any](ctx context.Context, q *Q, pq *pageQuery[T], col string, parents []string) (map[string]int, error) {
	pq.parentCol, pq.parents = col, parents
	return pq.count(ctx, q)
}

// countBy counts rows of table per value of column among values.
func countBy(ctx context.Context, q *Q, table, column string, values []string) (map[string]int, error) {
	if len(values) == 0 {
		return map[string]int{}, nil
	}
	query, args := in(`SELECT `+column+` AS parent, COUNT(*) AS n FROM `+table+` WHERE `+column+` IN (?) GROUP BY `+column, values)
	var rows []struct {
		Parent string `db:"parent"`
		N      int    `db:"n"`
	}
	if err := q.selectx(ctx, &rows, query, args...); err != nil {
		return nil, err
	}
	out := make(map[string]int, len(rows))
	for _, r := range rows {
		out[r.Parent] = r.N
	}
	return out, nil
}
