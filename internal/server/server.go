// Package server is Taskgraph's http.Handler: the GraphQL endpoint with its
// transports, authentication, request limits (body size, depth, complexity,
// parser tokens) and error presenter, plus the playground, health probes and
// Prometheus metrics. Serve runs a handler with graceful shutdown.
//
// Everything a request passes through, outermost first:
//
//	observe (request id, logger, panic recovery, access log, HTTP metrics)
//	  CORS (origins of --allowed-origins: preflights answered 204, Allow-Origin added; cors.go)
//	  bodyDeadline (requests with a body: BodyReadTimeout to send it)
//	  mux: POST /graphql -> authenticate -> body limit (multipart: upload checks) -> error codes
//	         and GraphQL-over-HTTP statuses -> parameter types -> gqlgen
//	       GET /graphql -> body limit -> authenticate -> error codes, statuses -> parameters -> gqlgen
//	       (GET with Upgrade: origin check -> websocket, auth on connection_init)
//	       GET /export/examples.jsonl -> authenticate -> Config.Export
//	       POST /telegram/webhook -> body limit -> Config.Telegram (secret-token header)
//	       POST /mcp -> authenticate (401 without a valid token) -> Config.MCP, whose tools run
//	         their operations through POST /graphql's chain above, in process
//	       GET / (playground), /ui/ (dashboard), /ui/sso.json (its sign-in set-up), /healthz, /readyz,
//	       /metrics (unless SeparateMetrics; behind MetricsToken when set)
//
// and inside gqlgen, in this order: metrics, authentication check, introspection
// switch, persisted queries, document size limits (before parsing and
// validation), depth and selection-size limit, input checks (Int range, NUL
// characters), complexity limit.
package server

import (
	"context"
	"crypto/subtle"
	"database/sql"
	"log/slog"
	"net/http"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/taskgraph/taskgraph/internal/auth"
	"github.com/taskgraph/taskgraph/internal/ui"
)

// Defaults for the zero values of Config's limits.
const (
	DefaultMaxBodyBytes int64 = 1 << 20
	// DefaultMaxDepth is 15, not 12: the introspection query GraphiQL sends
	// (graphql-js getIntrospectionQuery, 9 nested ofType levels) reaches depth 15
	// through __schema.types.fields.args.type; gqlgen's own copy reaches 13.
	DefaultMaxDepth      = 15
	DefaultMaxComplexity = 50000
	// DefaultMaxResponseBytes bounds the data of one response (or of one
	// event of a subscription).
	DefaultMaxResponseBytes = 16 << 20
	DefaultParserTokenLimit = 15000
)

// Config configures New. Schema is required; everything else has a usable zero value.
type Config struct {
	Schema graphql.ExecutableSchema // gqlgen generated schema

	// Authenticate resolves a bearer token. It returns (nil, nil) for an unknown
	// token and an error only when it cannot decide (database down). Nil: no
	// token authenticates.
	Authenticate func(ctx context.Context, token string) (*auth.Principal, error)
	// TokensLive reports which of the given API token ids still authenticate
	// (not revoked, user not deleted); open websockets are checked with it.
	// Nil: websockets keep the token they opened with.
	TokensLive func(ctx context.Context, tokenIDs []string) (map[string]bool, error)
	// Ready is the readiness probe (database ping). Nil: always ready.
	Ready  func(ctx context.Context) error
	Logger *slog.Logger // nil: slog.Default()
	// Registry receives the server's collectors and is what /metrics serves.
	// Nil: a private registry.
	Registry *prometheus.Registry
	// MetricsToken, when set, is the bearer token GET /metrics requires.
	MetricsToken string
	// SeparateMetrics leaves /metrics out of New's handler: the caller
	// serves MetricsHandler on a listen address of its own.
	SeparateMetrics bool
	// MaxOperationLabels bounds the distinct operation names of the GraphQL
	// metrics; default DefaultMaxOperationLabels.
	MaxOperationLabels int
	// DBStats, when set, is exported as connection pool metrics.
	DBStats func() sql.DBStats
	// OperationContext, when set, prepares the context of every GraphQL
	// operation (per-operation dataloaders).
	OperationContext func(ctx context.Context) context.Context
	// TrackLevels, given a query's or mutation's context (prepared by
	// OperationContext), returns the tracker of its loaders (nil: none), so
	// that its batches close level by level as each level completes, with
	// ConcurrentFields ("Type.field"): the fields the generated executor
	// resolves in goroutines of their own (graph.ConcurrentFields). Either
	// nil: batches close on their idle window.
	TrackLevels      func(ctx context.Context) LevelTracker
	ConcurrentFields map[string]bool

	Introspection    bool // false in production
	FieldSuggestions bool // "Did you mean …" in validation errors; false in production

	// Export, when set, serves GET /export/examples.jsonl to authenticated
	// callers (the handler maps its own errors; see internal/export).
	Export http.Handler
	// Telegram, when set, serves POST /telegram/webhook: updates from the
	// Bot API, authenticated by their secret-token header (the handler's
	// own check), not by a bearer token.
	Telegram http.Handler
	// MCP, when set, builds the handler of /mcp (the Model Context Protocol's
	// Streamable HTTP transport) from this server's GraphQL endpoint: POST
	// /graphql as it stands behind the access log — authentication, limits,
	// error codes — for the tools to run their operations in process. /mcp
	// itself is served to authenticated callers only (401 otherwise).
	MCP func(graphql http.Handler) http.Handler
	// SSO, when set, is served to the dashboard at GET /ui/sso.json so that
	// it offers "Sign in with …" (sso.go).
	SSO *SSOInfo
	// Websocket configures subscriptions' transport.
	Websocket WebsocketConfig
	// RequestDone, when set, is told how long each GraphQL request over
	// HTTP took, from its arrival to its answer's last byte (websockets
	// excluded): the heartbeat sweep forgives agents the server's own
	// slowness (service.Runs.ObserveRequest).
	RequestDone func(time.Duration)
	// SharedSubscriptions, when set, lets the subscribers of the same
	// selection, variables and visibility share one execution of a stream
	// that starts from now on (multiplex.go). Nil: each runs its own.
	SharedSubscriptions SharedSubscriptions

	MaxBodyBytes int64 // default DefaultMaxBodyBytes
	// MaxUploadBytes bounds the files of a multipart (upload) request, which
	// MaxBodyBytes does not; default DefaultMaxUploadBytes.
	MaxUploadBytes int64
	MaxDepth       int // default DefaultMaxDepth
	MaxComplexity  int // default DefaultMaxComplexity; list fields multiply by first/last
	// MaxResponseBytes bounds the JSON data of one response: a larger one is
	// answered LIMIT_EXCEEDED instead. Default DefaultMaxResponseBytes.
	MaxResponseBytes int
	ParserTokenLimit int // default DefaultParserTokenLimit
	// MaxSelections bounds the selections (fields, fragment spreads, inline
	// fragments) written in one document, MaxSelectionSetSize those of one
	// selection set; both are checked before validation, whose cost grows
	// with the square of same-named fields. Defaults DefaultMaxSelections and
	// DefaultMaxSelectionSetSize.
	MaxSelections       int
	MaxSelectionSetSize int
	// BodyReadTimeout bounds the time a client takes to send a request body
	// (multipart uploads get a second more per 64 KiB); default
	// DefaultBodyReadTimeout.
	BodyReadTimeout time.Duration
}

func (c Config) withDefaults() Config {
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Registry == nil {
		c.Registry = prometheus.NewRegistry()
	}
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if c.MaxUploadBytes <= 0 {
		c.MaxUploadBytes = DefaultMaxUploadBytes
	}
	if c.MaxDepth <= 0 {
		c.MaxDepth = DefaultMaxDepth
	}
	if c.MaxResponseBytes <= 0 {
		c.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if c.MaxComplexity <= 0 {
		c.MaxComplexity = DefaultMaxComplexity
	}
	if c.ParserTokenLimit <= 0 {
		c.ParserTokenLimit = DefaultParserTokenLimit
	}
	if c.MaxOperationLabels <= 0 {
		c.MaxOperationLabels = DefaultMaxOperationLabels
	}
	if c.MaxSelections <= 0 {
		c.MaxSelections = DefaultMaxSelections
	}
	if c.MaxSelectionSetSize <= 0 {
		c.MaxSelectionSetSize = DefaultMaxSelectionSetSize
	}
	if c.BodyReadTimeout <= 0 {
		c.BodyReadTimeout = DefaultBodyReadTimeout
	}
	c.Websocket = c.Websocket.withDefaults()
	return c
}

// server holds what the handlers share; one per New.
type server struct {
	cfg     Config
	log     *slog.Logger
	metrics *metrics
	sockets *sockets // open websockets under the revocation watch
	// wsQuotas counts each principal's websockets and their operations.
	wsQuotas *wsQuotas
	mux      *multiplexer
}

// Route labels: the path label of taskgraph_http_requests_total. Unmatched
// requests are counted as "other" so that scanners cannot grow the label set.
const (
	routeGraphQL    = "/graphql"
	routePlayground = "/"
	routeDashboard  = "/ui/"
	routeHealthz    = "/healthz"
	routeReadyz     = "/readyz"
	routeMetrics    = "/metrics"
	routeExport     = "/export/examples.jsonl"
	routeTelegram   = "/telegram/webhook"
	routeMCP        = "/mcp"
	routeOther      = "other"
)

// New returns the server's http.Handler. It registers the server's metrics on
// cfg.Registry and panics when cfg.Schema is nil (a programming error).
func New(cfg Config) http.Handler {
	if cfg.Schema == nil {
		panic("server: Config.Schema is nil")
	}
	cfg = cfg.withDefaults()
	s := &server{
		cfg:     cfg,
		log:     cfg.Logger,
		metrics: newMetrics(cfg.Registry, cfg.DBStats),
	}
	s.metrics.operations.max = cfg.MaxOperationLabels
	s.sockets = newSockets(cfg.TokensLive, cfg.Websocket.TokenCheckInterval, cfg.Logger)
	s.wsQuotas = newWSQuotas(cfg.Websocket.MaxConnectionsPerUser, cfg.Websocket.MaxSubscriptionsPerUser)
	s.mux = newMultiplexer(cfg.SharedSubscriptions, cfg.Websocket.SharedQueue, s.metrics)

	gql := s.graphQLHandler()

	mux := http.NewServeMux()
	// POST carries queries, mutations and multipart uploads, which
	// limitRequest checks apart; authentication comes first so that an
	// anonymous upload is refused before its body is read. GET carries
	// queries and the websocket Upgrade handshake (subscriptions).
	postGraphQL := s.authenticate(s.limitRequest(withErrorCodes(checkParams(gql))))
	mux.Handle("POST /graphql", s.route(routeGraphQL, postGraphQL))
	mux.Handle("GET /graphql", s.route(routeGraphQL, s.limitBody(s.authenticate(withErrorCodes(checkParams(gql))))))
	if cfg.Export != nil {
		mux.Handle("GET /export/examples.jsonl", s.route(routeExport, s.authenticate(s.requirePrincipal(cfg.Export))))
	}
	if cfg.MCP != nil {
		// The transport's own body limit applies (its messages carry whole
		// log batches and session states); GET and DELETE answer 405 in
		// its stateless mode.
		mcp := s.route(routeMCP, s.authenticate(s.requirePrincipal(cfg.MCP(postGraphQL))))
		mux.Handle("POST /mcp", mcp)
		mux.Handle("GET /mcp", mcp)
		mux.Handle("DELETE /mcp", mcp)
	}
	if cfg.Telegram != nil {
		mux.Handle("POST /telegram/webhook", s.route(routeTelegram, s.limitBody(cfg.Telegram)))
	}
	page, assets := playgroundHandler()
	mux.Handle("GET /{$}", s.route(routePlayground, page))
	mux.Handle("GET /playground/", s.route(routePlayground, assets))
	mux.Handle("GET /ui/sso.json", s.route(routeDashboard, ssoConfig(cfg.SSO)))
	mux.Handle("GET /ui/", s.route(routeDashboard, ui.Handler("/ui/", cfg.SSO.connectOrigins()...)))
	mux.Handle("GET /ui", s.route(routeDashboard, http.RedirectHandler("/ui/", http.StatusMovedPermanently)))
	mux.Handle("GET /healthz", s.route(routeHealthz, http.HandlerFunc(healthz)))
	mux.Handle("GET /readyz", s.route(routeReadyz, s.readyz()))
	if !cfg.SeparateMetrics {
		mux.Handle("GET /metrics", s.route(routeMetrics, metricsHandler(cfg)))
	}

	return s.observe(s.withCORS(s.bodyDeadline(mux)))
}

// MetricsHandler serves cfg.Registry's metrics at GET /metrics, behind
// cfg.MetricsToken when it is set: for a listen address of its own
// (Config.SeparateMetrics). cfg.Registry must be the registry given to New.
func MetricsHandler(cfg Config) http.Handler {
	if cfg.Registry == nil {
		panic("server: MetricsHandler needs Config.Registry")
	}
	cfg = cfg.withDefaults()
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", metricsHandler(cfg))
	return mux
}

// metricsHandler is promhttp's handler, behind the metrics token when set.
func metricsHandler(cfg Config) http.Handler {
	h := promhttp.HandlerFor(cfg.Registry, promhttp.HandlerOpts{ErrorLog: slog.NewLogLogger(cfg.Logger.Handler(), slog.LevelError)})
	if cfg.MetricsToken == "" {
		return h
	}
	want := []byte(cfg.MetricsToken)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := []byte(auth.BearerToken(r.Header.Get("Authorization")))
		if subtle.ConstantTimeCompare(got, want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="taskgraph metrics"`)
			http.Error(w, "metrics need Authorization: Bearer <the metrics token>", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// route names the request's route for metrics and the access log.
func (s *server) route(label string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if info := requestInfoFrom(r.Context()); info != nil {
			info.setRoute(label)
		}
		h.ServeHTTP(w, r)
	})
}
