package main

import (
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/server"
	"github.com/taskgraph/taskgraph/internal/store"
	"github.com/taskgraph/taskgraph/internal/telegram"
)

// serveConfig holds the serve flags; each has an environment variable.
type serveConfig struct {
	addr              string
	database          string
	adminToken        string
	heartbeatInterval time.Duration
	scheduleSweep     time.Duration
	missedHeartbeats  int
	maxAttempts       int
	queueSweep        time.Duration // period of the function queue's lease-expiry sweep
	production        bool
	logFormat         string
	dataDir           string
	maxUploadBytes    int64
	maxResponseBytes  int64
	allowedOrigins    []string
	maxWSConnsPerUser int // websockets one token or user may hold open on this replica
	maxWSOpsPerUser   int // operations one token or user may run on them
	oidcIssuer        string
	oidcAudience      string
	oidcClientID      string
	oidcRoleClaim     string
	oidcClockSkew     time.Duration
	questionSweep     time.Duration
	questionFailDelay time.Duration
	telegramToken     string
	telegramAPIURL    string
	telegramSecret    string
	bodyReadTimeout   time.Duration
	metricsAddr       string
	metricsToken      string
	gcPercent         int   // -1: leave the Go runtime's (GOGC) setting
	memoryLimit       int64 // 0: none beyond the runtime's (GOMEMLIMIT)
	dbMaxConns        int
	dbPooler          store.Pooler // what --database reaches: PostgreSQL itself, or a transaction-mode pooler
	listenDatabase    string       // the direct URL of LISTEN (and, behind a pooler, leader locks and migrations)
}

// defaultGCPercent: the garbage collector runs when the heap has grown by 4×
// its live size instead of Go's 2× (GOGC=100). A request allocates much and
// keeps little, so collecting a quarter as often saves most of the GC's CPU
// for a few tens of MiB more heap; the nested-read benchmark measured it.
const defaultGCPercent = 400

const defaultDatabase = "sqlite:data/taskgraph.db"

// databaseFlag registers --database on fs.
func databaseFlag(fs *flag.FlagSet) *string {
	return fs.String("database", envOr("TASKGRAPH_DATABASE_URL", defaultDatabase),
		"database URL: sqlite:<path> or postgres://… (env TASKGRAPH_DATABASE_URL)")
}

func parseServe(args []string, stderr io.Writer) (serveConfig, error) {
	var c serveConfig
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.addr, "addr", envOr("TASKGRAPH_ADDR", "127.0.0.1:8080"), "listen address (env TASKGRAPH_ADDR)")
	db := databaseFlag(fs)
	fs.IntVar(&c.dbMaxConns, "db-max-conns", envInt("TASKGRAPH_DB_MAX_CONNS", store.DefaultMaxConns),
		"PostgreSQL connections of the server's pool, about a few per core of PostgreSQL (env TASKGRAPH_DB_MAX_CONNS)")
	pooler := fs.String("db-pooler", envOr("TASKGRAPH_DB_POOLER", string(store.PoolerNone)),
		"what --database reaches: none (PostgreSQL itself) or transaction (a transaction-mode pooler such as PgBouncer: no prepared statements or session state; needs --listen-database) (env TASKGRAPH_DB_POOLER)")
	fs.StringVar(&c.listenDatabase, "listen-database", os.Getenv("TASKGRAPH_LISTEN_DATABASE"),
		"direct PostgreSQL URL of the event listener (LISTEN) and, with --db-pooler transaction, of leader locks and migrations; default --database (env TASKGRAPH_LISTEN_DATABASE)")
	secretFlag(fs, &c.adminToken, "admin-token", "TASKGRAPH_ADMIN_TOKEN",
		"token that authenticates as the bootstrap admin")
	fs.DurationVar(&c.heartbeatInterval, "heartbeat-interval", envDuration("TASKGRAPH_HEARTBEAT_INTERVAL", 10*time.Second),
		"expected period of agent heartbeats (env TASKGRAPH_HEARTBEAT_INTERVAL)")
	fs.IntVar(&c.missedHeartbeats, "missed-heartbeats", envInt("TASKGRAPH_MISSED_HEARTBEATS", 3),
		"an agent is dead after this many intervals without a heartbeat (env TASKGRAPH_MISSED_HEARTBEATS)")
	fs.DurationVar(&c.scheduleSweep, "schedule-sweep-interval", envDuration("TASKGRAPH_SCHEDULE_SWEEP_INTERVAL", 15*time.Second),
		"period of the sweep that starts task lists' scheduled runs (runSchedule) (env TASKGRAPH_SCHEDULE_SWEEP_INTERVAL)")
	fs.DurationVar(&c.queueSweep, "queue-sweep-interval", envDuration("TASKGRAPH_QUEUE_SWEEP_INTERVAL", time.Second),
		"period of the function queue's lease-expiry sweep (env TASKGRAPH_QUEUE_SWEEP_INTERVAL)")
	fs.IntVar(&c.maxAttempts, "max-attempts", envInt("TASKGRAPH_MAX_ATTEMPTS", 3),
		"attempts per task per run (env TASKGRAPH_MAX_ATTEMPTS)")
	fs.BoolVar(&c.production, "production", envBool("TASKGRAPH_PRODUCTION"),
		"turn off introspection and field suggestions (env TASKGRAPH_PRODUCTION)")
	fs.StringVar(&c.logFormat, "log-format", envOr("TASKGRAPH_LOG_FORMAT", "auto"),
		"log format: auto (text on a terminal, else JSON), text or json (env TASKGRAPH_LOG_FORMAT)")
	fs.StringVar(&c.dataDir, "data-dir", envOr("TASKGRAPH_DATA_DIR", "data"),
		"directory of uploaded traces and examples (env TASKGRAPH_DATA_DIR)")
	maxUpload := fs.String("max-upload-size", envOr("TASKGRAPH_MAX_UPLOAD_SIZE", "100MiB"),
		"largest uploaded file, e.g. 100MiB, 2GB or 1048576 bytes (env TASKGRAPH_MAX_UPLOAD_SIZE)")
	maxResponse := fs.String("max-response-size", envOr("TASKGRAPH_MAX_RESPONSE_SIZE", "16MiB"),
		"largest JSON data of one response or subscription event; larger ones answer LIMIT_EXCEEDED, and a query stops (LIMIT_EXCEEDED) once it has read twice this from the database (env TASKGRAPH_MAX_RESPONSE_SIZE)")
	origins := fs.String("allowed-origins", os.Getenv("TASKGRAPH_ALLOWED_ORIGINS"),
		"comma-separated origins (https://app.example.com) whose pages may call /graphql (CORS) and open websockets besides the server's own; * allows any (env TASKGRAPH_ALLOWED_ORIGINS)")
	fs.IntVar(&c.maxWSConnsPerUser, "max-ws-connections-per-user", envInt("TASKGRAPH_MAX_WS_CONNECTIONS_PER_USER", server.DefaultMaxConnectionsPerUser),
		"websockets one API token or OpenID Connect user may hold open on this server (replica); one more is closed with 4429 (env TASKGRAPH_MAX_WS_CONNECTIONS_PER_USER)")
	fs.IntVar(&c.maxWSOpsPerUser, "max-subscriptions-per-user", envInt("TASKGRAPH_MAX_SUBSCRIPTIONS_PER_USER", server.DefaultMaxSubscriptionsPerUser),
		"subscriptions (operations running on websockets) one API token or OpenID Connect user may have at once on this server (replica), over all its websockets; one more is answered LIMIT_EXCEEDED (env TASKGRAPH_MAX_SUBSCRIPTIONS_PER_USER)")
	fs.StringVar(&c.oidcIssuer, "oidc-issuer", os.Getenv("TASKGRAPH_OIDC_ISSUER"),
		"OpenID Connect issuer URL: accept its JWTs as bearer tokens (discovery and JWKS fetched from it) (env TASKGRAPH_OIDC_ISSUER)")
	fs.StringVar(&c.oidcAudience, "oidc-audience", os.Getenv("TASKGRAPH_OIDC_AUDIENCE"),
		"the aud a JWT must carry; default --oidc-client-id (env TASKGRAPH_OIDC_AUDIENCE)")
	fs.StringVar(&c.oidcClientID, "oidc-client-id", os.Getenv("TASKGRAPH_OIDC_CLIENT_ID"),
		"the dashboard's public OpenID Connect client (authorization code + PKCE): offers \"Sign in with\" (env TASKGRAPH_OIDC_CLIENT_ID)")
	fs.StringVar(&c.oidcRoleClaim, "oidc-role-claim", os.Getenv("TASKGRAPH_OIDC_ROLE_CLAIM"),
		"JWT claim whose value (ADMIN or MEMBER, or a list holding them) is the user's role; default: every JWT user is MEMBER (env TASKGRAPH_OIDC_ROLE_CLAIM)")
	fs.DurationVar(&c.oidcClockSkew, "oidc-clock-skew", envDuration("TASKGRAPH_OIDC_CLOCK_SKEW", 30*time.Second),
		"clock difference allowed with the OpenID provider when checking a JWT's expiry (env TASKGRAPH_OIDC_CLOCK_SKEW)")
	fs.DurationVar(&c.questionSweep, "question-sweep-interval", envDuration("TASKGRAPH_QUESTION_SWEEP_INTERVAL", time.Second),
		"how often expired questions are looked for (env TASKGRAPH_QUESTION_SWEEP_INTERVAL)")
	fs.DurationVar(&c.questionFailDelay, "question-min-fail-delay", envDuration("TASKGRAPH_QUESTION_MIN_FAIL_DELAY", domain.DefaultMinFailTaskDelay),
		"least time people get to answer a question whose timeout fails its task: a FAIL_TASK expiresAt nearer is refused (env TASKGRAPH_QUESTION_MIN_FAIL_DELAY)")
	secretFlag(fs, &c.telegramToken, "telegram-bot-token", "TASKGRAPH_TELEGRAM_BOT_TOKEN",
		"Telegram bot token: send questions to Telegram chats")
	fs.StringVar(&c.telegramAPIURL, "telegram-api-url", envOr("TASKGRAPH_TELEGRAM_API_URL", telegram.DefaultAPIURL),
		"Telegram Bot API base URL (env TASKGRAPH_TELEGRAM_API_URL)")
	secretFlag(fs, &c.telegramSecret, "telegram-webhook-secret", "TASKGRAPH_TELEGRAM_WEBHOOK_SECRET",
		"take Telegram updates at POST /telegram/webhook with this secret-token header instead of long polling")
	fs.DurationVar(&c.bodyReadTimeout, "body-read-timeout", envDuration("TASKGRAPH_BODY_READ_TIMEOUT", 30*time.Second),
		"time a client has to send a request body; uploads get 1s more per 64KiB (env TASKGRAPH_BODY_READ_TIMEOUT)")
	fs.StringVar(&c.metricsAddr, "metrics-addr", os.Getenv("TASKGRAPH_METRICS_ADDR"),
		"serve /metrics on this listen address (e.g. 127.0.0.1:9090) instead of --addr (env TASKGRAPH_METRICS_ADDR)")
	secretFlag(fs, &c.metricsToken, "metrics-token", "TASKGRAPH_METRICS_TOKEN",
		"bearer token /metrics requires")
	gcDefault := defaultGCPercent
	if _, ok := os.LookupEnv("GOGC"); ok {
		gcDefault = -1
	}
	fs.IntVar(&c.gcPercent, "gc-percent", envInt("TASKGRAPH_GC_PERCENT", gcDefault),
		"heap growth, in percent of the live heap, that starts a garbage collection; -1 keeps GOGC's (env TASKGRAPH_GC_PERCENT; default 400 unless GOGC is set)")
	memLimit := fs.String("memory-limit", os.Getenv("TASKGRAPH_MEMORY_LIMIT"),
		"soft limit of the Go heap, e.g. 2GiB: the collector runs more often near it (env TASKGRAPH_MEMORY_LIMIT; default none, or GOMEMLIMIT)")
	if err := parseFlags(fs, args); err != nil {
		return c, err
	}
	c.database = *db
	if err := c.parsePooler(*pooler); err != nil {
		return c, err
	}
	if *memLimit != "" {
		var err error
		if c.memoryLimit, err = parseSize(*memLimit); err != nil {
			return c, fmt.Errorf("--memory-limit: %w", err)
		}
	}
	var err error
	if c.maxUploadBytes, err = parseSize(*maxUpload); err != nil {
		return c, fmt.Errorf("--max-upload-size: %w", err)
	}
	if c.maxResponseBytes, err = parseSize(*maxResponse); err != nil {
		return c, fmt.Errorf("--max-response-size: %w", err)
	}
	for _, o := range strings.Split(*origins, ",") {
		if o = strings.TrimSpace(o); o == "" {
			continue
		}
		if o != "*" {
			u, err := url.Parse(o)
			if err != nil || u.Scheme == "" || u.Host == "" || (u.Path != "" && u.Path != "/") {
				return c, fmt.Errorf("--allowed-origins: %q is not an origin like https://app.example.com", o)
			}
		}
		c.allowedOrigins = append(c.allowedOrigins, strings.TrimSuffix(o, "/"))
	}
	switch {
	case c.oidcIssuer == "" && (c.oidcAudience != "" || c.oidcClientID != "" || c.oidcRoleClaim != ""):
		return c, fmt.Errorf("--oidc-audience, --oidc-client-id and --oidc-role-claim need --oidc-issuer")
	case c.oidcIssuer != "" && c.oidcAudience == "" && c.oidcClientID == "":
		return c, fmt.Errorf("--oidc-issuer needs --oidc-audience or --oidc-client-id (the aud its JWTs carry)")
	case c.oidcClockSkew < 0 || c.oidcClockSkew > 10*time.Minute:
		return c, fmt.Errorf("--oidc-clock-skew must be between 0 and 10m")
	}
	if c.oidcIssuer != "" {
		if u, err := url.Parse(c.oidcIssuer); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return c, fmt.Errorf("--oidc-issuer: %q is not an issuer URL like https://id.example.com/realms/main", c.oidcIssuer)
		}
	}
	switch {
	case c.heartbeatInterval <= 0:
		return c, fmt.Errorf("--heartbeat-interval must be positive")
	case c.questionFailDelay <= 0:
		return c, fmt.Errorf("--question-min-fail-delay must be positive")
	case c.questionSweep <= 0:
		return c, fmt.Errorf("--question-sweep-interval must be positive")
	case c.missedHeartbeats < 1:
		return c, fmt.Errorf("--missed-heartbeats must be at least 1")
	case c.scheduleSweep <= 0:
		return c, fmt.Errorf("--schedule-sweep-interval must be positive")
	case c.queueSweep <= 0:
		return c, fmt.Errorf("--queue-sweep-interval must be positive")
	case c.maxWSConnsPerUser < 1 || c.maxWSConnsPerUser > 100000:
		return c, fmt.Errorf("--max-ws-connections-per-user must be between 1 and 100000")
	case c.maxWSOpsPerUser < 1 || c.maxWSOpsPerUser > 1000000:
		return c, fmt.Errorf("--max-subscriptions-per-user must be between 1 and 1000000")
	case c.maxAttempts < 1:
		return c, fmt.Errorf("--max-attempts must be at least 1")
	case c.dbMaxConns < 1 || c.dbMaxConns > 1000:
		return c, fmt.Errorf("--db-max-conns must be between 1 and 1000")
	case c.logFormat != "auto" && c.logFormat != "text" && c.logFormat != "json":
		return c, fmt.Errorf("--log-format must be auto, text or json")
	case c.bodyReadTimeout <= 0:
		return c, fmt.Errorf("--body-read-timeout must be positive")
	case c.dataDir == "":
		return c, fmt.Errorf("--data-dir must not be empty")
	case c.gcPercent < -1 || c.gcPercent == 0:
		return c, fmt.Errorf("--gc-percent must be -1 or positive")
	}
	return c, nil
}

// parsePooler reads --db-pooler and checks --listen-database against it.
func (c *serveConfig) parsePooler(pooler string) error {
	p, err := store.ParsePooler(pooler)
	if err != nil {
		return fmt.Errorf("--db-pooler: %w", err)
	}
	c.dbPooler = p
	isPostgres := strings.HasPrefix(c.database, "postgres://") || strings.HasPrefix(c.database, "postgresql://")
	if c.listenDatabase != "" && !strings.HasPrefix(c.listenDatabase, "postgres://") && !strings.HasPrefix(c.listenDatabase, "postgresql://") {
		return fmt.Errorf("--listen-database: want a postgres:// URL")
	}
	if p != store.PoolerTransaction {
		return nil
	}
	switch {
	case !isPostgres:
		return fmt.Errorf("--db-pooler transaction: --database must be a postgres:// URL (the pooler's)")
	case c.listenDatabase == "" || c.listenDatabase == c.database:
		// LISTEN, a leader lock and the migrations' lock live in a session,
		// which a transaction-mode pooler hands to other clients.
		return fmt.Errorf("--db-pooler transaction needs --listen-database: a direct PostgreSQL URL (not the pooler's) for LISTEN, leader locks and migrations")
	}
	return nil
}

// storeOptions are the options of the server's connections to the database.
func (c *serveConfig) storeOptions(maxConns int) []store.Option {
	return []store.Option{store.MaxConns(maxConns), store.WithPooler(c.dbPooler), store.DirectURL(c.listenDatabase)}
}

func envOr(key, def string) string {
	if v, ok := os.LookupEnv(key); ok && v != "" {
		return v
	}
	return def
}

func envInt(key string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(key)); err == nil {
		return n
	}
	return def
}

func envDuration(key string, def time.Duration) time.Duration {
	if d, err := time.ParseDuration(os.Getenv(key)); err == nil {
		return d
	}
	return def
}

func envBool(key string) bool {
	b, _ := strconv.ParseBool(os.Getenv(key))
	return b
}

// sizeUnits are the suffixes parseSize knows, longest first.
var sizeUnits = []struct {
	suffix string
	n      int64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9},
	{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"B", 1},
}

// parseSize reads a positive byte count: "1048576", "512KiB", "100MiB", "2GB".
func parseSize(s string) (int64, error) {
	s = strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range sizeUnits {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSpace(strings.TrimSuffix(s, u.suffix)), u.n
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("%q is not a positive size such as 100MiB", s)
	}
	return n * mult, nil
}
