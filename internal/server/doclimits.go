package server

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"
)

// Defaults of the document limits (Config.MaxSelections,
// Config.MaxSelectionSetSize).
const (
	// DefaultMaxSelections bounds the selections (fields, fragment spreads
	// and inline fragments, as written) of one document.
	DefaultMaxSelections = 1000
	// DefaultMaxSelectionSetSize bounds the selections of one selection set.
	DefaultMaxSelectionSetSize = 200
)

// documentLimits bounds the size of a document before gqlparser validates it.
// Validation is not linear in the document: OverlappingFieldsCanBeMerged
// compares every pair of fields that share a response name in one selection
// set, sibling fields of the same name merged, so that
// { viewer { slug slug … ×14000 } } — 70 KB, within the body and token limits
// — cost seconds of CPU. Counting the parsed document's selections is linear;
// at the defaults any document within them validates in tens of
// milliseconds (BenchmarkLargeQueryCPU in cmd/taskgraph measures it).
//
// It is a parameter mutator, the only hook gqlgen runs between receiving the
// query text and parsing and validating it, so it parses the text itself (a
// linear pass; the executor parses again). Documents in the query cache have
// passed validation already and are not parsed again. A document that does not
// parse is left for the executor, which reports the parse error.
type documentLimits struct {
	maxSelections int
	maxSetSize    int
	tokenLimit    int
	cache         graphql.Cache[*ast.QueryDocument] // the executor's query cache
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationParameterMutator
} = documentLimits{}

func (documentLimits) ExtensionName() string                   { return "DocumentLimits" }
func (documentLimits) Validate(graphql.ExecutableSchema) error { return nil }

func (l documentLimits) MutateOperationParameters(ctx context.Context, params *graphql.RawParams) *gqlerror.Error {
	if params.Query == "" {
		return nil
	}
	if l.cache != nil {
		if _, ok := l.cache.Get(ctx, params.Query); ok {
			return nil
		}
	}
	doc, err := parser.ParseQueryWithTokenLimit(&ast.Source{Input: params.Query}, l.tokenLimit)
	if err != nil || doc == nil {
		return nil
	}
	return l.check(doc)
}

// check counts the selections of every operation and fragment definition.
func (l documentLimits) check(doc *ast.QueryDocument) *gqlerror.Error {
	c := selectionCounter{limits: l}
	for _, op := range doc.Operations {
		if err := c.selectionSet(op.SelectionSet); err != nil {
			return err
		}
	}
	for _, f := range doc.Fragments {
		if err := c.selectionSet(f.SelectionSet); err != nil {
			return err
		}
	}
	return nil
}

type selectionCounter struct {
	limits documentLimits
	total  int
}

func (c *selectionCounter) selectionSet(set ast.SelectionSet) *gqlerror.Error {
	if len(set) == 0 {
		return nil
	}
	if len(set) > c.limits.maxSetSize {
		pos := selectionPosition(set[c.limits.maxSetSize])
		return positioned(limitError("a selection set holds %d selections, which exceeds the limit of %d per selection set",
			len(set), c.limits.maxSetSize), pos)
	}
	c.total += len(set)
	if c.total > c.limits.maxSelections {
		return positioned(limitError("the document holds more than %d selections (fields, fragment spreads and inline fragments), the limit per document",
			c.limits.maxSelections), selectionPosition(set[0]))
	}
	for _, sel := range set {
		var err *gqlerror.Error
		switch sel := sel.(type) {
		case *ast.Field:
			err = c.selectionSet(sel.SelectionSet)
		case *ast.InlineFragment:
			err = c.selectionSet(sel.SelectionSet)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func selectionPosition(sel ast.Selection) *ast.Position {
	if sel == nil {
		return nil
	}
	return sel.GetPosition()
}

func positioned(err *gqlerror.Error, pos *ast.Position) *gqlerror.Error {
	if pos != nil {
		err.Locations = []gqlerror.Location{{Line: pos.Line, Column: pos.Column}}
	}
	return err
}
