package server

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestBodyDeadlineEndsWithTheBody: once the body has arrived, the deadline is
// gone (net/http clears it for its background read): a handler that runs past
// it keeps its request context, and answers.
func TestBodyDeadlineEndsWithTheBody(t *testing.T) {
	s := &server{cfg: Config{BodyReadTimeout: 100 * time.Millisecond}}
	srv := httptest.NewServer(s.bodyDeadline(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		require.NoError(t, err)
		time.Sleep(500 * time.Millisecond) // five times the deadline
		if r.Context().Err() != nil {
			http.Error(w, "context ended: "+r.Context().Err().Error(), http.StatusInternalServerError)
			return
		}
		_, _ = w.Write(b)
	})))
	defer srv.Close()
	resp, err := http.Post(srv.URL, "text/plain", strings.NewReader("hello"))
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(b))
	require.Equal(t, "hello", string(b))
}
