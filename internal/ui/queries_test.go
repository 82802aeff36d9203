package ui

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
)

// TestQueriesValidateAgainstTheSchema: every document the dashboard loads
// is a valid operation of the server's schema (schema.graphqls and graph/schema).
func TestQueriesValidateAgainstTheSchema(t *testing.T) {
	files, err := filepath.Glob("../../graph/schema/*.graphqls")
	files = append([]string{"../../schema.graphqls"}, files...)
	if err != nil || len(files) == 0 {
		t.Fatalf("schema files: %v %v", files, err)
	}
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
		t.Fatalf("schema: %v", gerr)
	}
	docs, _ := fs.Glob(Files(), "queries/*.graphql")
	if len(docs) == 0 {
		t.Fatal("no queries")
	}
	for _, d := range docs {
		name := strings.TrimSuffix(filepath.Base(d), ".graphql")
		q, err := Query(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, errs := gqlparser.LoadQuery(schema, q); errs != nil {
			t.Errorf("%s: %v", d, errs)
		}
	}
}

// TestRunFragmentsMatch: the run page reads its first events with
// run.graphql and the next ones with run_events.graphql; both must select the
// same fields, or the feed would describe an event it was not given.
func TestRunFragmentsMatch(t *testing.T) {
	fragments := func(name string) string {
		q, err := Query(name)
		if err != nil {
			t.Fatal(err)
		}
		i := strings.Index(q, "fragment ")
		if i < 0 {
			t.Fatalf("%s has no fragments", name)
		}
		return q[i:]
	}
	if a, b := fragments("run"), fragments("run_events"); a != b {
		t.Errorf("the fragments of run.graphql and run_events.graphql differ:\n%s\n----\n%s", a, b)
	}
}
