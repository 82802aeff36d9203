package server

import (
	"bytes"
	"context"
	"encoding/json"
	"mime"
	"net/http"
	"strings"

	"github.com/99designs/gqlgen/graphql"
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
			var params *graphql.RawParams
			if msg, params = checkPostParams(r); params != nil {
				r = r.WithContext(context.WithValue(r.Context(), decodedParamsKey{}, params))
			}
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

// decodedParamsKey keys the request parameters checkPostParams decoded, in
// a request's context, for postJSON.
type decodedParamsKey struct{}

// decodedParams are the parameters checkPostParams decoded from r's body, or
// nil.
func decodedParams(r *http.Request) *graphql.RawParams {
	p, _ := r.Context().Value(decodedParamsKey{}).(*graphql.RawParams)
	return p
}

// checkPostParams checks the types of a JSON body's parameters — the body
// limitBody read into memory — and returns what is wrong, or "". The body
// is put back for gqlgen. A body whose
// parameters are all of the right type, with the query a string, is decoded
// once, here, into the parameters returned with "" (numbers as json.Number,
// as gqlgen's POST decodes them): postJSON takes them as they are. The usual
// body is read by fastParams, the rest by decodeParams. Any other body is
// checked parameter by parameter (checkPostParamTypes).
func checkPostParams(r *http.Request) (string, *graphql.RawParams) {
	if r.Body == nil || r.Body == http.NoBody {
		return "the request body is empty: send a JSON object with a query", nil
	}
	m, ok := r.Body.(memBody)
	if !ok {
		return "", nil // not read by limitBody: gqlgen's POST reads it
	}
	body := m.b
	r.Body = newMemBody(body) // from its start, for gqlgen
	if params, ok := fastParams(body); ok {
		return "", params
	}
	if params := decodeParams(body); params != nil {
		return "", params
	}
	return checkPostParamTypes(body), nil
}

// decodeParams decodes body's parameters in one pass, or returns nil where
// checkPostParamTypes must look at them one by one: a body that is not a
// JSON object, a parameter of the wrong type, or a query that is absent or
// null. Keys are matched exactly, as the GraphQL-over-HTTP spec and
// checkPostParamTypes match them (encoding/json would match a struct's keys
// whatever their case); like gqlgen's POST, only the body's first JSON value
// is read.
func decodeParams(body []byte) *graphql.RawParams {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	var p graphql.RawParams
	var query, operationName *string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		switch key, _ := tok.(string); key {
		case "query":
			query = nil
			err = dec.Decode(&query)
		case "operationName":
			operationName = nil
			err = dec.Decode(&operationName)
		case "variables":
			p.Variables = nil
			err = dec.Decode(&p.Variables)
		case "extensions":
			p.Extensions = nil
			err = dec.Decode(&p.Extensions)
		default:
			var skipped json.RawMessage
			err = dec.Decode(&skipped)
		}
		if err != nil {
			return nil
		}
	}
	if _, err := dec.Token(); err != nil || query == nil { // the closing brace
		return nil
	}
	p.Query = *query
	if operationName != nil {
		p.OperationName = *operationName
	}
	return &p
}

// checkPostParamTypes checks each parameter of a JSON body and returns what
// is wrong with the first one of query, variables, operationName and
// extensions that is wrong, or "".
func checkPostParamTypes(body []byte) string {
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
