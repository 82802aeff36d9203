package store

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/domain"
)

func TestInlinePostgres(t *testing.T) {
	s := "it's a \\ path"
	var none *string
	at := time.Date(2026, 11, 24, 8, 1, 2, 345678000, time.UTC)
	got, err := inlinePostgres(`SELECT ?, ?, ?, ?, ?, ?, ?`,
		[]any{&s, none, 42, true, at, domain.JSON(`{"a":"b'c"}`), domain.StatusPending})
	require.NoError(t, err)
	require.Equal(t, `SELECT  E'it''s a \\ path', NULL, 42, TRUE, '2026-11-24 08:01:02.345678+00:00', '{"a":"b''c"}', 'PENDING'`, got)

	got, err = inlinePostgres(`SELECT ?, ?`, []any{[]byte{0, '\\', '\'', 0xff}, []byte(nil)})
	require.NoError(t, err)
	require.Equal(t, `SELECT  E'\\x005c27ff', NULL`, got, "bytes: BYTEA's hex format")

	_, err = inlinePostgres(`SELECT ?, ?`, []any{1})
	require.Error(t, err)
	_, err = inlinePostgres(`SELECT ?`, []any{1, 2})
	require.Error(t, err)
}
