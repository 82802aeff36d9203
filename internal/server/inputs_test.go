package server

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestInputChecks: Ints outside 32 bits and strings with NUL, in literals,
// variables, input objects, lists and fragments, answer BAD_USER_INPUT naming
// the argument's path; values at the edges run.
func TestInputChecks(t *testing.T) {
	b := setup(t)
	for _, tc := range []struct {
		name  string
		req   gqlRequest
		field string // "": no error
	}{
		{"literal above 2^31-1", gqlRequest{Query: `{ tasks(first: 2147483648) { totalCount } }`}, "first"},
		{"literal below -2^31", gqlRequest{Query: `{ tasks(last: -2147483649) { totalCount } }`}, "last"},
		// (Larger ones fail validation; the complexity limit would refuse
		// first: 2147483647.)
		{"literal at the edge", gqlRequest{Query: `{ tasks(last: -2147483648) { totalCount } }`}, ""},
		{"variable above 2^31-1", gqlRequest{Query: `query($n: Int) { tasks(first: $n) { totalCount } }`, Variables: map[string]any{"n": 1 << 31}}, "first"},
		{"variable at the edge", gqlRequest{Query: `query($n: Int) { tasks(last: $n) { totalCount } }`, Variables: map[string]any{"n": -1 << 31}}, ""},
		{"in a fragment", gqlRequest{Query: `{ ...F } fragment F on Query { tasks(first: 3000000000) { totalCount } }`}, "first"},
		{"NUL in a literal", gqlRequest{Query: `{ task(id: "a\u0000b") { id } }`}, "id"},
		{"NUL in an input object variable", gqlRequest{Query: `query($f: TaskFilter) { tasks(filter: $f) { totalCount } }`,
			Variables: map[string]any{"f": map[string]any{"name": "a\x00b"}}}, "filter.name"},
		{"NUL in an input object literal", gqlRequest{Query: `{ tasks(filter: {name: "x\u0000"}) { totalCount } }`}, "filter.name"},
		{"NUL in a string argument", gqlRequest{Query: `query($c: String!) { fail(code: $c) }`, Variables: map[string]any{"c": "\x00"}}, "code"},
		{"plain strings", gqlRequest{Query: `query($f: TaskFilter) { tasks(filter: $f) { totalCount } }`,
			Variables: map[string]any{"f": map[string]any{"name": "ünïcode \u2028 and \t tabs", "priority": []string{"P1"}}}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, out := b.post(t, tokenGood, tc.req)
			if tc.field == "" {
				require.Empty(t, out.Errors)
				require.Equal(t, 200, res.StatusCode)
				return
			}
			require.Len(t, out.Errors, 1, "%+v", out.Errors)
			require.Equal(t, []string{"BAD_USER_INPUT"}, out.codes())
			require.Equal(t, tc.field, out.Errors[0].Extensions["field"], out.Errors[0].Message)
			require.True(t, len(out.Data) == 0 || string(out.Data) == "null", "nothing ran")
		})
	}
}

func TestIsInt32(t *testing.T) {
	for _, tc := range []struct {
		v  any
		ok bool
	}{
		{int64(2147483647), true}, {int64(2147483648), false}, {int64(-2147483648), true}, {int64(-2147483649), false},
		{2147483647, true}, {1 << 40, false}, {float64(2147483647), true}, {float64(2147483648), false},
		{json.Number("2147483647"), true}, {json.Number("2147483648"), false}, {json.Number("1e30"), false},
		{"-2147483648", true}, {"99999999999999999999", false},
		{json.Number("x"), true}, {"x", true}, {true, true}, // not numbers: gqlgen reports them
	} {
		require.Equal(t, tc.ok, isInt32(tc.v), "%T %v", tc.v, tc.v)
	}
}
