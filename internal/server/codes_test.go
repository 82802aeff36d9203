package server

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestWithErrorCodes(t *testing.T) {
	validation := `{"errors":[{"message":"m","extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}],"data":null}`
	for _, tc := range []struct {
		name        string
		contentType string // default application/json
		status      int
		body        string
		want        string
		wantStatus  int // default status
	}{
		{"adds a missing code", "", http.StatusBadRequest, `{"errors":[{"message":"transport not supported"}],"data":null}`,
			`{"errors":[{"message":"transport not supported","extensions":{"code":"BAD_USER_INPUT"}}]}`, 0},
		{"keeps other extensions", "", http.StatusNotAcceptable, `{"errors":[{"message":"m","extensions":{"x":1}}]}`,
			`{"errors":[{"message":"m","extensions":{"x":1,"code":"BAD_USER_INPUT"}}]}`, 0},
		{"validation failure over application/json is 200 without data", "", http.StatusUnprocessableEntity, validation,
			`{"errors":[{"message":"m","extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}]}`, http.StatusOK},
		{"request error over graphql-response+json has no data", "application/graphql-response+json", http.StatusBadRequest, validation,
			`{"errors":[{"message":"m","extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}]}`, 0},
		{"leaves non-JSON alone", "", http.StatusMethodNotAllowed, "Method Not Allowed\n", "Method Not Allowed\n", 0},
		{"leaves success alone", "", http.StatusOK, `{"errors":[{"message":"partial"}],"data":null}`, `{"errors":[{"message":"partial"}],"data":null}`, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := withErrorCodes(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				ct := tc.contentType
				if ct == "" {
					ct = "application/json"
				}
				w.Header().Set("Content-Type", ct)
				w.WriteHeader(tc.status)
				_, _ = w.Write([]byte(tc.body))
			}))
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/graphql", nil))
			want := tc.wantStatus
			if want == 0 {
				want = tc.status
			}
			require.Equal(t, want, rec.Code)
			if tc.want[0] == '{' {
				require.JSONEq(t, tc.want, rec.Body.String())
			} else {
				require.Equal(t, tc.want, rec.Body.String())
			}
		})
	}
	// A success is streamed as written: flushes reach the client.
	rec := httptest.NewRecorder()
	withErrorCodes(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("part"))
		w.(http.Flusher).Flush()
	})).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/graphql", nil))
	require.True(t, rec.Flushed)
	require.Equal(t, "part", rec.Body.String())
}
