package domain_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/domain"
)

func intp(n int) *int       { return &n }
func strp(s string) *string { return &s }

func TestPageArgsValidate(t *testing.T) {
	tests := []struct {
		name  string
		args  domain.PageArgs
		code  domain.Code // "" = valid
		field string
	}{
		{"none", domain.PageArgs{}, "", ""},
		{"first 0", domain.PageArgs{First: intp(0)}, "", ""},
		{"first 100", domain.PageArgs{First: intp(100)}, "", ""},
		{"last 100", domain.PageArgs{Last: intp(100)}, "", ""},
		{"first negative", domain.PageArgs{First: intp(-1)}, domain.CodeBadUserInput, "first"},
		{"last negative", domain.PageArgs{Last: intp(-5)}, domain.CodeBadUserInput, "last"},
		{"first 101", domain.PageArgs{First: intp(101)}, domain.CodeLimitExceeded, "first"},
		{"last 101", domain.PageArgs{Last: intp(101)}, domain.CodeLimitExceeded, "last"},
		{"first huge", domain.PageArgs{First: intp(1 << 30)}, domain.CodeLimitExceeded, "first"},
		{"first and last", domain.PageArgs{First: intp(1), Last: intp(1)}, domain.CodeBadUserInput, "last"},
		{"after and before", domain.PageArgs{After: strp("a"), Before: strp("b")}, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.args.Validate()
			if tc.code == "" {
				require.NoError(t, err)
				return
			}
			e, ok := domain.AsError(err)
			require.True(t, ok, "%v", err)
			require.Equal(t, tc.code, e.Code)
			require.Equal(t, tc.field, e.Field)
			if tc.code == domain.CodeLimitExceeded {
				require.Equal(t, domain.MaxPageSize, e.Details["max"])
			}
		})
	}
}

func TestPageArgsDirectionAndLimit(t *testing.T) {
	tests := []struct {
		name     string
		args     domain.PageArgs
		backward bool
		limit    int
	}{
		{"default", domain.PageArgs{}, false, domain.DefaultPageSize},
		{"first", domain.PageArgs{First: intp(7)}, false, 7},
		{"first after", domain.PageArgs{First: intp(7), After: strp("c")}, false, 7},
		{"last", domain.PageArgs{Last: intp(3)}, true, 3},
		{"last before", domain.PageArgs{Last: intp(3), Before: strp("c")}, true, 3},
		{"before alone", domain.PageArgs{Before: strp("c")}, true, domain.DefaultPageSize},
		{"first before", domain.PageArgs{First: intp(2), Before: strp("c")}, false, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.backward, tc.args.Backward())
			require.Equal(t, tc.limit, tc.args.Limit())
		})
	}
	require.Equal(t, 50, domain.DefaultPageSize)
	require.Equal(t, 100, domain.MaxPageSize)
}
