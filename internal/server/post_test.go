package server

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// TestWriteResponse: what writeResponse writes is what encoding/json writes
// of the same response, byte for byte (for data without characters that
// encoding/json escapes for HTML).
func TestWriteResponse(t *testing.T) {
	yes := true
	for name, resp := range map[string]*graphql.Response{
		"data":            {Data: json.RawMessage(`{"a":[1,2,{"b":"c"}]}`)},
		"null data":       {},
		"errors and data": {Data: json.RawMessage(`{"a":null}`), Errors: gqlerror.List{{Message: "x", Path: ast.Path{ast.PathName("a")}, Extensions: map[string]any{"code": "NOT_FOUND"}}}},
		"errors only":     {Errors: gqlerror.List{{Message: "bad"}}},
		"extensions":      {Data: json.RawMessage(`{}`), Extensions: map[string]any{"cost": 3}},
		"incremental":     {Data: json.RawMessage(`{}`), Label: "l", HasNext: &yes},
		"nil":             nil,
	} {
		t.Run(name, func(t *testing.T) {
			want, err := json.Marshal(resp)
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			writeResponse(&got, resp)
			if got.String() != string(want) {
				t.Errorf("wrote %s\n want %s", got.String(), want)
			}
		})
	}
}
