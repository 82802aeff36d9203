package store

import (
	"context"
	"database/sql/driver"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// inlinePostgres writes args into query in place of its ? placeholders as
// PostgreSQL literals, for a statement sent with others in one simple query
// (which takes no parameters): see tailPostgres. Strings are quoted with
// pq.QuoteLiteral, which is safe whatever standard_conforming_strings says.
// query must hold no ? other than its placeholders.
func inlinePostgres(query string, args []any) (string, error) {
	var b strings.Builder
	b.Grow(len(query) + 32*len(args))
	n := 0
	for {
		i := strings.IndexByte(query, '?')
		if i < 0 {
			break
		}
		if n == len(args) {
			return "", fmt.Errorf("store: inline: more placeholders than %d arguments", len(args))
		}
		lit, err := pgLiteral(args[n])
		if err != nil {
			return "", err
		}
		b.WriteString(query[:i])
		b.WriteString(lit)
		query = query[i+1:]
		n++
	}
	if n != len(args) {
		return "", fmt.Errorf("store: inline: %d placeholders for %d arguments", n, len(args))
	}
	b.WriteString(query)
	return b.String(), nil
}

// pgLiteral is v as a PostgreSQL literal: v converted as database/sql
// converts a parameter, then spelt out.
func pgLiteral(v any) (string, error) {
	dv, err := driver.DefaultParameterConverter.ConvertValue(v)
	if err != nil {
		return "", fmt.Errorf("store: inline: %w", err)
	}
	switch x := dv.(type) {
	case nil:
		return "NULL", nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64), nil
	case bool:
		if x {
			return "TRUE", nil
		}
		return "FALSE", nil
	case string:
		return pq.QuoteLiteral(x), nil
	case []byte:
		// The store passes bytes to BYTEA columns only (JSON values are
		// strings): hex format; nil is NULL, as the driver sends it.
		if x == nil {
			return "NULL", nil
		}
		return pq.QuoteLiteral(`\x` + hex.EncodeToString(x)), nil
	case time.Time:
		return pq.QuoteLiteral(x.Format("2006-01-02 15:04:05.999999999-07:00")), nil
	}
	return "", fmt.Errorf("store: inline: unsupported value %T", dv)
}

// selectCommit runs query, with args written in, and commits q's
// transaction in the same round trip: query's rows are scanned into dest.
// The transaction ends there (withEndsTx): DB.inTx's commit sends nothing.
func (q *Q) selectCommit(ctx context.Context, dest any, query string, args []any) error {
	text, err := inlinePostgres(query, args)
	if err != nil {
		return err
	}
	wrap := mapErr
	if len(q.pending) > 0 {
		// The writes waiting on the transaction go first, in this round
		// trip; a failure may be theirs (laterErr).
		text = q.takePending() + ";\n" + text
		wrap = laterErr
	}
	q.db.statements.Add(1)
	ctx, span := q.startStatement(ctx, query)
	err = q.queryCommit(ctx, dest, text, wrap)
	endStatement(span, err)
	return err
}

// queryCommit sends text with COMMIT after it and scans its rows into dest.
func (q *Q) queryCommit(ctx context.Context, dest any, text string, wrap func(error) error) error {
	rows, err := q.ext.QueryxContext(withEndsTx(ctx), text+`;
COMMIT`)
	if err != nil {
		return wrap(err)
	}
	// Reading the rows to their end reads the COMMIT's answer: a failed
	// commit is their error.
	if err := sqlx.StructScan(rows, dest); err != nil {
		_ = rows.Close()
		return mapErr(err)
	}
	if err := rows.Close(); err != nil {
		return mapErr(err)
	}
	q.committed = true
	return nil
}
