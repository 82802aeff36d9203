package domain

import "context"

// Page sizes of Relay connections.
const (
	DefaultPageSize = 50
	MaxPageSize     = 100
)

// PageArgs are the Relay arguments of a connection field.
type PageArgs struct {
	First  *int
	After  *string
	Last   *int
	Before *string
}

// Validate checks page sizes: negative is BAD_USER_INPUT, above MaxPageSize is
// LIMIT_EXCEEDED; first and last together are refused.
func (a PageArgs) Validate() error {
	for _, n := range []struct {
		name string
		v    *int
	}{{"first", a.First}, {"last", a.Last}} {
		if n.v == nil {
			continue
		}
		if *n.v < 0 {
			return InputError(n.name, "%s must not be negative", n.name)
		}
		if *n.v > MaxPageSize {
			return &Error{Code: CodeLimitExceeded, Field: n.name,
				Message: "page size above the maximum of 100", Details: map[string]any{"max": MaxPageSize}}
		}
	}
	if a.First != nil && a.Last != nil {
		return InputError("last", "give first or last, not both")
	}
	return nil
}

// Backward reports whether the page is read from the end (last/before).
func (a PageArgs) Backward() bool { return a.Last != nil || (a.Before != nil && a.First == nil) }

// Limit is the number of rows the page holds.
func (a PageArgs) Limit() int {
	switch {
	case a.First != nil:
		return *a.First
	case a.Last != nil:
		return *a.Last
	default:
		return DefaultPageSize
	}
}

// Page is one page of a connection: items with their cursors, and a lazy total.
type Page[T any] struct {
	Items           []T
	Cursors         []string
	HasNextPage     bool
	HasPreviousPage bool
	// Total counts every item the connection matches; it runs only when asked.
	Total func(ctx context.Context) (int, error)
}

// ProjectScope limits reads to the projects a caller may see: all of them
// (ADMIN), those one user owns (MEMBER), or one project (AGENT).
type ProjectScope struct {
	All       bool
	OwnerID   string
	ProjectID string
}
