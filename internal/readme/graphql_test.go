package readme

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
)

// TestREADMEGraphQLValidates: every GraphQL document of the README parses and
// validates against the schema (a block may hold several operations, each
// validated on its own), so that a renamed field or argument cannot leave an
// example behind.
func TestREADMEGraphQLValidates(t *testing.T) {
	files, err := filepath.Glob("../../graph/schema/*.graphqls")
	if err != nil || len(files) == 0 {
		t.Fatalf("no schema files: %v", err)
	}
	files = append(files, "../../schema.graphqls")
	var sources []*ast.Source
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sources = append(sources, &ast.Source{Name: f, Input: string(b)})
	}
	schema, gerr := gqlparser.LoadSchema(sources...)
	if gerr != nil {
		t.Fatalf("loading the schema: %v", gerr)
	}
	md, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, b := range blocks(string(md)) {
		if b.lang != "graphql" {
			continue
		}
		for _, op := range operations(b.text) {
			n++
			if _, errs := gqlparser.LoadQuery(schema, op); errs != nil {
				t.Errorf("README.md:%d: %v\n%s", b.line, errs, op)
			}
		}
	}
	if n < 5 {
		t.Fatalf("only %d GraphQL operations found in README.md", n)
	}
}

// opStart is a line that starts an operation at the left margin.
var opStart = regexp.MustCompile(`^(query|mutation|subscription)\b|^\{`)

// operations splits a block into its operations: a new one starts at each
// line that begins with query, mutation, subscription or {.
func operations(text string) []string {
	var ops []string
	var cur []string
	for _, l := range strings.Split(text, "\n") {
		if opStart.MatchString(l) && len(cur) > 0 {
			ops = append(ops, strings.Join(cur, "\n"))
			cur = nil
		}
		cur = append(cur, l)
	}
	if len(cur) > 0 {
		ops = append(ops, strings.Join(cur, "\n"))
	}
	return ops
}
