package store

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jmoiron/sqlx"
)

// Writes sent later. Inside a PostgreSQL transaction, an insert whose
// caller needs neither rows nor a count back is not sent at once: its text,
// arguments written in, waits on the transaction (Q.pending) and goes with
// the next statement the transaction sends — before a read, so the
// transaction always reads its own writes, and in the commit's round trip
// (selectCommit, flushCommit). With BEGIN sent with the first statement
// (lazy_begin.go), a create outside a list makes one round trip inside its
// transaction instead of three.
//
// Only statements whose errors no caller tells apart go this way: a failed
// write sent later fails the statement it went with, and ends the
// transaction as any failed statement does.

// later runs an insert now, or on PostgreSQL inside a transaction, with the
// transaction's next statement.
func (q *Q) later(ctx context.Context, query string, args ...any) error {
	if !q.sendsLater() {
		_, err := q.exec(ctx, query, args...)
		return err
	}
	return q.queue(query, args)
}

// laterP is later for a text that never varies: when it runs now, it runs
// prepared (prepared.go).
func (q *Q) laterP(ctx context.Context, query string, args ...any) error {
	if !q.sendsLater() {
		_, err := q.execP(ctx, query, args...)
		return err
	}
	return q.queue(query, args)
}

// sendsLater says whether q's writes wait for its next statement: inside a
// PostgreSQL transaction.
func (q *Q) sendsLater() bool { return q.db.dialect == Postgres && q.inTx }

// queue writes args into query and leaves it waiting on the transaction.
func (q *Q) queue(query string, args []any) error {
	text, err := inlinePostgres(query, args)
	if err != nil {
		return err
	}
	q.db.statements.Add(1)
	q.pending = append(q.pending, text)
	return nil
}

// laterNamed is later with named arguments (:column) from arg.
func (q *Q) laterNamed(ctx context.Context, query string, arg any) error {
	bound, args, err := sqlx.Named(query, arg)
	if err != nil {
		return err
	}
	return q.later(ctx, bound, args...)
}

// flush sends the writes waiting on q's transaction, in one round trip.
func (q *Q) flush(ctx context.Context) error { return q.sendPending(ctx, false) }

// flushCommit sends the writes waiting on q's transaction with its COMMIT,
// in one round trip: the transaction ends there (withEndsTx). With none
// waiting it sends nothing, and the transaction commits as usual.
func (q *Q) flushCommit(ctx context.Context) error { return q.sendPending(ctx, true) }

// sendPending sends the waiting writes as one simple query, with COMMIT
// after them when commit is set (and then q.committed).
func (q *Q) sendPending(ctx context.Context, commit bool) error {
	if len(q.pending) == 0 {
		return nil
	}
	ctx, span := q.startLater(ctx, len(q.pending))
	text := q.takePending()
	if commit {
		text += ";\nCOMMIT"
		ctx = withEndsTx(ctx)
	}
	_, err := q.ext.ExecContext(ctx, text) // no arguments: one simple query
	err = laterErr(err)
	endStatement(span, err)
	if commit && err == nil {
		q.committed = true
	}
	return err
}

// takePending returns the waiting writes as one text (statements separated
// by semicolons) and forgets them.
func (q *Q) takePending() string {
	text := strings.Join(q.pending, ";\n")
	q.pending = q.pending[:0]
	return text
}

// laterErr is the error of a round trip that carried writes sent later. A
// deadlock or serialization failure stays ErrRetry (InTx redoes the
// transaction), and ErrBusy, which only the statement they went with can
// raise, stays too, as does ErrUnavailable (the connection broke, not a
// write); any other keeps its text but none of the sentinels,
// which the caller of that statement could take for its own (a unique key
// it checks for).
func laterErr(err error) error {
	err = mapErr(err)
	if err == nil || errors.Is(err, ErrRetry) || errors.Is(err, ErrBusy) || errors.Is(err, ErrUnavailable) {
		return err
	}
	return fmt.Errorf("store: a write sent with the next statement failed: %v", err)
}
