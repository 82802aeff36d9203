package main

import (
	"compress/gzip"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// otlpReceiver is an OTLP/HTTP trace receiver in the test process: it
// decodes the protobuf ExportTraceServiceRequest of POST /v1/traces, as a
// collector does, and keeps the spans.
type otlpReceiver struct {
	URL string
	mu  sync.Mutex
	got []recvSpan
	bad []string // requests it could not decode
}

// recvSpan is one received span, ids in hex.
type recvSpan struct {
	Service                 string
	Name                    string
	TraceID, SpanID, Parent string
	Attrs                   map[string]any
	Links                   []string // the span ids it links to
}

func newOTLPReceiver(t testing.TB) *otlpReceiver {
	t.Helper()
	r := &otlpReceiver{}
	srv := httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(srv.Close)
	r.URL = srv.URL
	return r
}

func (r *otlpReceiver) serve(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost || req.URL.Path != "/v1/traces" {
		r.fail(req.Method + " " + req.URL.Path)
		http.NotFound(w, req)
		return
	}
	var body io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(req.Body)
		if err != nil {
			r.fail(err.Error())
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	raw, err := io.ReadAll(io.LimitReader(body, 64<<20))
	var msg coltracepb.ExportTraceServiceRequest
	if err == nil {
		err = proto.Unmarshal(raw, &msg)
	}
	if err != nil || req.Header.Get("Content-Type") != "application/x-protobuf" {
		r.fail("undecodable export: " + req.Header.Get("Content-Type"))
		http.Error(w, "bad export", http.StatusBadRequest)
		return
	}
	var spans []recvSpan
	for _, rs := range msg.ResourceSpans {
		service := attrMap(rs.GetResource().GetAttributes())["service.name"]
		name, _ := service.(string)
		for _, ss := range rs.ScopeSpans {
			for _, sp := range ss.Spans {
				spans = append(spans, recvSpan{Service: name, Name: sp.Name, TraceID: hex.EncodeToString(sp.TraceId),
					SpanID: hex.EncodeToString(sp.SpanId), Parent: hex.EncodeToString(sp.ParentSpanId), Attrs: attrMap(sp.Attributes),
					Links: linkIDs(sp.Links)})
			}
		}
	}
	r.mu.Lock()
	r.got = append(r.got, spans...)
	r.mu.Unlock()
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

func (r *otlpReceiver) fail(why string) {
	r.mu.Lock()
	r.bad = append(r.bad, why)
	r.mu.Unlock()
}

// spans returns the spans received so far, and the requests it refused.
func (r *otlpReceiver) spans() ([]recvSpan, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]recvSpan(nil), r.got...), append([]string(nil), r.bad...)
}

// attrMap turns OTLP attributes into Go values (string, int64, bool,
// float64, []any).
func attrMap(kvs []*commonpb.KeyValue) map[string]any {
	out := make(map[string]any, len(kvs))
	for _, kv := range kvs {
		out[kv.Key] = anyValue(kv.Value)
	}
	return out
}

func anyValue(v *commonpb.AnyValue) any {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return x.IntValue
	case *commonpb.AnyValue_BoolValue:
		return x.BoolValue
	case *commonpb.AnyValue_DoubleValue:
		return x.DoubleValue
	case *commonpb.AnyValue_ArrayValue:
		var out []any
		for _, e := range x.ArrayValue.Values {
			out = append(out, anyValue(e))
		}
		return out
	}
	return nil
}

func linkIDs(links []*tracepb.Span_Link) []string {
	var out []string
	for _, l := range links {
		out = append(out, hex.EncodeToString(l.SpanId))
	}
	return out
}
