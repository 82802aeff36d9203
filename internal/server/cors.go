package server

import (
	"net/http"

	"github.com/rs/cors"
)

// corsMaxAge is how long (seconds) a browser may cache a preflight answer.
const corsMaxAge = 600

// corsAllowedHeaders are the request headers a page on an allowed origin may
// send: the GraphQL-over-HTTP ones, and those Apollo Client, Relay and
// graphql-request add (the first two are also the upload guard's headers,
// which is what makes a multipart upload from another origin need a
// preflight, see upload.go).
var corsAllowedHeaders = []string{
	"Authorization", "Content-Type", "Accept",
	"Apollo-Require-Preflight", "X-Apollo-Operation-Name", "X-Taskgraph-Upload",
	"Apollographql-Client-Name", "Apollographql-Client-Version",
	"X-Request-Id", "Traceparent", "Tracestate",
}

// withCORS answers CORS preflights (OPTIONS) from the origins of
// --allowed-origins with 204 and adds Access-Control-Allow-Origin to their
// other requests; requests from any other origin get no CORS headers (the
// browser then keeps the response from the page). Credentials (cookies) are
// not allowed: callers authenticate with a bearer token. Without allowed
// origins the handler is next itself.
func (s *server) withCORS(next http.Handler) http.Handler {
	if len(s.cfg.Websocket.AllowedOrigins) == 0 {
		return next
	}
	c := cors.New(cors.Options{
		AllowedOrigins:       s.cfg.Websocket.AllowedOrigins,
		AllowedMethods:       []string{http.MethodGet, http.MethodPost, http.MethodOptions},
		AllowedHeaders:       corsAllowedHeaders,
		ExposedHeaders:       []string{"WWW-Authenticate", "X-Request-Id"},
		MaxAge:               corsMaxAge,
		OptionsSuccessStatus: http.StatusNoContent,
	})
	return c.Handler(next)
}
