package store

import (
	"context"
	"fmt"
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
	query, args := in(fmt.Sprintf("SELECT %s FROM %s WHERE %s IN (?) ORDER BY %s", cols, table, column, orderBy), values)
	var out []*T
	if err := q.selectx(ctx, &out, query, args...); err != nil {
		return nil, err
	}
	return out, nil
}
