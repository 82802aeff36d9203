package server

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/99designs/gqlgen/graphql"
)

// TestDecodeParams: a body decodeParams decodes gives the parameters
// gqlgen's POST transport decodes from it (numbers as json.Number); a body it
// leaves to checkPostParamTypes is one whose parameters that check looks at
// one by one.
func TestDecodeParams(t *testing.T) {
	decoded := []string{
		`{"query": "{ a }"}`,
		`{"query": "", "operationName": null, "variables": null, "extensions": null}`,
		`{"query": "query Q($v: [Float!]) { a }", "operationName": "Q", "variables": {"v": [1, 2.5, -3e-2], "n": {"m": [true, null, "s"]}}, "extensions": {"x": 1}}`,
		`{"query": "{ a }"} {"query": 1}`,                                  // gqlgen's POST decodes the first value too
		`{"query": "{ b }", "query": "{ a }", "other": [1, {"query": 2}]}`, // the last of a key; other keys skipped
	}
	for _, body := range decoded {
		got := decodeParams([]byte(body))
		if got == nil {
			t.Errorf("%s: not decoded", body)
			continue
		}
		var want graphql.RawParams
		dec := json.NewDecoder(bytes.NewReader([]byte(body)))
		dec.UseNumber()
		if err := dec.Decode(&want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(*got, want) {
			t.Errorf("%s: decoded %+v, want %+v", body, *got, want)
		}
	}
	left := map[string]string{
		`{"query": 1}`:                                    "the query parameter must be a string",
		`{"query": null}`:                                 "the query parameter is missing",
		`{"query": "{ a }", "query": null}`:               "the query parameter is missing",
		`{"QUERY": "{ a }"}`:                              "the query parameter is missing",
		`{"QUERY": "{ a }", "extensions": {"query": 1}}`:  "the query parameter is missing",
		`{"Query": "{ a }", "variables": {"query": "x"}}`: "the query parameter is missing",
		`{"query": "{ a }", "variables": "{}"}`:           "the variables parameter must be an object (or null)",
		`{"query": "{ a }", "variables": []}`:             "the variables parameter must be an object (or null)",
		`{"query": "{ a }", "operationName": 1}`:          "the operationName parameter must be a string (or null)",
		`{"query": "{ a }", "extensions": "x"}`:           "the extensions parameter must be an object (or null)",
		`[{"query": "{ a }"}]`:                            "the request body must be a JSON object",
		`{"extensions": {"persistedQuery": {"x": "y"}}}`:  "",
	}
	for body, msg := range left {
		if got := decodeParams([]byte(body)); got != nil {
			t.Errorf("%s: decoded %+v, want it left to checkPostParamTypes", body, *got)
		}
		if got := checkPostParamTypes([]byte(body)); got != msg {
			t.Errorf("%s: checkPostParamTypes says %q, want %q", body, got, msg)
		}
	}
}
