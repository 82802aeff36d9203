package server

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestWithErrorCodes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		body   string
		want   string
	}{
		{"adds a missing code", http.StatusBadRequest, `{"errors":[{"message":"transport not supported"}],"data":null}`,
			`{"errors":[{"message":"transport not supported","extensions":{"code":"BAD_USER_INPUT"}}],"data":null}`},
		{"keeps other extensions", http.StatusNotAcceptable, `{"errors":[{"message":"m","extensions":{"x":1}}]}`,
			`{"errors":[{"message":"m","extensions":{"x":1,"code":"BAD_USER_INPUT"}}]}`},
		{"keeps a code", http.StatusUnprocessableEntity, `{"errors":[{"message":"m","extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}]}`,
			`{"errors":[{"message":"m","extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}]}`},
		{"leaves non-JSON alone", http.StatusMethodNotAllowed, "Method Not Allowed\n", "Method Not Allowed\n"},
		{"leaves success alone", http.StatusOK, `{"errors":[{"message":"partial"}],"data":{}}`, `{"errors":[{"message":"partial"}],"data":{}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := withErrorCodes(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tc.status)
				_, _ = w.Write([]byte(tc.body))
			}))
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/graphql", nil))
			require.Equal(t, tc.status, rec.Code)
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
