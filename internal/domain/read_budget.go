package domain

import (
	"context"
	"fmt"
	"sync/atomic"
)

// A read budget bounds the bytes one request may read from the database:
// the store charges every row it scans (its text and binary values) to the
// budget in the request's context and stops — LIMIT_EXCEEDED — once the sum
// passes the limit, so a query's memory stays near the limit whatever its
// shape: aliases, pages of large texts, long logs. Reads without a budget in
// their context (sweeps, the server's own work) are not bounded by it.
type ReadBudget struct {
	limit int64
	used  atomic.Int64
}

type readBudgetKey struct{}

// WithReadBudget returns ctx with a fresh budget of limit bytes.
func WithReadBudget(ctx context.Context, limit int64) context.Context {
	return context.WithValue(ctx, readBudgetKey{}, &ReadBudget{limit: limit})
}

// ReadBudgetOf is ctx's read budget, nil when it has none: a statement
// looks it up once and charges its rows to it, rather than searching the
// context for every row.
func ReadBudgetOf(ctx context.Context) *ReadBudget {
	b, _ := ctx.Value(readBudgetKey{}).(*ReadBudget)
	return b
}

// Charge adds n bytes read to the budget and returns LIMIT_EXCEEDED once
// it is spent; a nil budget takes any charge.
func (b *ReadBudget) Charge(n int) error {
	if b == nil || n == 0 {
		return nil
	}
	if b.used.Add(int64(n)) > b.limit {
		return &Error{Code: CodeLimitExceeded, Message: fmt.Sprintf(
			"the request reads more than %d bytes of data; ask for fewer fields, fewer aliases or smaller pages", b.limit),
			Details: map[string]any{"maxRead": b.limit}}
	}
	return nil
}

// ChargeRead adds n bytes read to ctx's budget, if it has one, and returns
// LIMIT_EXCEEDED once the budget is spent.
func ChargeRead(ctx context.Context, n int) error { return ReadBudgetOf(ctx).Charge(n) }
