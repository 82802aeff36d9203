package mcp

import (
	"github.com/google/jsonschema-go/jsonschema"
)

// A shaper adjusts a tool's inferred input schema: enums, bounds and the
// rules the Go types cannot say. The SDK validates every call's arguments
// against the schema before the tool runs, so a bound here is enforced.
type shaper func(*jsonschema.Schema)

// prop returns the schema of a top-level property (or of the items of an
// array property), panicking on a name the input type does not have: a
// shaper naming a missing argument is a programming error.
func prop(s *jsonschema.Schema, name string) *jsonschema.Schema {
	p, ok := s.Properties[name]
	if !ok {
		panic("mcp: schema has no property " + name)
	}
	return p
}

// leaf is p itself, or its items when p is an array.
func leaf(p *jsonschema.Schema) *jsonschema.Schema {
	if p.Items != nil {
		return p.Items
	}
	return p
}

// singleTypes writes every optional property with one type: the inferred
// ["null", T] of a Go slice or pointer becomes T (leave the argument out
// instead of sending null), which every client's schema dialect reads
// (Gemini's function declarations take one type).
func singleTypes(s *jsonschema.Schema) {
	if len(s.Types) == 2 && s.Types[0] == "null" {
		s.Type, s.Types = s.Types[1], nil
	}
	for _, p := range s.Properties {
		singleTypes(p)
	}
	if s.Items != nil {
		singleTypes(s.Items)
	}
}

// enum limits a string property (or the strings of an array) to values.
func enum(name string, values ...string) shaper {
	return func(s *jsonschema.Schema) {
		l := leaf(prop(s, name))
		l.Enum = make([]any, len(values))
		for i, v := range values {
			l.Enum[i] = v
		}
	}
}

// maxLen bounds the length of string properties (or of an array's strings).
func maxLen(n int, names ...string) shaper {
	return func(s *jsonschema.Schema) {
		for _, name := range names {
			leaf(prop(s, name)).MaxLength = ptr(n)
		}
	}
}

// maxItems bounds the length of array properties.
func maxItems(n int, names ...string) shaper {
	return func(s *jsonschema.Schema) {
		for _, name := range names {
			prop(s, name).MaxItems = ptr(n)
		}
	}
}

// between bounds a number property.
func between(name string, lo, hi float64) shaper {
	return func(s *jsonschema.Schema) {
		p := prop(s, name)
		p.Minimum, p.Maximum = ptr(lo), ptr(hi)
	}
}

// nested shapes the item schema of an array of objects.
func nested(name string, shapers ...shaper) shaper {
	return func(s *jsonschema.Schema) {
		items := prop(s, name).Items
		for _, sh := range shapers {
			sh(items)
		}
	}
}

// The API's enums, as the tools' schemas list them.
var (
	taskStatuses     = []string{"DRAFT", "EVALUATING", "PENDING", "BLOCKED", "IN_PROGRESS", "VALIDATING", "COMPLETED", "FAILED"}
	taskCategories   = []string{"FEATURE", "BUG", "TASK", "REFACTOR", "TEST", "DOCS", "RESEARCH", "INFRA"}
	priorities       = []string{"P1", "P2", "P3", "P4"}
	riskLevels       = []string{"LOW", "MEDIUM", "HIGH"}
	efforts          = []string{"TRIVIAL", "SMALL", "MEDIUM", "LARGE", "EPIC"}
	fileOperations   = []string{"CREATE", "UPDATE", "DELETE", "READ"}
	relationships    = []string{"DEPENDS_ON", "BLOCKS", "RELATED_TO", "DUPLICATE_OF", "SUBTASK_OF", "SUPERSEDES", "IMPLEMENTS", "CONFLICTS_WITH", "ENABLES", "INSPIRED_BY", "TESTS"}
	testLevels       = []string{"CODEBASE", "API", "UI"}
	testStatuses     = []string{"PASSED", "FAILED", "SKIPPED", "ERROR"}
	questionPriority = []string{"CRITICAL", "HIGH", "MEDIUM", "LOW"}
)

// Bounds of the tools' own arguments; the API's limits apply as well.
const (
	maxID        = 200 // an id, display id, slug or run id
	maxQuery     = 500 // a search text
	maxPage      = 100 // first
	maxHostname  = 255
	maxDirectory = 4096
)
