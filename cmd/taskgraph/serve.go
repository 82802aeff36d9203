package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/taskgraph/taskgraph/graph"
	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/catalog"
	"github.com/taskgraph/taskgraph/internal/events"
	"github.com/taskgraph/taskgraph/internal/export"
	"github.com/taskgraph/taskgraph/internal/grouping"
	"github.com/taskgraph/taskgraph/internal/loader"
	"github.com/taskgraph/taskgraph/internal/mcp"
	"github.com/taskgraph/taskgraph/internal/questions"
	"github.com/taskgraph/taskgraph/internal/queue"
	"github.com/taskgraph/taskgraph/internal/reasoning"
	"github.com/taskgraph/taskgraph/internal/routing"
	"github.com/taskgraph/taskgraph/internal/server"
	"github.com/taskgraph/taskgraph/internal/service"
	"github.com/taskgraph/taskgraph/internal/sessions"
	"github.com/taskgraph/taskgraph/internal/sso"
	"github.com/taskgraph/taskgraph/internal/store"
	"github.com/taskgraph/taskgraph/internal/telegram"
	"github.com/taskgraph/taskgraph/internal/validation"
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
	// onMetricsListen, when set, is told the --metrics-addr listener's address.
	onMetricsListen func(addr net.Addr)
	// noGroupingBackground keeps suggestions to suggestGroupings only.
	noGroupingBackground bool
	// onRegistry, when set, is given the server's metrics registry.
	onRegistry func(*prometheus.Registry)
}

// runServe opens and migrates the database, makes sure an admin can log in, and
// serves until ctx ends, then shuts down gracefully.
func runServe(ctx context.Context, args []string, stdout, stderr io.Writer, hooks *testHooks) error {
	cfg, err := parseServe(args, stderr)
	if err != nil {
		return err
	}
	log := newLogger(cfg.logFormat, stderr)
	stopTracing, err := startTracing(ctx, log)
	if err != nil {
		return err
	}
	defer stopTracing()
	if cfg.gcPercent > 0 {
		debug.SetGCPercent(cfg.gcPercent)
	}
	if cfg.memoryLimit > 0 {
		debug.SetMemoryLimit(cfg.memoryLimit)
	}
	db, err := store.Open(ctx, cfg.database, cfg.storeOptions(cfg.dbMaxConns)...)
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
	wsConfig := server.WebsocketConfig{AllowedOrigins: cfg.allowedOrigins,
		MaxConnectionsPerUser: cfg.maxWSConnsPerUser, MaxSubscriptionsPerUser: cfg.maxWSOpsPerUser}
	if hooks != nil {
		eventOpts = hooks.events
		eventOpts.Logger = log
		flags := wsConfig
		wsConfig = hooks.websocket
		wsConfig.AllowedOrigins = append(wsConfig.AllowedOrigins, flags.AllowedOrigins...)
		if wsConfig.MaxConnectionsPerUser == 0 {
			wsConfig.MaxConnectionsPerUser = flags.MaxConnectionsPerUser
		}
		if wsConfig.MaxSubscriptionsPerUser == 0 {
			wsConfig.MaxSubscriptionsPerUser = flags.MaxSubscriptionsPerUser
		}
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
	rules := validation.NewEngine()
	opts.Gate = validation.NewGate(rules)
	svc := service.New(db, opts)
	val := validation.New(db, app.NewRunner(db, broker), svc, rules, validation.Options{})
	cat := catalog.New(db, app.NewRunner(db, broker), catalog.Options{LoggerFrom: server.LoggerFrom,
		DataDir: cfg.dataDir, MaxUploadBytes: cfg.maxUploadBytes})
	rsn := reasoning.New(db, app.NewRunner(db, broker), reasoning.Options{})
	grpOpts := grouping.Options{Logger: log, HeartbeatInterval: cfg.heartbeatInterval, MissedHeartbeats: cfg.missedHeartbeats}
	grp := grouping.New(db, app.NewRunner(db, broker), svc, grpOpts)
	// The background grouping works on a pool of its own, so that its
	// statements never count in a request's (db.Statements()); one
	// transaction at a time needs two connections at most.
	bgDB, err := store.Open(ctx, cfg.database, cfg.storeOptions(2)...)
	if err != nil {
		return err
	}
	defer bgDB.Close()
	grpBackground := grouping.New(bgDB, app.NewRunner(bgDB, broker), svc, grpOpts)
	qs := questions.New(db, app.NewRunner(db, broker), svc, questions.Options{Logger: log, SweepInterval: cfg.questionSweep, MinFailTaskDelay: cfg.questionFailDelay})
	var tg *telegram.Bot
	if cfg.telegramToken != "" {
		if tg, err = telegram.New(db, qs, telegram.Options{Token: cfg.telegramToken, APIURL: cfg.telegramAPIURL,
			WebhookSecret: cfg.telegramSecret, Logger: log}); err != nil {
			return err
		}
	}
	rt := routing.New(db, app.NewRunner(db, broker), routing.Options{})
	qu := queue.New(db, app.NewRunner(db, broker), queue.Options{SweepInterval: cfg.queueSweep, Logger: log})
	sess := sessions.New(db, app.NewRunner(db, broker), svc, sessions.Options{LoggerFrom: server.LoggerFrom})
	token, err := svc.Accounts.BootstrapAdmin(ctx, cfg.adminToken)
	if err != nil {
		return fmt.Errorf("bootstrap admin: %w", err)
	}
	if token != "" {
		fmt.Fprintf(stdout, "Created the admin user. Its API token, shown this once:\n\n    %s\n\n"+
			"Send it as the header  Authorization: Bearer <token>\n", token)
	}

	var webhook http.Handler
	if tg != nil && cfg.telegramSecret != "" {
		webhook = tg.WebhookHandler()
	}
	var verifier *sso.Verifier
	if cfg.oidcIssuer != "" {
		discoverCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
		verifier, err = sso.New(discoverCtx, sso.Config{Issuer: cfg.oidcIssuer, Audience: cfg.oidcAudience,
			ClientID: cfg.oidcClientID, RoleClaim: cfg.oidcRoleClaim, ClockSkew: cfg.oidcClockSkew})
		cancel()
		if err != nil {
			return err
		}
	}
	registry := prometheus.NewRegistry()
	registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if hooks != nil && hooks.onRegistry != nil {
		hooks.onRegistry(registry)
	}
	serverConfig := server.Config{
		Schema: graph.Schema(&graph.Resolver{Svc: svc, Catalog: cat, Rules: val, Reasoning: rsn, Grouping: grp,
			QuestionSvc: qs, Routing: rt, Queue: qu, Sessions: sess}),
		Authenticate: authenticator(svc.Accounts, verifier, log),
		SSO:          ssoInfo(verifier),
		TokensLive:   svc.Accounts.LiveTokens,
		RequestDone:  svc.Runs.ObserveRequest,
		Ready:        db.Ping,
		Logger:       log,
		Registry:     registry,
		DBStats:      db.SQL().Stats,
		OperationContext: func(ctx context.Context) context.Context {
			return app.WithLoaders(ctx, loaderTiming, graph.LeanReads(ctx))
		},
		TrackLevels: func(ctx context.Context) server.LevelTracker {
			if t := app.Track(ctx); t != nil {
				return t
			}
			return nil
		},
		ConcurrentFields:    graph.ConcurrentFields,
		SharedSubscriptions: graph.SharedSubscriptions{Svc: svc, Sessions: sess},
		Introspection:       !cfg.production,
		FieldSuggestions:    !cfg.production,
		Export:              export.Handler(cat, server.LoggerFrom),
		Telegram:            webhook,
		MCP: func(graphql http.Handler) http.Handler {
			return mcp.Handler(mcp.InProcess{Handler: graphql}, mcp.Options{Version: version(), Logger: log})
		},
		MaxUploadBytes:   cfg.maxUploadBytes,
		MaxResponseBytes: int(cfg.maxResponseBytes),
		BodyReadTimeout:  cfg.bodyReadTimeout,
		Websocket:        wsConfig,
		MetricsToken:     cfg.metricsToken,
		SeparateMetrics:  cfg.metricsAddr != "",
	}
	handler := server.New(serverConfig)
	if hooks != nil && hooks.wrapHandler != nil {
		handler = hooks.wrapHandler(handler)
	}
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Taskgraph on http://%s (playground at /, dashboard at /ui/, GraphQL at /graphql, database %s)\n", ln.Addr(), db.Dialect())
	// Metrics on a listen address of their own (an internal interface),
	// not on the public one.
	var metricsDone chan error
	if cfg.metricsAddr != "" {
		mln, err := net.Listen("tcp", cfg.metricsAddr)
		if err != nil {
			_ = ln.Close()
			return fmt.Errorf("--metrics-addr: %w", err)
		}
		fmt.Fprintf(stdout, "Metrics on http://%s/metrics\n", mln.Addr())
		if hooks != nil && hooks.onMetricsListen != nil {
			hooks.onMetricsListen(mln.Addr())
		}
		metricsDone = make(chan error, 1)
		go func() { metricsDone <- server.Serve(ctx, mln, server.MetricsHandler(serverConfig), log) }()
	}
	if hooks != nil && hooks.onListen != nil {
		hooks.onListen(ln.Addr(), db)
	}
	go svc.RunScoreRefresher(ctx, time.Minute)
	go svc.Runs.RunHeartbeatSweep(ctx)
	go svc.Runs.RunScheduleSweep(ctx, cfg.scheduleSweep)
	bgDone := make(chan struct{})
	go func() {
		defer close(bgDone)
		if hooks == nil || !hooks.noGroupingBackground {
			grpBackground.RunBackground(ctx)
		}
	}()
	defer func() { <-bgDone }() // before bgDB closes
	go qs.RunExpirySweep(ctx)
	if tg != nil {
		go tg.Run(ctx)
	}
	go qu.RunSweep(ctx)
	err = server.Serve(ctx, ln, handler, log)
	if metricsDone != nil {
		if merr := <-metricsDone; err == nil && merr != nil {
			err = fmt.Errorf("metrics: %w", merr)
		}
	}
	return err
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
