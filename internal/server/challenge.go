package server

import (
	"bufio"
	"context"
	"errors"
	"net"
	"net/http"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"

	"github.com/taskgraph/taskgraph/internal/auth"
)

// HTTP authentication failures are answered 401 with a WWW-Authenticate
// challenge (RFC 6750) and the GraphQL error body (UNAUTHENTICATED), under
// either response media type, so that HTTP-level tooling (a client's
// token-refresh link, a gateway, monitoring) sees them.

type challengeKey struct{}

// challenge records, for one HTTP request, whether it carried a bearer
// token that did not authenticate and whether an operation was refused for
// want of a Principal.
type challenge struct {
	badToken bool
	refused  bool
}

func challengeFrom(ctx context.Context) *challenge {
	c, _ := ctx.Value(challengeKey{}).(*challenge)
	return c
}

// markRefused notes that ctx's request was refused UNAUTHENTICATED.
func markRefused(ctx context.Context) {
	if c := challengeFrom(ctx); c != nil {
		c.refused = true
	}
}

// wwwAuthenticate is the challenge of a 401: with error="invalid_token"
// when the request carried a token that does not authenticate (unknown,
// revoked, expired, wrong audience).
func wwwAuthenticate(ctx context.Context) string {
	if c := challengeFrom(ctx); c != nil && c.badToken {
		return `Bearer realm="taskgraph", error="invalid_token", error_description="the bearer token is unknown, revoked or expired"`
	}
	return `Bearer realm="taskgraph"`
}

// challengeWriter turns the response of a refused request into 401 with the
// challenge; the body (the GraphQL error) is left as written.
type challengeWriter struct {
	http.ResponseWriter
	ctx         context.Context
	wroteHeader bool
}

func (c *challengeWriter) WriteHeader(status int) {
	if !c.wroteHeader {
		c.wroteHeader = true
		if ch := challengeFrom(c.ctx); ch != nil && ch.refused && status < 500 {
			c.Header().Set("WWW-Authenticate", wwwAuthenticate(c.ctx))
			status = http.StatusUnauthorized
		}
	}
	c.ResponseWriter.WriteHeader(status)
}

func (c *challengeWriter) Write(p []byte) (int, error) {
	if !c.wroteHeader {
		c.WriteHeader(http.StatusOK)
	}
	return c.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController reach the underlying writer (flushes,
// the websocket's hijack).
func (c *challengeWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// Hijack passes through for the websocket transport.
func (c *challengeWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	if h, ok := c.ResponseWriter.(http.Hijacker); ok {
		return h.Hijack()
	}
	return nil, nil, errors.New("server: the response writer cannot be hijacked")
}

// Flush passes through (streamed responses).
func (c *challengeWriter) Flush() {
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// anonymousTypenameMaxBytes bounds the documents an anonymous caller may
// have parsed: a query of __typename alone is a few dozen bytes.
const anonymousTypenameMaxBytes = 512

// typenameOnlyQuery reports whether query is a small document whose every
// operation is a query selecting only __typename (no fragments, no
// arguments): what GraphQL-over-HTTP conformance checks and liveness probes
// send, which an anonymous caller may run. It reveals nothing but the
// root type's name.
func typenameOnlyQuery(query string) bool {
	if query == "" || len(query) > anonymousTypenameMaxBytes {
		return false
	}
	doc, err := parser.ParseQuery(&ast.Source{Input: query})
	if err != nil || len(doc.Operations) == 0 || len(doc.Fragments) > 0 {
		return false
	}
	for _, op := range doc.Operations {
		if !typenameOnlyOperation(op) {
			return false
		}
	}
	return true
}

func typenameOnlyOperation(op *ast.OperationDefinition) bool {
	if op == nil || op.Operation != ast.Query || len(op.SelectionSet) == 0 || len(op.Directives) > 0 {
		return false
	}
	for _, sel := range op.SelectionSet {
		f, ok := sel.(*ast.Field)
		if !ok || f.Name != "__typename" || len(f.Arguments) > 0 || len(f.Directives) > 0 || len(f.SelectionSet) > 0 {
			return false
		}
	}
	return true
}

// anonymousAllowed reports whether an operation without a Principal may run
// (before parsing: from its raw query text; after: from the parsed
// operation). Only over HTTP requests and websockets without an
// authentication error.
func anonymousAllowedRaw(ctx context.Context, p *graphql.RawParams) bool {
	return authErrorFrom(ctx) == nil && auth.FromContext(ctx) == nil && p != nil && typenameOnlyQuery(strings.TrimSpace(p.Query))
}

func anonymousAllowedOp(ctx context.Context) bool {
	if authErrorFrom(ctx) != nil || auth.FromContext(ctx) != nil || !graphql.HasOperationContext(ctx) {
		return false
	}
	return typenameOnlyOperation(graphql.GetOperationContext(ctx).Operation)
}
