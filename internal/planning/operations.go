package planning

import (
	"github.com/taskgraph/taskgraph/internal/domain"
)

var opOrder = []domain.FileOperation{domain.OpCreate, domain.OpUpdate, domain.OpDelete, domain.OpRead}

func opBit(op domain.FileOperation) uint8 {
	switch op {
	case domain.OpCreate:
		return opCreate
	case domain.OpUpdate:
		return opUpdate
	case domain.OpDelete:
		return opDelete
	case domain.OpRead:
		return opRead
	}
	return 0
}

// conflictsWith is, per operation bit, the operations it conflicts with: the
// file-conflict matrix (symmetric).
var conflictsWith = map[uint8]uint8{
	opCreate: opCreate | opDelete,
	opUpdate: opUpdate | opDelete,
	opDelete: opCreate | opUpdate | opDelete | opRead,
	opRead:   opDelete,
}

// conflictMasks[ops] is the set of operations that conflict with any of ops.
var conflictMasks = func() (t [opAll + 1]uint8) {
	for ops := range t {
		for b, c := range conflictsWith {
			if uint8(ops)&b != 0 {
				t[ops] |= c
			}
		}
	}
	return t
}()

// OperationsConflict reports whether two tasks doing a and b to the same file
// conflict. An operation outside the four known ones conflicts with everything:
// the safe assumption.
func OperationsConflict(a, b domain.FileOperation) bool {
	ba, bb := opBit(a), opBit(b)
	if ba == 0 || bb == 0 {
		return true
	}
	return conflictsWith[ba]&bb != 0
}

// firstConflict returns the first conflicting pair of operations of a and b.
func firstConflict(a, b []domain.FileOperation) (domain.FileOperation, domain.FileOperation, bool) {
	for _, x := range a {
		for _, y := range b {
			if OperationsConflict(x, y) {
				return x, y, true
			}
		}
	}
	return "", "", false
}

// Operation bits, in the canonical order CREATE, UPDATE, DELETE, READ.
const (
	opCreate uint8 = 1 << iota
	opUpdate
	opDelete
	opRead
	opAll = opCreate | opUpdate | opDelete | opRead
)
