package store

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/taskgraph/taskgraph/internal/domain"
)

// keyKind says how a sort key travels in a cursor.
type keyKind int

const (
	keyInt keyKind = iota
	keyString
	keyTime
)

// sortKey is the column a connection is ordered by; ties break on id in the same
// direction. Nullable keys sort their NULLs last in the forward direction.
type sortKey struct {
	col      string
	kind     keyKind
	nullable bool
	desc     bool
}

// cursor is the position after (or before) one row: its sort key and id.
type cursor struct {
	Key any    `json:"k"`
	ID  string `json:"i"`
}

func encodeCursor(key any, id string) string {
	switch v := key.(type) {
	case time.Time:
		key = v.UTC().Format(time.RFC3339Nano)
	case *time.Time:
		if v == nil {
			key = nil
		} else {
			key = v.UTC().Format(time.RFC3339Nano)
		}
	}
	b, _ := json.Marshal(cursor{Key: key, ID: id})
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeCursor(s string, kind keyKind, field string) (*cursor, error) {
	bad := domain.InputError(field, "%q is not a cursor of this connection", s)
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, bad
	}
	var c cursor
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	if err := dec.Decode(&c); err != nil || c.ID == "" {
		return nil, bad
	}
	switch v := c.Key.(type) {
	case nil:
	case json.Number:
		if kind != keyInt {
			return nil, bad
		}
		n, err := v.Int64()
		if err != nil {
			return nil, bad
		}
		c.Key = n
	case string:
		switch kind {
		case keyString:
		case keyTime:
			t, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				return nil, bad
			}
			c.Key = t.UTC()
		default:
			return nil, bad
		}
	default:
		return nil, bad
	}
	return &c, nil
}

// pageQuery describes one connection query: rows of `from` matching `where`,
// ordered by key then id. With parentCol set, the page is taken per parent (one
// statement for many parents, through ROW_NUMBER), which is how nested connections
// stay one statement per level.
type pageQuery[T any] struct {
	selectCols string // e.g. "t.*"
	from       string // e.g. "tasks t"
	where      []string
	args       []any
	idCol      string // e.g. "t.id"
	key        sortKey
	keyOf      func(T) any
	idOf       func(T) string
	parentCol  string          // optional: e.g. "t.project_id"
	parents    []string        // the parents to page within
	parentOf   func(T) string  // the parent of a row
	page       domain.PageArgs // first/after/last/before
	// Optional cursor format in place of the default (events share theirs with
	// subscriptions): the cursor of a row, and the position a cursor names.
	cursorOf    func(T) string
	parseCursor func(s, field string) (*cursor, error)
}

func (p *pageQuery[T]) filter(cond string, args ...any) {
	p.where = append(p.where, cond)
	p.args = append(p.args, args...)
}

// order returns the ORDER BY terms; backward reverses them.
func (p *pageQuery[T]) order(backward bool) string {
	desc := p.key.desc != backward
	dir := map[bool]string{false: "ASC", true: "DESC"}[desc]
	var terms []string
	if p.key.nullable {
		// NULLs last going forward, so first when read backward.
		terms = append(terms, fmt.Sprintf("(%s IS NULL) %s", p.key.col, map[bool]string{false: "ASC", true: "DESC"}[backward]))
	}
	terms = append(terms, p.key.col+" "+dir, p.idCol+" "+dir)
	return strings.Join(terms, ", ")
}

// seek returns the condition for rows after c in the query's reading order.
func (p *pageQuery[T]) seek(c *cursor, backward bool) (string, []any) {
	desc := p.key.desc != backward
	op := map[bool]string{false: ">", true: "<"}[desc]
	k, id := p.key.col, p.idCol
	after := fmt.Sprintf("(%s %s ? OR (%s = ? AND %s %s ?))", k, op, k, id, op)
	if !p.key.nullable {
		return after, []any{c.Key, c.Key, c.ID}
	}
	nullsLast := !backward
	switch {
	case nullsLast && c.Key != nil:
		return fmt.Sprintf("(%s IS NULL OR %s)", k, after), []any{c.Key, c.Key, c.ID}
	case nullsLast:
		return fmt.Sprintf("(%s IS NULL AND %s %s ?)", k, id, op), []any{c.ID}
	case c.Key == nil:
		return fmt.Sprintf("(%s IS NOT NULL OR %s %s ?)", k, id, op), []any{c.ID}
	default:
		return fmt.Sprintf("(%s IS NOT NULL AND %s)", k, after), []any{c.Key, c.Key, c.ID}
	}
}

// fetch runs the page query: per parent when parentCol is set.
func (p *pageQuery[T]) fetch(ctx context.Context, q *Q) (map[string]domain.Page[T], error) {
	if err := p.page.Validate(); err != nil {
		return nil, err
	}
	backward := p.page.Backward()
	limit := p.page.Limit()
	where, args := append([]string(nil), p.where...), append([]any(nil), p.args...)
	for _, c := range []struct {
		s     *string
		field string
		back  bool
	}{{p.page.After, "after", false}, {p.page.Before, "before", true}} {
		if c.s == nil || (c.back != backward) {
			continue
		}
		var cur *cursor
		var err error
		if p.parseCursor != nil {
			cur, err = p.parseCursor(*c.s, c.field)
		} else {
			cur, err = decodeCursor(*c.s, p.key.kind, c.field)
		}
		if err != nil {
			return nil, err
		}
		cond, cargs := p.seek(cur, backward)
		where, args = append(where, cond), append(args, cargs...)
	}
	if p.parentCol != "" {
		if len(p.parents) == 0 {
			return map[string]domain.Page[T]{}, nil
		}
		cond, arg := q.keysCond(p.parentCol, p.parents)
		where, args = append(where, cond), append(args, arg)
	}
	whereSQL := ""
	if len(where) > 0 {
		whereSQL = " WHERE " + strings.Join(where, " AND ")
	}
	var query string
	if p.parentCol == "" || len(p.parents) == 1 {
		// One parent needs no window: a plain ordered LIMIT uses the index.
		query = fmt.Sprintf("SELECT %s FROM %s%s ORDER BY %s LIMIT %d", p.selectCols, p.from, whereSQL, p.order(backward), limit+1)
	} else {
		query = fmt.Sprintf("SELECT * FROM (SELECT %s, ROW_NUMBER() OVER (PARTITION BY %s ORDER BY %s) AS rn__ FROM %s%s) ranked WHERE rn__ <= %d ORDER BY rn__",
			p.selectCols, p.parentCol, p.order(backward), p.from, whereSQL, limit+1)
	}
	query, args = in(query, args...)
	var rows []T
	if err := q.selectPage(ctx, &rows, query, args...); err != nil {
		return nil, err
	}
	grouped := map[string][]T{}
	for _, r := range rows {
		parent := ""
		if p.parentOf != nil {
			parent = p.parentOf(r)
		}
		grouped[parent] = append(grouped[parent], r)
	}
	out := make(map[string]domain.Page[T], len(grouped))
	keys := p.parents
	if p.parentCol == "" {
		keys = []string{""}
	}
	for _, parent := range keys {
		items := grouped[parent]
		more := len(items) > limit
		if more {
			items = items[:limit]
		}
		if backward {
			for i, j := 0, len(items)-1; i < j; i, j = i+1, j-1 {
				items[i], items[j] = items[j], items[i]
			}
		}
		pg := domain.Page[T]{Items: items, Cursors: make([]string, len(items))}
		for i, it := range items {
			if p.cursorOf != nil {
				pg.Cursors[i] = p.cursorOf(it)
			} else {
				pg.Cursors[i] = encodeCursor(p.keyOf(it), p.idOf(it))
			}
		}
		if backward {
			pg.HasPreviousPage, pg.HasNextPage = more, p.page.Before != nil
		} else {
			pg.HasNextPage, pg.HasPreviousPage = more, p.page.After != nil
		}
		if pg.Items == nil {
			pg.Items = []T{}
		}
		out[parent] = pg
	}
	return out, nil
}

// count returns the number of rows matching the query's filters (cursors aside),
// per parent when parentCol is set.
func (p *pageQuery[T]) count(ctx context.Context, q *Q) (map[string]int, error) {
	where, args := append([]string(nil), p.where...), append([]any(nil), p.args...)
	sel, group := "'' AS parent, COUNT(*) AS n", ""
	if p.parentCol != "" {
		if len(p.parents) == 0 {
			return map[string]int{}, nil
		}
		cond, arg := q.keysCond(p.parentCol, p.parents)
		where, args = append(where, cond), append(args, arg)
		sel, group = p.parentCol+" AS parent, COUNT(*) AS n", " GROUP BY "+p.parentCol
	}
	whereSQL := ""
	if len(where) > 0 {
		whereSQL = " WHERE " + strings.Join(where, " AND ")
	}
	query, args := in(fmt.Sprintf("SELECT %s FROM %s%s%s", sel, p.from, whereSQL, group), args...)
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

// selectPage runs a page's statement, whose rows may carry a column that
// no field takes (the row number of a page per parent): on PostgreSQL
// prepared when the key-list cache admits its text — a page's text varies
// with its filters, columns, size and direction, never with its keys
// (keysCond) — elsewhere, or past the cache's bound, as it is.
func (q *Q) selectPage(ctx context.Context, dest any, query string, args ...any) error {
	if q.db.dialect == Postgres {
		return q.selectBounded(ctx, dest, query, true, args...)
	}
	return q.selectRows(ctx, dest, query, true, args...)
}

func unsafe(e sqlx.ExtContext) sqlx.ExtContext {
	switch v := e.(type) {
	case *sqlx.DB:
		return v.Unsafe()
	case *sqlx.Tx:
		return v.Unsafe()
	}
	return e
}
