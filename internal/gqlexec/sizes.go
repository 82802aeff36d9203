package gqlexec

import (
	"bytes"
	"sync/atomic"
	"unsafe"

	"github.com/vektah/gqlparser/v2/ast"
)

// ResponseSizes remembers the size of the last response of recent
// operations, so that the next response of the same operation is written
// into a buffer made at about its size once, where a buffer grown by
// doubling from 64 bytes allocated and copied about twice the response (a
// read of 100 tasks with their links: 256 KiB for a 120 KiB response).
//
// It is a fixed table indexed by the operation's address (the parsed
// document is cached, so an operation sent again is the same object), and
// it holds addresses, not references: an operation the cache dropped, or
// another one that reuses its address or its slot, only gets a size that
// fits less well. A hint is capped (maxHint), so a one-off huge response
// does not make its operation's later buffers large.
type ResponseSizes struct {
	slots [responseSlots]sizeSlot
}

type sizeSlot struct {
	op   atomic.Uintptr
	size atomic.Int64
}

const (
	responseSlots = 256
	maxHint       = 4 << 20
)

// Buffer is a buffer for a response of op: with room for
// its last response and an eighth more when it is known, else empty.
func (r *ResponseSizes) Buffer(op *ast.OperationDefinition) *bytes.Buffer {
	s := r.slot(op)
	if s.op.Load() == address(op) {
		if n := s.size.Load(); n > 0 {
			return bytes.NewBuffer(make([]byte, 0, n+n/8))
		}
	}
	return new(bytes.Buffer)
}

// Written records the size of a response of op and returns
// its bytes.
func (r *ResponseSizes) Written(op *ast.OperationDefinition, buf *bytes.Buffer) []byte {
	s := r.slot(op)
	s.op.Store(address(op))
	s.size.Store(int64(min(buf.Len(), maxHint)))
	return buf.Bytes()
}

func (r *ResponseSizes) slot(op *ast.OperationDefinition) *sizeSlot {
	a := address(op)
	return &r.slots[(a>>4^a>>12)%responseSlots]
}

// address is op's address, which keeps nothing alive.
func address(op *ast.OperationDefinition) uintptr { return uintptr(unsafe.Pointer(op)) }
