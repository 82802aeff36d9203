package gqlexec

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/vektah/gqlparser/v2/ast"
)

// TestResponseSizes: an operation's next buffer has room for its last
// response and an eighth more; an unknown operation's is empty; a huge
// response's hint is capped; the bytes are the buffer's.
func TestResponseSizes(t *testing.T) {
	var r ResponseSizes
	a, b := &ast.OperationDefinition{}, &ast.OperationDefinition{}
	require.Zero(t, r.Buffer(a).Cap())

	buf := r.Buffer(a)
	buf.Write(bytes.Repeat([]byte("x"), 8000))
	require.Equal(t, buf.Bytes(), r.Written(a, buf))
	next := r.Buffer(a)
	require.Equal(t, 0, next.Len())
	require.Equal(t, 9000, next.Cap())
	if r.slot(a) != r.slot(b) {
		require.Zero(t, r.Buffer(b).Cap(), "another operation knows nothing")
	}

	huge := bytes.NewBuffer(make([]byte, maxHint*2))
	r.Written(a, huge)
	require.Equal(t, maxHint+maxHint/8, r.Buffer(a).Cap())
}
