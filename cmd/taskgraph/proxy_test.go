package main

import (
	"bytes"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"testing"
)

// interceptProxy serves a reverse proxy to target that hands each request,
// with its body read (and put back for forwarding), to handle, which
// forwards it with forward or answers it itself. It returns the proxy's
// URL. The proxy's refused connections (a server restarting) answer 502
// without a log line.
func interceptProxy(t testing.TB, target *url.URL, handle func(w http.ResponseWriter, r *http.Request, body []byte, forward http.Handler)) string {
	t.Helper()
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.ErrorLog = log.New(io.Discard, "", 0)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		handle(w, r, body, proxy)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}
