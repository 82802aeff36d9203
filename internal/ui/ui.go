// Package ui is the run dashboard served at /ui/: plain ES modules, a
// stylesheet and the page's GraphQL documents, embedded in the binary. There
// is no build step: the files under assets/ are what the browser loads. The
// dashboard talks to the server only through the public GraphQL API (POST
// /graphql, and subscriptions over graphql-transport-ws on GET /graphql).
package ui

import (
	"embed"
	"io/fs"
	"net/http"
	"strings"
)

//go:embed assets
var assets embed.FS

// Files are the dashboard's files (index.html, *.js, style.css and
// queries/*.graphql), rooted at the directory served as /ui/.
func Files() fs.FS {
	sub, err := fs.Sub(assets, "assets")
	if err != nil {
		panic("ui: embedded assets missing: " + err.Error())
	}
	return sub
}

// Query returns one of the page's GraphQL documents (queries/<name>.graphql),
// the very text the browser sends: tests measure the page with it.
func Query(name string) (string, error) {
	b, err := fs.ReadFile(Files(), "queries/"+name+".graphql")
	return string(b), err
}

// Handler serves the dashboard under prefix (e.g. "/ui/"): the page at the
// prefix itself and its files below it. The page and its modules are
// revalidated on every load (no-cache), so a new binary is picked up at once.
// connect are the origins besides the server's own the page may fetch from
// (an OpenID provider's token endpoint, for "Sign in with …").
func Handler(prefix string, connect ...string) http.Handler {
	csp := "default-src 'self'; connect-src " + strings.Join(append([]string{"'self'"}, connect...), " ") +
		"; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'"
	files := Files()
	index, err := fs.ReadFile(files, "index.html")
	if err != nil {
		panic("ui: embedded index.html missing: " + err.Error())
	}
	server := http.FileServerFS(files)
	return http.StripPrefix(prefix, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Content-Security-Policy", csp)
		if r.URL.Path == "" || r.URL.Path == "index.html" {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write(index)
			return
		}
		if strings.HasSuffix(r.URL.Path, "/") {
			http.NotFound(w, r)
			return
		}
		server.ServeHTTP(w, r)
	}))
}
