package server

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

type ctxMarker struct{}

func TestServeShutsDownGracefully(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	logs := &syncBuffer{}
	log := slog.New(slog.NewJSONHandler(logs, nil))

	started := make(chan struct{})
	release := make(chan struct{})
	type seen struct {
		value  any
		ctxErr error
	}
	seenc := make(chan seen, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-release
		seenc <- seen{value: r.Context().Value(ctxMarker{}), ctxErr: r.Context().Err()}
		_, _ = io.WriteString(w, "done")
	})

	ctx, cancel := context.WithCancel(context.WithValue(context.Background(), ctxMarker{}, "base"))
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, ln, h, log) }()

	type result struct {
		body string
		err  error
	}
	resc := make(chan result, 1)
	go func() {
		res, err := http.Get("http://" + addr + "/slow")
		if err != nil {
			resc <- result{err: err}
			return
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		resc <- result{body: string(b), err: err}
	}()

	<-started
	cancel()
	select {
	case err := <-served:
		t.Fatalf("Serve returned with a request in flight: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	require.Eventually(t, func() bool {
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err == nil {
			_ = c.Close()
		}
		return err != nil
	}, 2*time.Second, 20*time.Millisecond, "the listener closes at once")

	close(release)
	res := <-resc
	require.NoError(t, res.err)
	require.Equal(t, "done", res.body)
	got := <-seenc
	require.Equal(t, "base", got.value, "request contexts carry the base context's values")
	require.NoError(t, got.ctxErr, "in-flight requests are not cancelled by the shutdown")

	select {
	case err := <-served:
		require.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return after the drain")
	}

	listening := logs.find(t, "listening")
	require.Len(t, listening, 1)
	require.Equal(t, addr, listening[0]["addr"])
}

func TestServeReportsListenerFailure(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	require.NoError(t, ln.Close())
	err = Serve(context.Background(), ln, http.NotFoundHandler(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.Error(t, err)
}
