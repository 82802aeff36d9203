package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// bigTrace writes about size bytes of input events, one JSON object per line,
// and returns the number of lines and the SHA-256 of what it wrote. It
// formats 1 MiB of events once and repeats it, which keeps the test fast
// under the race detector.
func bigTrace(size int) (func(w io.Writer) error, *int, *string) {
	lines, sum := new(int), new(string)
	var block strings.Builder
	perBlock := 0
	for block.Len() < 1<<20 {
		fmt.Fprintf(&block, `{"t":%d,"type":"mousemove","x":%d,"y":%d,"target":"#node-%d","pad":"%s"}`+"\n",
			perBlock*16, perBlock%1920, perBlock%1080, perBlock%97, strings.Repeat("x", 120))
		perBlock++
	}
	chunk := []byte(block.String())
	return func(w io.Writer) error {
		h := sha256.New()
		mw := io.MultiWriter(w, h)
		for written := 0; written < size; written += len(chunk) {
			if _, err := mw.Write(chunk); err != nil {
				return err
			}
			*lines += perBlock
		}
		*sum = hex.EncodeToString(h.Sum(nil))
		return nil
	}, lines, sum
}

// TestTraceUploadMemory uploads a 50 MB trace through the multipart endpoint
// of the in-process server and measures the process's memory while it is
// streamed, checked and stored: heap in use and bytes allocated must stay far
// below the file's size.
func TestTraceUploadMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("50 MB upload")
	}
	const size = 50 << 20
	const bound = 16 << 20
	eachCatalogDB(t, func(t *testing.T, s *catalogServer) {
		admin := s.AdminToken
		session := s.createSession(t, admin, s.createSuite(t, admin, "Big"))
		write, lines, sum := bigTrace(size)
		body, ctype := multipartBody(t, uploadTraceMutation, M{"in": M{"sessionId": session, "inputEvents": nil}},
			upload{path: "variables.in.inputEvents", name: "input_events.jsonl", write: write})
		st, err := body.Stat()
		require.NoError(t, err)
		req, err := http.NewRequest(http.MethodPost, s.URL+"/graphql", body)
		require.NoError(t, err)
		req.ContentLength = st.Size()
		req.Header.Set("Content-Type", ctype)
		req.Header.Set("Apollo-Require-Preflight", "true")
		req.Header.Set("Authorization", "Bearer "+admin)

		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		var (
			peak uint64
			stop = make(chan struct{})
			wg   sync.WaitGroup
		)
		wg.Add(1)
		go func() { // sample the heap while the upload runs
			defer wg.Done()
			tick := time.NewTicker(5 * time.Millisecond)
			defer tick.Stop()
			var m runtime.MemStats
			for {
				runtime.ReadMemStats(&m)
				peak = max(peak, m.HeapInuse)
				select {
				case <-stop:
					return
				case <-tick.C:
				}
			}
		}()
		start := time.Now()
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		raw, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		elapsed := time.Since(start)
		close(stop)
		wg.Wait()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)

		var out gqlResponse
		require.NoError(t, json.Unmarshal(raw, &out), "%s", raw)
		require.Empty(t, out.Errors)
		var data struct {
			UploadTraceEvents struct {
				TraceSession struct {
					StoragePath           string
					SizeBytes, EventCount int
				}
			}
		}
		require.NoError(t, json.Unmarshal(out.Data, &data))
		ts := data.UploadTraceEvents.TraceSession
		require.Equal(t, *lines, ts.EventCount)
		require.GreaterOrEqual(t, ts.SizeBytes, size)

		f, err := os.Open(filepath.Join(s.DataDir, ts.StoragePath))
		require.NoError(t, err)
		h := sha256.New()
		n, err := io.Copy(h, f)
		f.Close()
		require.NoError(t, err)
		require.Equal(t, int64(ts.SizeBytes), n)
		require.Equal(t, *sum, hex.EncodeToString(h.Sum(nil)), "stored byte for byte")

		allocated := after.TotalAlloc - before.TotalAlloc
		growth := int64(peak) - int64(before.HeapInuse)
		t.Logf("uploaded %d MB (%d lines) in %s: heap in use %d MB before, peak %d MB (growth %.1f MB); %.1f MB allocated",
			ts.SizeBytes>>20, ts.EventCount, elapsed.Round(time.Millisecond), before.HeapInuse>>20, peak>>20,
			float64(growth)/(1<<20), float64(allocated)/(1<<20))
		require.Less(t, growth, int64(bound), "heap growth while streaming a %d MB upload", size>>20)
		require.Less(t, allocated, uint64(bound), "bytes allocated while streaming a %d MB upload", size>>20)
	})
}
