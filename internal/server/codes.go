package server

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strconv"

	"github.com/taskgraph/taskgraph/internal/domain"
)

// withErrorCodes makes sure every error of a 4xx GraphQL response carries an
// extensions.code. gqlgen's transports answer some malformed requests
// themselves, without the error presenter: an unsupported content type, a
// mutation sent over GET, undecodable GET variables. Those errors are the
// client's request at fault, so they get BAD_USER_INPUT.
//
// It also applies GraphQL over HTTP to gqlgen's request errors (see
// params.go): a document that fails to parse or validate — gqlgen's 422 —
// answers 200 when the response is application/json, and a request error
// (4xx, or such a 200) carries no "data" entry. Other responses pass through
// untouched and unbuffered.
func withErrorCodes(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cw := &codeWriter{ResponseWriter: w}
		next.ServeHTTP(cw, r)
		cw.finish()
	})
}

// codeWriter holds back the body of a 4xx response to add missing codes.
type codeWriter struct {
	http.ResponseWriter
	status int
	held   *bytes.Buffer // the body of a 4xx response, written by finish
}

func (c *codeWriter) WriteHeader(status int) {
	if c.status != 0 {
		return
	}
	c.status = status
	if status == http.StatusUnprocessableEntity && !isGraphQLResponse(c.Header().Get("Content-Type")) {
		// gqlgen's answer to a parse or validation failure; over
		// application/json that is 200 with the errors.
		c.status = http.StatusOK
		c.held = &bytes.Buffer{}
		return
	}
	if status >= 400 && status < 500 {
		c.held = &bytes.Buffer{}
		return
	}
	c.ResponseWriter.WriteHeader(status)
}

func (c *codeWriter) Write(p []byte) (int, error) {
	if c.status == 0 {
		c.WriteHeader(http.StatusOK)
	}
	if c.held != nil {
		return c.held.Write(p)
	}
	return c.ResponseWriter.Write(p)
}

// Flush passes through for streamed (non-4xx) responses.
func (c *codeWriter) Flush() {
	if c.held != nil {
		return
	}
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Hijack passes through for the websocket transport.
func (c *codeWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	if h, ok := c.ResponseWriter.(http.Hijacker); ok {
		return h.Hijack()
	}
	return nil, nil, errors.New("server: the response writer cannot be hijacked")
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (c *codeWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// finish writes a held body (a request error), with codes added where they
// were missing and without a null "data" entry.
func (c *codeWriter) finish() {
	if c.held == nil {
		return
	}
	body := c.held.Bytes()
	var resp map[string]json.RawMessage
	var errs []map[string]any
	if json.Unmarshal(body, &resp) == nil && json.Unmarshal(resp["errors"], &errs) == nil && len(errs) > 0 {
		changed := false
		if data, ok := resp["data"]; ok && string(bytes.TrimSpace(data)) == "null" {
			delete(resp, "data")
			changed = true
		}
		for _, e := range errs {
			ext, _ := e["extensions"].(map[string]any)
			if _, ok := ext["code"]; ok {
				continue
			}
			if ext == nil {
				ext = map[string]any{}
			}
			ext["code"] = string(domain.CodeBadUserInput)
			e["extensions"] = ext
			changed = true
		}
		if changed {
			if b, err := json.Marshal(errs); err == nil {
				resp["errors"] = b
				if out, err := json.Marshal(resp); err == nil {
					body = out
				}
			}
		}
	}
	if c.Header().Get("Content-Length") != "" {
		c.Header().Set("Content-Length", strconv.Itoa(len(body)))
	}
	c.ResponseWriter.WriteHeader(c.status)
	_, _ = c.ResponseWriter.Write(body)
}
