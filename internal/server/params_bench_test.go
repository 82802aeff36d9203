package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"
)

// BenchmarkPostParams: what a POST body costs before the executor sees it —
// checkParams' checks and the decode into gqlgen's parameters — for a
// createTask without and with a 768-number embedding.
func BenchmarkPostParams(b *testing.B) {
	vec := make([]float64, 768)
	for i := range vec {
		vec[i] = float64(i%97)/97 - 0.5 + 1e-7*float64(i)
	}
	for _, withVector := range []bool{false, true} {
		in := map[string]any{"projectId": "p_0123456789", "title": "create 1"}
		if withVector {
			in["embedding"], in["embeddingModel"] = vec, "bench-768"
		}
		body, err := json.Marshal(map[string]any{
			"query":     `mutation($in: CreateTaskInput!) { createTask(input: $in) { task { id } } }`,
			"variables": map[string]any{"in": in},
		})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("embedding=%v", withVector), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				r := httptest.NewRequest(http.MethodPost, "/graphql", nil)
				r.Body = newMemBody(body) // as limitBody leaves it
				r.Header.Set("Content-Type", mediaJSON)
				if p := postParams(r); p == nil || !strings.HasPrefix(p.Query, "mutation") {
					b.Fatal("not decoded")
				}
			}
		})
	}
}

// postParams is what checkParams and postJSON do to a valid body.
func postParams(r *http.Request) *graphql.RawParams {
	if msg, p := checkPostParams(r); msg != "" || p != nil {
		return p
	}
	var p graphql.RawParams
	dec := json.NewDecoder(r.Body)
	dec.UseNumber()
	if dec.Decode(&p) != nil {
		return nil
	}
	return &p
}
