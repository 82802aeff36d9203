package server

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"

	"github.com/taskgraph/taskgraph/internal/auth"
	"github.com/taskgraph/taskgraph/internal/domain"
)

// File uploads: GraphQL multipart requests (the graphql-multipart-request-spec,
// gqlgen's transport.MultipartForm) carry uploaded files to mutations such as
// uploadTraceEvents. They bypass the buffered body limit, which would hold the
// whole file in memory, and get their own checks instead.

// DefaultMaxUploadBytes bounds the files of one multipart request unless
// Config.MaxUploadBytes says otherwise.
const DefaultMaxUploadBytes int64 = 100 << 20

// uploadMemory is the size below which gqlgen parses a multipart request in
// memory; larger requests are spooled to a temporary file (removed when the
// request ends), and the service streams the file from there.
const uploadMemory = 64 << 10

// preflightHeaders are the headers of which a multipart request must carry
// one. multipart/form-data is a "simple" content type: a browser sends it
// cross-site without a CORS preflight, so a hostile page could post a form to
// the API. No form can set these headers; a script that sets one triggers the
// preflight, which this server does not grant. Apollo clients send the first.
var preflightHeaders = []string{"Apollo-Require-Preflight", "X-Apollo-Operation-Name", "X-Taskgraph-Upload"}

func isMultipart(r *http.Request) bool {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && mt == "multipart/form-data"
}

// limitRequest applies the body limit to ordinary requests and the upload
// checks to multipart ones.
func (s *server) limitRequest(next http.Handler) http.Handler {
	buffered := s.limitBody(next)
	uploads := s.guardUpload(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if isMultipart(r) {
			uploads.ServeHTTP(w, r)
			return
		}
		buffered.ServeHTTP(w, r)
	})
}

// guardUpload lets a multipart request through when it carries a
// preflight-forcing header (CSRF protection), declares its length (so that
// gqlgen spools a large one to disk instead of reading an unbounded stream
// into memory), and is no longer than the upload limit plus the body limit
// (room for the operations and map parts). The body is read at most to its
// declared length; the service checks each file against the upload limit as
// it streams it.
//
// It runs after authentication and refuses an unauthenticated request before
// gqlgen spools its body: only callers with a valid token can make the server
// write to disk.
func (s *server) guardUpload(next http.Handler) http.Handler {
	limit := s.cfg.MaxUploadBytes + s.cfg.MaxBodyBytes
	next = s.requirePrincipal(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !hasPreflightHeader(r) {
			s.metrics.countError(codeBadRequest)
			writeGraphQLError(w, http.StatusBadRequest, codeBadRequest,
				"multipart requests must carry a non-empty Apollo-Require-Preflight (or X-Apollo-Operation-Name, or X-Taskgraph-Upload) header: "+
					"it protects against cross-site request forgery")
			return
		}
		if r.ContentLength < 0 {
			s.metrics.countError(codeBadRequest)
			writeGraphQLError(w, http.StatusLengthRequired, codeBadRequest, "multipart requests must declare their Content-Length")
			return
		}
		if r.ContentLength > limit {
			s.metrics.countError(string(domain.CodeLimitExceeded))
			writeGraphQLError(w, http.StatusRequestEntityTooLarge, string(domain.CodeLimitExceeded),
				fmt.Sprintf("upload too large (limit %d bytes per file)", s.cfg.MaxUploadBytes))
			return
		}
		s.extendBodyDeadline(w, r.ContentLength)
		if ok, err := s.boundLeadingParts(r); err != nil {
			LoggerFrom(r.Context()).DebugContext(r.Context(), "reading multipart request", "error", err)
			if isTimeout(err) {
				s.bodyTimeout(w)
				return
			}
			writeGraphQLError(w, http.StatusBadRequest, codeBadRequest, "could not read request body")
			return
		} else if !ok {
			s.metrics.countError(string(domain.CodeLimitExceeded))
			writeGraphQLError(w, http.StatusRequestEntityTooLarge, string(domain.CodeLimitExceeded),
				fmt.Sprintf("the operations and map parts of a multipart request are limited to %d bytes", s.cfg.MaxBodyBytes))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// boundLeadingParts checks that the parts before the first file (operations
// and map, which gqlgen reads into memory) fit in the body limit: it reads at
// most MaxBodyBytes of the body and looks for the start of the third part.
// The bytes read are put back in front of the body. A boundary cannot occur
// inside a part, so no content can fake it.
func (s *server) boundLeadingParts(r *http.Request) (bool, error) {
	_, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || params["boundary"] == "" {
		return true, nil // gqlgen refuses it
	}
	head := make([]byte, min(s.cfg.MaxBodyBytes, r.ContentLength))
	n, err := io.ReadFull(r.Body, head)
	if err != nil && err != io.ErrUnexpectedEOF {
		return false, err
	}
	head = head[:n]
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(head), r.Body), r.Body}
	if int64(n) < s.cfg.MaxBodyBytes {
		return true, nil // the whole body fit
	}
	return bytes.Count(head, []byte("--"+params["boundary"])) >= 3, nil
}

func hasPreflightHeader(r *http.Request) bool {
	for _, h := range preflightHeaders {
		if r.Header.Get(h) != "" {
			return true
		}
	}
	return false
}

// requirePrincipal answers 401 for a plain HTTP endpoint (not GraphQL) called
// without a valid token, 503 (UNAVAILABLE) when the database could not be
// reached to check it, and 500 when checking it failed otherwise.
func (s *server) requirePrincipal(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := authErrorFrom(r.Context()); err != nil {
			if domain.ErrorCode(err) == domain.CodeUnavailable {
				LoggerFrom(r.Context()).WarnContext(r.Context(), "authentication failed", slog.String("error", err.Error()))
				s.metrics.countError(string(domain.CodeUnavailable))
				writeGraphQLError(w, http.StatusServiceUnavailable, string(domain.CodeUnavailable), domain.UnavailableMessage)
				return
			}
			LoggerFrom(r.Context()).ErrorContext(r.Context(), "authentication failed", slog.String("error", err.Error()))
			s.metrics.countError(string(domain.CodeInternal))
			writeGraphQLError(w, http.StatusInternalServerError, string(domain.CodeInternal), internalMessage)
			return
		}
		if auth.FromContext(r.Context()) == nil {
			s.metrics.countError(string(domain.CodeUnauthenticated))
			w.Header().Set("WWW-Authenticate", wwwAuthenticate(r.Context()))
			writeGraphQLError(w, http.StatusUnauthorized, string(domain.CodeUnauthenticated), unauthenticatedMessage)
			return
		}
		next.ServeHTTP(w, r)
	})
}
