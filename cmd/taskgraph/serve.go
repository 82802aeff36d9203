package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/taskgraph/taskgraph/graph"
	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/catalog"
	"github.com/taskgraph/taskgraph/internal/events"
	"github.com/taskgraph/taskgraph/internal/export"
	"github.com/taskgraph/taskgraph/internal/loader"
	"github.com/taskgraph/taskgraph/internal/server"
	"github.com/taskgraph/taskgraph/internal/service"
	"github.com/taskgraph/taskgraph/internal/sessions"
	"github.com/taskgraph/taskgraph/internal/store"
)

// testHooks lets end-to-end tests observe the real serve path.
type testHooks struct {
	onListen     func(addr net.Addr, db *store.DB)
	loaderTiming loader.Timing
	// wrapHandler, when set, wraps the server's handler (graceful shutdown
	// tests hold a request in flight with it).
	wrapHandler func(http.Handler) http.Handler
	events      events.Options         // non-zero fields replace the defaults
	websocket   server.WebsocketConfig // non-zero fields replace the defaults
}

// runServe opens and migrates the database, makes sure an admin can log in, and
// serves until ctx ends, then shuts down gracefully.
func runServe(ctx context.Context, args []string, stdout, stderr io.Writer, hooks *testHooks) error {
	cfg, err := parseServe(args, stderr)
	if err != nil {
		return err
	}
	log := newLogger(cfg.logFormat, stderr)
	db, err := store.Open(ctx, cfg.database)
	if err != nil {
		return err
	}
	defer func() {
		if err := db.Close(); err != nil {
			log.Error("closing the database failed", "err", err)
		}
		log.Info("database closed")
	}()
	if err := db.Migrate(ctx); err != nil {
		return err
	}
	eventOpts := events.Options{Logger: log}
	wsConfig := server.WebsocketConfig{AllowedOrigins: cfg.allowedOrigins}
	if hooks != nil {
		eventOpts = hooks.events
		eventOpts.Logger = log
		origins := wsConfig.AllowedOrigins
		wsConfig = hooks.websocket
		wsConfig.AllowedOrigins = append(wsConfig.AllowedOrigins, origins...)
	}
	broker := events.NewBroker(db, eventOpts)
	// The broker outlives the HTTP server: subscriptions end with their
	// connections when the server shuts down, and only then the broker, so
	// that no subscriber is told its stream completed.
	brokerCtx, stopBroker := context.WithCancel(context.WithoutCancel(ctx))
	brokerDone := make(chan struct{})
	go func() {
		defer close(brokerDone)
		broker.Run(brokerCtx)
	}()
	defer func() {
		stopBroker()
		<-brokerDone
	}()
	opts := service.Options{Logger: log, LoggerFrom: server.LoggerFrom, Events: broker,
		HeartbeatInterval: cfg.heartbeatInterval, MissedHeartbeats: cfg.missedHeartbeats, MaxAttempts: cfg.maxAttempts}
	loaderTiming := loader.DefaultTiming
	if hooks != nil {
		loaderTiming = hooks.loaderTiming
	}
	svc := service.New(db, opts)
	cat := catalog.New(db, app.NewRunner(db, broker), catalog.Options{LoggerFrom: server.LoggerFrom,
		DataDir: cfg.dataDir, MaxUploadBytes: cfg.maxUploadBytes})
	sess := sessions.New(db, app.NewRunner(db, broker), svc, sessions.Options{LoggerFrom: server.LoggerFrom})
	token, err := svc.Accounts.BootstrapAdmin(ctx, cfg.adminToken)
	if err != nil {
		return fmt.Errorf("bootstrap admin: %w", err)
	}
	if token != "" {
		fmt.Fprintf(stdout, "Created the admin user. Its API token, shown this once:\n\n    %s\n\n"+
			"Send it as the header  Authorization: Bearer <token>\n", token)
	}

	registry := prometheus.NewRegistry()
	registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	handler := server.New(server.Config{
		Schema:           graph.Schema(svc, cat, sess),
		Authenticate:     svc.Accounts.Authenticate,
		Ready:            db.Ping,
		Logger:           log,
		Registry:         registry,
		DBStats:          db.SQL().Stats,
		OperationContext: func(ctx context.Context) context.Context { return app.WithLoaders(ctx, loaderTiming) },
		Introspection:    !cfg.production,
		FieldSuggestions: !cfg.production,
		Export:           export.Handler(cat, server.LoggerFrom),
		MaxUploadBytes:   cfg.maxUploadBytes,
		Websocket:        wsConfig,
	})
	if hooks != nil && hooks.wrapHandler != nil {
		handler = hooks.wrapHandler(handler)
	}
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Taskgraph on http://%s (playground at /, GraphQL at /graphql, database %s)\n", ln.Addr(), db.Dialect())
	if hooks != nil && hooks.onListen != nil {
		hooks.onListen(ln.Addr(), db)
	}
	go svc.RunScoreRefresher(ctx, time.Minute)
	go svc.Runs.RunHeartbeatSweep(ctx)
	return server.Serve(ctx, ln, handler, log)
}

func newLogger(format string, w io.Writer) *slog.Logger {
	if format == "auto" {
		format = "json"
		if f, ok := w.(*os.File); ok {
			if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
				format = "text"
			}
		}
	}
	if format == "text" {
		return slog.New(slog.NewTextHandler(w, nil))
	}
	return slog.New(slog.NewJSONHandler(w, nil))
}
