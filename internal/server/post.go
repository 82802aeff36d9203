package server

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/99designs/gqlgen/graphql/handler/transport"
)

// postJSON is gqlgen's POST transport but for how a response is written:
// the data of a response is JSON the executor wrote, and goes out as it
// stands, where gqlgen passes the whole response through encoding/json
// again (which validates and copies every byte of it). A body that cannot
// be read or decoded is left to gqlgen's POST, which answers it.
type postJSON struct{ transport.POST }

var _ graphql.Transport = postJSON{}

func (t postJSON) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	ctx := r.Context()
	start := graphql.Now()
	params := decodedParams(r) // checkParams decoded the body
	if params == nil {
		body, err := io.ReadAll(r.Body) // limitBody has read it into memory
		params = new(graphql.RawParams)
		if err == nil {
			dec := json.NewDecoder(bytes.NewReader(body))
			dec.UseNumber()
			err = dec.Decode(params)
		}
		if err != nil {
			r.Body = io.NopCloser(bytes.NewReader(body))
			t.POST.Do(w, r, exec)
			return
		}
	}
	media := responseMediaType(r)
	w.Header().Set("Content-Type", media)
	params.Headers = r.Header
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}
	rc, opErr := exec.CreateOperationContext(ctx, params)
	if opErr != nil {
		status := http.StatusOK
		if errcode.GetErrorKind(opErr) == errcode.KindProtocol {
			status = http.StatusUnprocessableEntity
			if media == mediaGraphQLResponse {
				status = http.StatusBadRequest
			}
		}
		w.WriteHeader(status)
		writeResponse(w, exec.DispatchError(graphql.WithOperationContext(ctx, rc), opErr))
		return
	}
	responses, ctx := exec.DispatchOperation(ctx, rc)
	writeResponse(w, responses(ctx))
}

// writeResponse writes resp as encoding/json would — the same keys, in the
// same order — with its data as it stands.
func writeResponse(w io.Writer, resp *graphql.Response) {
	if resp == nil || resp.Label != "" || resp.Path != nil || resp.HasNext != nil {
		// Not an executed operation's one response: encoding/json as usual.
		b, err := json.Marshal(resp)
		if err != nil {
			panic(err) // gqlgen's POST panics as well: a response is JSON
		}
		_, _ = w.Write(b)
		return
	}
	_, _ = io.WriteString(w, "{")
	if len(resp.Errors) > 0 {
		b, err := json.Marshal(resp.Errors)
		if err != nil {
			panic(err)
		}
		_, _ = io.WriteString(w, `"errors":`)
		_, _ = w.Write(b)
		_, _ = io.WriteString(w, ",")
	}
	_, _ = io.WriteString(w, `"data":`)
	if len(resp.Data) == 0 {
		_, _ = io.WriteString(w, "null")
	} else {
		_, _ = w.Write(resp.Data)
	}
	if len(resp.Extensions) > 0 {
		b, err := json.Marshal(resp.Extensions)
		if err != nil {
			panic(err)
		}
		_, _ = io.WriteString(w, `,"extensions":`)
		_, _ = w.Write(b)
	}
	_, _ = io.WriteString(w, "}")
}
