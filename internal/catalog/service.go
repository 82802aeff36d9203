// Package catalog holds the use-cases of the catalog: suites of application
// actions, MCP servers and their tools, the maps between them, models, trace
// sessions and the training examples made from them. The catalog is global:
// every authenticated caller reads it; ADMIN and MEMBER change it.
//
// Its entities and input rules are in internal/domain, its SQL in
// internal/store (q.Catalog, q.Examples), its uploaded files in
// internal/files.
package catalog

import (
	"context"
	"log/slog"
	"time"

	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/files"
	"github.com/taskgraph/taskgraph/internal/store"
)

// Options configure a Service.
type Options struct {
	// Clock is the time source (tests inject their own); default the
	// database's clock (store.DB.Clock).
	Clock func() time.Time
	// LoggerFrom returns the logger of a request; default slog.Default().
	LoggerFrom func(ctx context.Context) *slog.Logger
	// DataDir holds uploaded traces and examples; default "data".
	DataDir string
	// MaxUploadBytes bounds one uploaded file; default DefaultMaxUploadBytes.
	MaxUploadBytes int64
}

// Service is the catalog's use-cases.
type Service struct {
	db         *store.DB
	run        *app.Runner
	clock      func() time.Time
	loggerFrom func(ctx context.Context) *slog.Logger
	files      *files.Dir
	maxUpload  int64
}

// New returns the catalog over db, committing through run.
func New(db *store.DB, run *app.Runner, opts Options) *Service {
	s := &Service{db: db, run: run, clock: opts.Clock, loggerFrom: opts.LoggerFrom, maxUpload: opts.MaxUploadBytes}
	if s.clock == nil {
		s.clock = db.Clock
	}
	if s.loggerFrom == nil {
		s.loggerFrom = func(context.Context) *slog.Logger { return slog.Default() }
	}
	if opts.DataDir == "" {
		opts.DataDir = "data"
	}
	s.files = files.New(opts.DataDir)
	if s.maxUpload <= 0 {
		s.maxUpload = DefaultMaxUploadBytes
	}
	return s
}

// logger is the logger of the request ctx belongs to.
func (s *Service) logger(ctx context.Context) *slog.Logger { return s.loggerFrom(ctx) }

// now is the current time as stored (app.Now).
func (s *Service) now() time.Time { return app.Now(s.clock) }

// tx runs fn in one transaction (see app.Runner.InTx).
func (s *Service) tx(ctx context.Context, fn func(tx *app.Tx) error) error {
	return s.run.InTx(ctx, fn)
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
