package server

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/stretchr/testify/require"
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

// fastBodies are bodies fastParams must decode itself, and as decodeParams
// does.
var fastBodies = []string{
	`{"query": "{ a }"}`,
	` {"query":"{ a }","variables":{}} `,
	`{"query": "", "operationName": null, "variables": null, "extensions": null}`,
	`{"query": "query Q($v: [Float!]) { a }", "operationName": "Q", "variables": {"v": [1, 2.5, -3e-2, 0, -0.0, 1E+2, 12e-7], "n": {"m": [true, false, null, "s", [], {}]}}, "extensions": {"x": 1}}`,
	`{"query": "{ a }"} {"query": 1}`,
	`{"query": "{ b }", "query": "{ a }", "other": [1, {"query": 2}]}`,
	`{"operationName": "Q", "operationName": null, "query": "{ a }"}`,
	"{\"query\": \"query {\\n  a(s: \\\"x\\\\y\\/z\\\")\\t\\r\\b\\f\\n}\"}",
	`{"query": "{ a }", "variables": {"s": "héllo, 世界", "k\"ey": "v", "": ""}}`,
	`{"variables": {"in": {"v": [1e999, -1e-999]}}, "query": "{ a }"}`,
	`{"query": "{ a }", "variables": {"a": 1, "a": 2}}`,
}

// TestFastParams: the usual body is decoded by fastParams, as decodeParams
// decodes it; whatever fastParams leaves (an escape it does not read,
// invalid UTF-8, deep nesting, bad syntax, a parameter of the wrong type),
// decodeParams and checkPostParamTypes answer as before.
func TestFastParams(t *testing.T) {
	deep := `{"query": "{ a }", "variables": {"v": ` + strings.Repeat("[", maxFastDepth+1) + strings.Repeat("]", maxFastDepth+1) + `}}`
	left := []string{
		`{"query": "\u0041"}`,   // \u: encoding/json's
		"{\"query\": \"\xff\"}", // invalid UTF-8: encoding/json replaces it
		"{\"query\": \"a\tb\"}", // a raw control character: a syntax error
		deep,                    // deeper than maxFastDepth
		`{"query": "{ a }", "variables": {"n": 01}}`, // bad numbers
		`{"query": "{ a }", "variables": {"n": -}}`,
		`{"query": "{ a }", "variables": {"n": 1.}}`,
		`{"query": "{ a }", "variables": {"n": 1e}}`,
		`{"query": "{ a }", "variables": {"n": .5}}`,
		`{"query": "{ a }", "variables": {"n": tru}}`,
		`{"query": "{ a }",}`,
		`{"query": "{ a }" "variables": {}}`,
		`{"query": "{ a }", "variables": [1,]}`,
		`{"query": "{ a }", "variables": {"a": [1 2]}}`,
		`{"query": "{ a }"`,
		`{"query": "{ a }`,
		`{"query": 1}`,
		`{"query": null}`,
		`{"query": "{ a }", "query": null}`,
		`{"QUERY": "{ a }"}`,
		`{"query": "{ a }", "variables": "{}"}`,
		`{"query": "{ a }", "operationName": 1}`,
		`[{"query": "{ a }"}]`,
		``,
	}
	for _, body := range fastBodies {
		got, ok := fastParams([]byte(body))
		if !ok {
			t.Errorf("%s: left to decodeParams", body)
			continue
		}
		if want := decodeParams([]byte(body)); want == nil || !reflect.DeepEqual(*got, *want) {
			t.Errorf("%s: decoded %#v, decodeParams %#v", body, *got, want)
		}
	}
	for _, body := range left {
		if got, ok := fastParams([]byte(body)); ok {
			t.Errorf("%s: decoded %#v, want it left to decodeParams", body, *got)
		}
	}
	// And the body of a create with a 768-value embedding.
	vec := make([]float64, 768)
	for i := range vec {
		vec[i] = float64(i)/1000 - 0.3
	}
	body, err := json.Marshal(map[string]any{"query": "mutation($in: CreateTaskInput!) { createTask(input: $in) { task { id } } }",
		"variables": map[string]any{"in": map[string]any{"projectId": "p", "title": "t", "embedding": vec}}})
	require.NoError(t, err)
	got, ok := fastParams(body)
	require.True(t, ok)
	require.Equal(t, decodeParams(body), got)
}

// FuzzFastParams: whatever fastParams decodes, decodeParams decodes the same.
func FuzzFastParams(f *testing.F) {
	for _, body := range fastBodies {
		f.Add([]byte(body))
	}
	f.Add([]byte(`{"query": "{ a }", "variables": {"n": 01}}`))
	f.Add([]byte(`{"query": "\u0041", "variables": {"a": "\ud800"}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		got, ok := fastParams(body)
		if !ok {
			return
		}
		if want := decodeParams(body); want == nil || !reflect.DeepEqual(*got, *want) {
			t.Errorf("%q: decoded %#v, decodeParams %#v", body, *got, want)
		}
	})
}
