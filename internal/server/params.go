package server

import (
	"bytes"
	"encoding/json"
	"mime"
	"net/http"
	"strings"

	"github.com/gorilla/websocket"
)

// GraphQL over HTTP (https://graphql.github.io/graphql-over-http/draft/):
// what gqlgen's transports leave to the server.
//
//   - Request parameters of the wrong type — a query that is missing or not a
//     string, variables or extensions that are not objects, an operationName
//     that is not a string — are 400, whatever the Accept header, with an
//     error naming the parameter (checkParams).
//   - A document that fails to parse or validate answers 200 to a client that
//     accepts application/json (gqlgen answers 422), and 400 to one that
//     accepts application/graphql-response+json (codeWriter).
//   - A request error — nothing was executed — carries no data entry, not even
//     "data": null (codeWriter).

const (
	mediaJSON            = "application/json"
	mediaGraphQLResponse = "application/graphql-response+json"
)

// checkParams answers 400 for a GraphQL request whose parameters are of the
// wrong type. POST bodies have been read into memory by limitBody; multipart
// requests and websocket handshakes pass through.
func checkParams(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var msg string
		switch {
		case r.Method == http.MethodPost && isJSON(r):
			msg = checkPostParams(r)
		case r.Method == http.MethodGet && !websocket.IsWebSocketUpgrade(r):
			q := r.URL.Query()
			if !q.Has("query") && !strings.Contains(q.Get("extensions"), "persistedQuery") {
				msg = "the query parameter is missing"
			}
		}
		if msg != "" {
			w.Header().Set("Content-Type", responseMediaType(r))
			writeGraphQLErrorBody(w, http.StatusBadRequest, codeBadRequest, msg)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func isJSON(r *http.Request) bool {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && mt == mediaJSON
}

// checkPostParams checks the types of a JSON body's parameters and returns
// what is wrong, or "". The body is put back for gqlgen.
func checkPostParams(r *http.Request) string {
	if r.Body == nil || r.Body == http.NoBody {
		return "the request body is empty: send a JSON object with a query"
	}
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(r.Body); err != nil {
		return "" // gqlgen reports it
	}
	_ = r.Body.Close()
	body := buf.Bytes()
	r.Body = readCloser{bytes.NewReader(body)}
	var params map[string]json.RawMessage
	if err := json.Unmarshal(body, &params); err != nil {
		if json.Valid(body) {
			return "the request body must be a JSON object"
		}
		return "" // not JSON: gqlgen's 400 ("json request body could not be decoded")
	}
	kind := func(name string) byte {
		v := bytes.TrimSpace(params[name])
		if len(v) == 0 || v[0] == 'n' {
			return 0 // absent or null
		}
		return v[0]
	}
	switch kind("query") {
	case '"':
	case 0:
		var ext struct {
			PersistedQuery json.RawMessage `json:"persistedQuery"`
		}
		if kind("extensions") != '{' || json.Unmarshal(params["extensions"], &ext) != nil || len(ext.PersistedQuery) == 0 {
			return "the query parameter is missing"
		}
	default:
		return "the query parameter must be a string"
	}
	if k := kind("variables"); k != 0 && k != '{' {
		return "the variables parameter must be an object (or null)"
	}
	if k := kind("operationName"); k != 0 && k != '"' {
		return "the operationName parameter must be a string (or null)"
	}
	if k := kind("extensions"); k != 0 && k != '{' {
		return "the extensions parameter must be an object (or null)"
	}
	return ""
}

type readCloser struct{ *bytes.Reader }

func (readCloser) Close() error { return nil }

// responseMediaType is the media type gqlgen answers r with: the first of
// application/json and application/graphql-response+json the Accept header
// names (*/* and application/* mean application/json), application/json
// without an Accept header.
func responseMediaType(r *http.Request) string {
	accept := r.Header.Get("Accept")
	if accept == "" {
		return mediaJSON
	}
	for part := range strings.SplitSeq(accept, ",") {
		mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		switch mt {
		case "*/*", "application/*", mediaJSON:
			return mediaJSON
		case mediaGraphQLResponse:
			return mediaGraphQLResponse
		}
	}
	return mediaGraphQLResponse
}

// isGraphQLResponse reports whether a response's Content-Type is
// application/graphql-response+json.
func isGraphQLResponse(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && mt == mediaGraphQLResponse
}
