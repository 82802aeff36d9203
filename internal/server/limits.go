package server

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/taskgraph/taskgraph/internal/domain"
)

// limitBody answers 413 when the body is larger than MaxBodyBytes. A declared
// Content-Length is checked first; a chunked or lying body is read up to one
// byte past the limit and replaced by the buffered bytes.
func (s *server) limitBody(next http.Handler) http.Handler {
	limit := s.cfg.MaxBodyBytes
	tooLarge := func(w http.ResponseWriter) {
		s.metrics.countError(string(domain.CodeLimitExceeded))
		writeGraphQLError(w, http.StatusRequestEntityTooLarge, string(domain.CodeLimitExceeded),
			fmt.Sprintf("request body too large (limit %d bytes)", limit))
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > limit {
			tooLarge(w)
			return
		}
		if r.Body != nil && r.Body != http.NoBody {
			var b bytes.Buffer
			if r.ContentLength > 0 {
				b.Grow(int(r.ContentLength) + bytes.MinRead) // read at once, not by doubling
			}
			_, err := b.ReadFrom(io.LimitReader(r.Body, limit+1))
			buf := b.Bytes()
			_ = r.Body.Close()
			if err != nil {
				LoggerFrom(r.Context()).DebugContext(r.Context(), "reading request body", "error", err)
				if isTimeout(err) {
					s.bodyTimeout(w)
					return
				}
				writeGraphQLError(w, http.StatusBadRequest, codeBadRequest, "could not read request body")
				return
			}
			if int64(len(buf)) > limit {
				tooLarge(w)
				return
			}
			r.Body = newMemBody(buf)
			r.ContentLength = int64(len(buf))
		}
		next.ServeHTTP(w, r)
	})
}

// memBody is a request body in memory (limitBody read it): the checks take
// its bytes as they are, without reading them into another copy.
type memBody struct {
	*bytes.Reader
	b []byte
}

func newMemBody(b []byte) memBody { return memBody{bytes.NewReader(b), b} }

func (memBody) Close() error { return nil }

// bodyTimeout answers a request whose body did not arrive in time, and
// closes its connection.
func (s *server) bodyTimeout(w http.ResponseWriter) {
	s.metrics.countError(string(domain.CodeLimitExceeded))
	w.Header().Set("Connection", "close")
	writeGraphQLError(w, http.StatusRequestTimeout, string(domain.CodeLimitExceeded),
		fmt.Sprintf("request body not received within %s", s.cfg.BodyReadTimeout))
}

// queryLimits rejects operations nested deeper than maxDepth, and operations
// whose fragments expand to more than maxFields field selections. The second
// check runs before gqlgen's complexity walk, which follows every fragment
// spread without memoisation: a few hundred bytes of fragments spreading each
// other twice would otherwise keep it busy for minutes. Every field costs at
// least 1 in the complexity calculation, so maxFields is the complexity limit.
type queryLimits struct {
	maxDepth  int
	maxFields int
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = queryLimits{}

func (queryLimits) ExtensionName() string                   { return "QueryLimits" }
func (queryLimits) Validate(graphql.ExecutableSchema) error { return nil }

func (l queryLimits) MutateOperationContext(_ context.Context, opCtx *graphql.OperationContext) *gqlerror.Error {
	if opCtx.Operation == nil {
		return nil
	}
	sh := measureOperation(opCtx.Doc, opCtx.Operation)
	if sh.depth > l.maxDepth {
		return limitError("operation has depth %d, which exceeds the limit of %d", sh.depth, l.maxDepth)
	}
	if l.maxFields > 0 && sh.fields > l.maxFields {
		return limitError("operation selects %d fields once its fragments are expanded, which exceeds the complexity limit of %d",
			sh.fields, l.maxFields)
	}
	return nil
}

func limitError(format string, args ...any) *gqlerror.Error {
	err := gqlerror.Errorf(format, args...)
	err.Extensions = map[string]any{"code": string(domain.CodeLimitExceeded)}
	return err
}

// shape is what the limits look at: the deepest field nesting (a top-level
// field is depth 1) and the number of field selections with fragments expanded.
type shape struct {
	depth  int
	fields int
}

// measureOperation measures op, following fragment spreads and inline
// fragments. Fragments are measured once (a fragment's shape does not depend
// on where it is spread); a fragment cycle, which validation rejects anyway,
// counts as empty instead of looping.
func measureOperation(doc *ast.QueryDocument, op *ast.OperationDefinition) shape {
	m := &measurer{
		doc:    doc,
		memo:   map[string]shape{},
		active: map[string]bool{},
	}
	return m.selectionSet(op.SelectionSet)
}

type measurer struct {
	doc    *ast.QueryDocument
	memo   map[string]shape
	active map[string]bool
}

func (m *measurer) selectionSet(set ast.SelectionSet) shape {
	var out shape
	for _, sel := range set {
		var sh shape
		switch sel := sel.(type) {
		case *ast.Field:
			child := m.selectionSet(sel.SelectionSet)
			sh = shape{depth: child.depth + 1, fields: saturatingAdd(child.fields, 1)}
			// gqlgen's complexity walk skips __schema; count it as nothing so
			// that the field count stays a lower bound of the complexity.
			if sel.Definition != nil && sel.Definition.Type != nil && sel.Definition.Type.Name() == "__Schema" {
				sh.fields = 0
			}
		case *ast.InlineFragment:
			sh = m.selectionSet(sel.SelectionSet)
		case *ast.FragmentSpread:
			sh = m.fragment(sel)
		}
		out.depth = max(out.depth, sh.depth)
		out.fields = saturatingAdd(out.fields, sh.fields)
	}
	return out
}

func (m *measurer) fragment(spread *ast.FragmentSpread) shape {
	if sh, ok := m.memo[spread.Name]; ok {
		return sh
	}
	if m.active[spread.Name] {
		return shape{}
	}
	def := spread.Definition
	if def == nil && m.doc != nil {
		def = m.doc.Fragments.ForName(spread.Name)
	}
	if def == nil {
		return shape{}
	}
	m.active[spread.Name] = true
	sh := m.selectionSet(def.SelectionSet)
	delete(m.active, spread.Name)
	m.memo[spread.Name] = sh
	return sh
}

const maxInt = int(^uint(0) >> 1)

func saturatingAdd(a, b int) int {
	if a > maxInt-b {
		return maxInt
	}
	return a + b
}

func saturatingMul(a, b int) int {
	if a == 0 || b == 0 {
		return 0
	}
	if a > maxInt/b {
		return maxInt
	}
	return a * b
}
