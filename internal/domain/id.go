package domain

import (
	"encoding/base64"
	"fmt"
	"strings"
	"unicode/utf8"
	"unsafe"
)

// Kind is the GraphQL type name a global id is tagged with.
type Kind string

// Kinds of node.
const (
	KindUser         Kind = "User"
	KindAPIToken     Kind = "ApiToken"
	KindProject      Kind = "Project"
	KindIdea         Kind = "Idea"
	KindTask         Kind = "Task"
	KindTaskList     Kind = "TaskList"
	KindTaskListItem Kind = "TaskListItem"
	KindRelationship Kind = "TaskRelationship"
	KindStateChange  Kind = "TaskStateChange"
	KindTaskBlock    Kind = "TaskBlock"
	KindTemplate     Kind = "TaskTemplate"
	KindFileImpact   Kind = "TaskFileImpact"
	// KindParallelismAnalysis tags the rows of a plan's parallelism analysis.
	KindParallelismAnalysis Kind = "ParallelismAnalysis"
)

// GlobalID is the opaque, type-tagged id clients see: base64url("Kind:uuid").
func GlobalID(kind Kind, id string) string {
	if id == "" {
		return ""
	}
	// One allocation, the id itself: "Kind:uuid" is put together on the
	// stack (a response may carry thousands of ids).
	var buf [64]byte
	raw := append(append(append(buf[:0], kind...), ':'), id...)
	out := make([]byte, base64.RawURLEncoding.EncodedLen(len(raw)))
	base64.RawURLEncoding.Encode(out, raw)
	return unsafe.String(unsafe.SliceData(out), len(out))
}

// ParseGlobalID splits a global id into its kind and database id.
func ParseGlobalID(gid string) (Kind, string, bool) {
	raw, err := base64.RawURLEncoding.DecodeString(gid)
	if err != nil {
		return "", "", false
	}
	kind, id, ok := strings.Cut(string(raw), ":")
	if !ok || kind == "" || !isUUID(id) {
		return "", "", false
	}
	return Kind(kind), id, true
}

// maxEcho bounds how much of a client's value an error message repeats.
const maxEcho = 80

// Echo is v as an error message may repeat it: whole when short, else its
// first characters and how long it was, so that a 100 KB value does not come
// back in the error.
func Echo(v string) string {
	if len(v) <= maxEcho {
		return v
	}
	cut := maxEcho
	for cut > 0 && !utf8.RuneStart(v[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes)", v[:cut], len(v))
}

// DecodeID turns the global id given in input field `field` into the database id of
// an entity of the wanted kind. A malformed id is BAD_USER_INPUT; an id of another
// kind names nothing of this kind, so it is NOT_FOUND.
func DecodeID(want Kind, gid, field string) (string, error) {
	kind, id, ok := ParseGlobalID(gid)
	if !ok {
		return "", InputError(field, "%q is not a valid id", Echo(gid))
	}
	if kind != want {
		return "", NotFound(string(want))
	}
	return id, nil
}

// DecodeOptionalID is DecodeID for an optional input: nil stays nil.
func DecodeOptionalID(want Kind, gid *string, field string) (*string, error) {
	if gid == nil {
		return nil, nil
	}
	id, err := DecodeID(want, *gid, field)
	if err != nil {
		return nil, err
	}
	return &id, nil
}

func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, c := range s {
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
				return false
			}
		}
	}
	return true
}
