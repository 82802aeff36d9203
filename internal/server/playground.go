package server

import (
	"embed"
	"io/fs"
	"net/http"
)

// The GraphiQL playground is served from the binary, so it works without
// internet access (scripts/vendor-playground.sh refreshes the assets).
//
//go:embed playground
var playgroundFiles embed.FS

// playgroundHandler serves the playground page at / and its assets under
// /playground/.
func playgroundHandler() (page, assets http.Handler) {
	sub, err := fs.Sub(playgroundFiles, "playground")
	if err != nil {
		panic("server: embedded playground missing: " + err.Error())
	}
	index, err := fs.ReadFile(sub, "index.html")
	if err != nil {
		panic("server: embedded playground page missing: " + err.Error())
	}
	page = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-cache")
		_, _ = w.Write(index)
	})
	files := http.FileServerFS(sub)
	assets = http.StripPrefix("/playground/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=86400")
		files.ServeHTTP(w, r)
	}))
	return page, assets
}
