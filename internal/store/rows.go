package store

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"
)

// byIDs loads rows of table by primary key; missing ids are simply absent.
func byIDs[T any](ctx context.Context, q *Q, table string, ids []string) ([]*T, error) {
	return byColumn[T](ctx, q, table, "id", ids, "id")
}

// byColumn loads rows of table whose column is one of values, in orderBy order.
func byColumn[T any](ctx context.Context, q *Q, table, column string, values []string, orderBy string) ([]*T, error) {
	return colsByColumn[T](ctx, q, "*", table, column, values, orderBy)
}

// colsByColumn is byColumn reading only cols (the other fields of T stay zero).
func colsByColumn[T any](ctx context.Context, q *Q, cols, table, column string, values []string, orderBy string) ([]*T, error) {
	if len(values) == 0 {
		return nil, nil
	}
	var out []*T
	if len(values) == 1 && cols == "*" {
		// One key — a mutation's project, a single object's read — is the
		// same text on every call: prepared outside the key lists' bound.
		query := fmt.Sprintf("SELECT * FROM %s WHERE %s = ? ORDER BY %s", table, column, orderBy)
		if err := q.selectP(ctx, &out, query, values[0]); err != nil {
			return nil, err
		}
		return out, nil
	}
	query := fmt.Sprintf("SELECT %s FROM %s WHERE %s IN (?) ORDER BY %s", cols, table, column, orderBy)
	if err := q.selectKeys(ctx, &out, query, 1, values); err != nil {
		return nil, err
	}
	return out, nil
}

// columnsByField maps a row type to its fields' columns (their db tags).
var columnsByField sync.Map // reflect.Type -> map[string]string

// shownColumns is the select list of T's fields always and fields (names of
// T's fields), each column once and after prefix: what a read showing only
// those fields reads. The names are fixed in code, so one T lacks is a bug:
// it panics.
func shownColumns[T any](prefix string, always, fields []string) string {
	typ := reflect.TypeFor[T]()
	cols, ok := columnsByField.Load(typ)
	if !ok {
		m := map[string]string{}
		for f := range typ.Fields() {
			if c := f.Tag.Get("db"); c != "" && c != "-" {
				m[f.Name] = c
			}
		}
		cols, _ = columnsByField.LoadOrStore(typ, m)
	}
	var b strings.Builder
	seen := map[string]bool{}
	for _, names := range [][]string{always, fields} {
		for _, f := range names {
			c, ok := cols.(map[string]string)[f]
			if !ok {
				panic(fmt.Sprintf("store: %s has no field %q with a column", typ, f))
			}
			if !seen[c] {
				seen[c] = true
				if b.Len() > 0 {
					b.WriteString(", ")
				}
				b.WriteString(prefix)
				b.WriteString(c)
			}
		}
	}
	return b.String()
}
