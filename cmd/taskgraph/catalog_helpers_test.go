package main

import (
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/testdb"
)

// catalogServer is a test server with its own data directory.
type catalogServer struct {
	*testServer
	DataDir string
}

// eachCatalogDB runs f against a fresh server with a fresh data directory on
// every test database.
func eachCatalogDB(t *testing.T, f func(t *testing.T, s *catalogServer), extraArgs ...string) {
	testdb.Run(t, func(t *testing.T, url string) { f(t, startCatalogServer(t, url, extraArgs...)) })
}

func startCatalogServer(t testing.TB, url string, extraArgs ...string) *catalogServer {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "data")
	return &catalogServer{testServer: startServer(t, url, append([]string{"--data-dir", dir}, extraArgs...)...), DataDir: dir}
}

// upload is one file of a multipart request: written by write into the part
// at the variable path (e.g. "variables.input.inputEvents").
type upload struct {
	path  string
	name  string
	write func(w io.Writer) error
}

func fileOf(path, name, content string) upload {
	return upload{path: path, name: name, write: func(w io.Writer) error {
		_, err := io.WriteString(w, content)
		return err
	}}
}

// multipartBody writes a GraphQL multipart request (operations, map, files)
// to a temporary file, so that even a large upload never sits in memory, and
// returns it with its content type.
func multipartBody(t testing.TB, query string, vars map[string]any, files ...upload) (*os.File, string) {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "multipart-*")
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	mw := multipart.NewWriter(f)
	ops, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	require.NoError(t, err)
	require.NoError(t, mw.WriteField("operations", string(ops)))
	m := map[string][]string{}
	for i, u := range files {
		m[itoa(i)] = []string{u.path}
	}
	mp, err := json.Marshal(m)
	require.NoError(t, err)
	require.NoError(t, mw.WriteField("map", string(mp)))
	for i, u := range files {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", `form-data; name="`+itoa(i)+`"; filename="`+u.name+`"`)
		h.Set("Content-Type", "application/x-ndjson")
		pw, err := mw.CreatePart(h)
		require.NoError(t, err)
		require.NoError(t, u.write(pw))
	}
	require.NoError(t, mw.Close())
	_, err = f.Seek(0, io.SeekStart)
	require.NoError(t, err)
	return f, mw.FormDataContentType()
}

func itoa(i int) string { return string(rune('0' + i)) }

// uploadReq sends a multipart request with the preflight header set (unless
// headers says otherwise) and returns the decoded response.
func (s *catalogServer) uploadReq(t testing.TB, token, query string, vars map[string]any, headers map[string]string, files ...upload) gqlResponse {
	t.Helper()
	body, ctype := multipartBody(t, query, vars, files...)
	st, err := body.Stat()
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPost, s.URL+"/graphql", body)
	require.NoError(t, err)
	req.ContentLength = st.Size()
	req.Header.Set("Content-Type", ctype)
	req.Header.Set("Apollo-Require-Preflight", "true")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range headers {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	out := gqlResponse{Status: resp.StatusCode}
	require.NoError(t, json.Unmarshal(raw, &out), "response %d: %s", resp.StatusCode, raw)
	return out
}

const uploadTraceMutation = `mutation($in: UploadTraceEventsInput!) { uploadTraceEvents(input: $in) {
	traceSession { id storagePath sizeBytes eventCount uploadedAt } } }`

// uploadTrace uploads content as a session's input_events.jsonl.
func (s *catalogServer) uploadTrace(t testing.TB, token, sessionID, content string) gqlResponse {
	t.Helper()
	return s.uploadReq(t, token, uploadTraceMutation, M{"in": M{"sessionId": sessionID, "inputEvents": nil}}, nil,
		fileOf("variables.in.inputEvents", "input_events.jsonl", content))
}

const completeExampleMutation = `mutation($in: CompleteExampleInput!) { completeExample(input: $in) {
	example { id status storagePath conversationCount sizeBytes finishedAt } } }`

// completeExample completes an example with content as its messages.jsonl.
func (s *catalogServer) completeExample(t testing.TB, token, exampleID, content string) gqlResponse {
	t.Helper()
	return s.uploadReq(t, token, completeExampleMutation, M{"in": M{"id": exampleID, "messages": nil}}, nil,
		fileOf("variables.in.messages", "messages.jsonl", content))
}

// filesUnder lists every file and directory under dir, relative to it.
func filesUnder(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) {
				return nil
			}
			return err
		}
		if p != dir {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	require.NoError(t, err)
	return out
}
