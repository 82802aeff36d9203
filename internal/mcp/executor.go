package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/taskgraph/taskgraph/internal/client"
)

// Executor runs one GraphQL operation document for the caller and decodes
// its data into out. GraphQL errors come back as client.Errors (their
// extensions carry the API's codes); anything else is a transport failure.
// Every tool is such documents and nothing else, so a tool can do exactly
// what the caller's token may do through the API.
type Executor interface {
	Execute(ctx context.Context, document string, variables map[string]any, out any) error
}

// authorizationKey carries the caller's Authorization header value in a
// tool call's context (the in-process executor sends it with the operation).
type authorizationKey struct{}

// WithAuthorization returns ctx carrying the caller's Authorization header
// value ("Bearer <token>").
func WithAuthorization(ctx context.Context, header string) context.Context {
	return context.WithValue(ctx, authorizationKey{}, header)
}

func authorizationFrom(ctx context.Context) string {
	s, _ := ctx.Value(authorizationKey{}).(string)
	return s
}

// maxResponseBytes bounds a response the in-process executor keeps; the
// server's own response limit (16 MiB by default) is below it.
const maxResponseBytes = 32 << 20

// InProcess executes operations on the server that serves the tools: each
// is a synthesized POST /graphql request, carrying the caller's
// Authorization header, handed to Handler — the server's own GraphQL
// endpoint with its authentication, limits, error codes and events.
type InProcess struct {
	Handler http.Handler
}

// Execute implements Executor.
func (e InProcess) Execute(ctx context.Context, document string, variables map[string]any, out any) error {
	body, err := json.Marshal(map[string]any{"query": document, "variables": variables})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "/graphql", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.RemoteAddr = "mcp"
	req.ContentLength = int64(len(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if a := authorizationFrom(ctx); a != "" {
		req.Header.Set("Authorization", a)
	}
	rec := &recorder{header: http.Header{}, status: http.StatusOK}
	e.Handler.ServeHTTP(rec, req)
	if rec.overflow {
		return fmt.Errorf("LIMIT_EXCEEDED: the response is larger than %d bytes", maxResponseBytes)
	}
	return decodeResult(rec.status, rec.body.Bytes(), out)
}

// decodeResult reads a GraphQL response body as internal/client does.
func decodeResult(status int, raw []byte, out any) error {
	var r client.Result
	if err := json.Unmarshal(raw, &r); err != nil {
		return fmt.Errorf("HTTP %d: %s", status, bytes.TrimSpace(raw))
	}
	if out != nil && len(r.Data) > 0 && string(r.Data) != "null" {
		if err := json.Unmarshal(r.Data, out); err != nil {
			return fmt.Errorf("decoding data: %w", err)
		}
	}
	if len(r.Errors) > 0 {
		return r.Errors
	}
	return nil
}

// recorder is the response writer of a synthesized request.
type recorder struct {
	header   http.Header
	status   int
	wrote    bool
	body     bytes.Buffer
	overflow bool
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(status int) {
	if !r.wrote {
		r.status, r.wrote = status, true
	}
}

func (r *recorder) Write(p []byte) (int, error) {
	r.wrote = true
	if r.body.Len()+len(p) > maxResponseBytes {
		r.overflow = true
		return len(p), nil
	}
	return r.body.Write(p)
}

// Remote executes operations over HTTP on a Taskgraph server with one token
// (`taskgraph mcp`).
type Remote struct {
	Client *client.Client
}

// Execute implements Executor.
func (e Remote) Execute(ctx context.Context, document string, variables map[string]any, out any) error {
	return e.Client.Do(ctx, document, variables, out)
}
