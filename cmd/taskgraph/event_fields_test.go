package main

import (
	"testing"

	"github.com/taskgraph/taskgraph/graph"
)

// contractNames are event fields whose names the API contract fixes on
// several kinds with different types (TaskStatusChanged { from to },
// TodoItemChanged { from to }, SuggestionResolved { status },
// ReasoningFinished { status }, QueueItemFailed { error: String! } and
// ReActStepRecorded { error: String }, …): a selection over such kinds
// aliases them, as taskgraph watch does.
var contractNames = map[string]bool{"status": true, "from": true, "to": true, "error": true}

// TestEventFieldNamesMerge: a field name means one type in every type that
// implements ExecutionEvent, so that one selection can span every kind
// without aliases (GraphQL refuses to merge same-named fields of different
// types, even in fragments on different types) — but for the names the
// contract fixes.
func TestEventFieldNamesMerge(t *testing.T) {
	schema := graph.NewExecutableSchema(graph.Config{}).Schema()
	seen := map[string]string{} // field name -> "Type: type"
	for _, def := range schema.GetPossibleTypes(schema.Types["ExecutionEvent"]) {
		for _, f := range def.Fields {
			if contractNames[f.Name] {
				continue
			}
			if prev, ok := seen[f.Name]; ok {
				if typeOf(prev) != f.Type.String() {
					t.Errorf("field %s is %s in %s but %s", f.Name, f.Type.String(), def.Name, prev)
				}
				continue
			}
			seen[f.Name] = def.Name + ": " + f.Type.String()
		}
	}
}

func typeOf(entry string) string {
	for i := range entry {
		if entry[i] == ':' {
			return entry[i+2:]
		}
	}
	return entry
}
