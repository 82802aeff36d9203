package ui

import (
	"io/fs"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func get(t *testing.T, path string) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	Handler("/ui/").ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec
}

func TestHandlerServesThePageAndItsFiles(t *testing.T) {
	page := get(t, "/ui/")
	if page.Code != http.StatusOK || !strings.Contains(page.Body.String(), `<script type="module" src="/ui/app.js">`) {
		t.Fatalf("GET /ui/: %d %q", page.Code, page.Body.String())
	}
	if ct := page.Header().Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Errorf("page content type %q", ct)
	}
	if csp := page.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") {
		t.Errorf("page CSP %q", csp)
	}
	for _, f := range []string{"/ui/app.js", "/ui/gql.js", "/ui/dom.js", "/ui/plan.js", "/ui/run.js", "/ui/questions.js", "/ui/reasoning.js", "/ui/sessions.js", "/ui/sso.js", "/ui/style.css", "/ui/queries/run.graphql", "/ui/queries/run_questions.graphql", "/ui/queries/question_action.graphql", "/ui/queries/reasoning.graphql", "/ui/queries/sessions.graphql", "/ui/queries/session_detail.graphql"} {
		rec := get(t, f)
		if rec.Code != http.StatusOK || rec.Body.Len() == 0 {
			t.Errorf("GET %s: %d", f, rec.Code)
		}
		if strings.HasSuffix(f, ".js") && !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/javascript") {
			t.Errorf("GET %s: content type %q (modules need a JavaScript type)", f, rec.Header().Get("Content-Type"))
		}
	}
	for _, f := range []string{"/ui/queries/", "/ui/nope.js", "/ui/../ui.go"} {
		if rec := get(t, f); rec.Code != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", f, rec.Code)
		}
	}
}

// TestNoThirdPartyOrigins: the dashboard works offline, so no file may load
// anything from another origin.
func TestNoThirdPartyOrigins(t *testing.T) {
	err := fs.WalkDir(Files(), ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(Files(), path)
		if err != nil {
			return err
		}
		text := strings.ReplaceAll(string(b), "http://www.w3.org/2000/svg", "") // a namespace, not a URL fetched
		for _, bad := range []string{"http://", "https://", "//cdn"} {
			if strings.Contains(text, bad) {
				t.Errorf("%s refers to %q: the dashboard must not load anything from elsewhere", path, bad)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestQuery(t *testing.T) {
	q, err := Query("run")
	if err != nil || !strings.Contains(q, "executionRun(id: $id)") {
		t.Fatalf("Query(run) = %q, %v", q, err)
	}
	if _, err := Query("nope"); err == nil {
		t.Fatal("Query(nope): no error")
	}
}

func TestHandlerLetsThePageReachTheTokenEndpoint(t *testing.T) {
	rec := httptest.NewRecorder()
	Handler("/ui/", "https://id.example.com").ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/ui/", nil))
	csp := rec.Header().Get("Content-Security-Policy")
	if !strings.Contains(csp, "connect-src 'self' https://id.example.com;") {
		t.Fatalf("CSP %q does not let the page reach the provider", csp)
	}
	if csp := get(t, "/ui/").Header().Get("Content-Security-Policy"); !strings.Contains(csp, "connect-src 'self';") {
		t.Fatalf("CSP without single sign-on: %q", csp)
	}
}
