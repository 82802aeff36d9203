// Command peer is make bench-peer: a side-by-side of Taskgraph, PostGraphile
// 4, PostGraphile 5 and a Go floor on one PostgreSQL database filled through
// Taskgraph's API. See README.md beside this file.
//
//	go run ./bench/peer [flags]        the whole comparison (from the repository root)
//	go run ./bench/peer floor [flags]  the floor server alone (the comparison starts it)
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	_ "github.com/lib/pq"
)

func main() {
	var err error
	if len(os.Args) > 1 && os.Args[1] == "floor" {
		err = runFloor(os.Args[2:])
	} else {
		err = run(os.Args[1:])
	}
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if errors.Is(err, context.Canceled) {
		err = errors.New("interrupted; the servers it started are stopped")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench-peer:", err)
		os.Exit(1)
	}
}

// config is the flags.
type config struct {
	pgURL       string
	database    string
	rounds      int
	duration    time.Duration
	warmup      time.Duration
	connections int
	size        seedSize
	page        int
	servers     []string
	scenarios   []string
	countStmts  bool
	workDir     string
	sub         subConfig
}

var allServers = []string{"taskgraph", "pg4", "pg5", "floor", "floorw"}

func parseFlags(args []string) (config, error) {
	var c config
	fs := flag.NewFlagSet("bench-peer", flag.ContinueOnError)
	fs.StringVar(&c.pgURL, "pg", envOr("TASKGRAPH_PEER_PG", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"),
		"URL of a PostgreSQL database to create the bench database from (env TASKGRAPH_PEER_PG)")
	fs.StringVar(&c.database, "database", envOr("TASKGRAPH_PEER_DATABASE", "taskgraph_peer"),
		"bench database: dropped and created by each run (env TASKGRAPH_PEER_DATABASE)")
	fs.IntVar(&c.rounds, "rounds", envInt("TASKGRAPH_PEER_ROUNDS", 3), "rounds of every server in turn (env TASKGRAPH_PEER_ROUNDS)")
	fs.DurationVar(&c.duration, "duration", envDuration("TASKGRAPH_PEER_DURATION", 10*time.Second),
		"length of one server's turn in a round (env TASKGRAPH_PEER_DURATION)")
	fs.DurationVar(&c.warmup, "warmup", envDuration("TASKGRAPH_PEER_WARMUP", 3*time.Second),
		"untimed load on each server before the rounds of each scenario (env TASKGRAPH_PEER_WARMUP)")
	fs.IntVar(&c.connections, "connections", envInt("TASKGRAPH_PEER_CONNECTIONS", 4), "concurrent connections (env TASKGRAPH_PEER_CONNECTIONS)")
	fs.IntVar(&c.size.tasks, "tasks", 1000, "tasks in the list")
	fs.IntVar(&c.size.relationships, "relationships", 2000, "relationships among them")
	fs.IntVar(&c.size.impactsPerTask, "impacts-per-task", 3, "file impacts per task")
	fs.IntVar(&c.page, "page", 100, "tasks the nested read asks for (first:)")
	servers := fs.String("servers", strings.Join(allServers, ","), "servers to time, in turn order (Taskgraph always fills the database)")
	scen := fs.String("scenarios", strings.Join(defaultScenarios, ","),
		"scenarios to run: the read shapes full, light, deep, wide (read: all four), write (createTask), subscribe")
	fs.IntVar(&c.sub.connections, "sub-connections", 100, "subscribe: websocket connections of Taskgraph's large run")
	fs.IntVar(&c.sub.perConn, "sub-per-connection", 100, "subscribe: subscriptions per connection (Taskgraph runs at most 100 operations on one)")
	fs.IntVar(&c.sub.peerSubscribers, "sub-peer-subscribers", 1000, "subscribe: subscriptions of the side-by-side runs of Taskgraph and PostGraphile 5")
	fs.Float64Var(&c.sub.rate, "sub-rate", 20, "subscribe: events committed per second")
	fs.DurationVar(&c.sub.duration, "sub-duration", 10*time.Second, "subscribe: how long events commit, per run")
	c.sub.tasks = 20
	fs.BoolVar(&c.countStmts, "count-statements", true,
		"put a counting proxy between each server and PostgreSQL to report SQL statements per request")
	fs.StringVar(&c.workDir, "workdir", "", "directory for binaries, logs and Taskgraph's data (default: a new temporary one, removed after a run that went well)")
	err := fs.Parse(args)
	if err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	c.servers = splitList(*servers)
	if c.scenarios, err = parseScenarios(*scen); err != nil {
		return c, err
	}
	switch {
	case c.rounds < 1 || c.duration <= 0 || c.warmup < 0 || c.connections < 1:
		return c, errors.New("-rounds, -duration and -connections must be positive, -warmup not negative")
	case c.size.tasks < 2 || c.size.impactsPerTask < 0 || c.size.relationships < 0 || c.page < 1:
		return c, errors.New("-tasks must be at least 2, -page at least 1, -relationships and -impacts-per-task not negative")
	case !regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`).MatchString(c.database):
		return c, fmt.Errorf("-database %q: use lower-case letters, digits and _", c.database)
	case c.sub.connections < 1 || c.sub.perConn < 1 || c.sub.perConn > 100 || c.sub.peerSubscribers < 1 ||
		c.sub.subscribers() > 1_000_000 || c.sub.peerSubscribers > 1_000_000 || c.sub.connections > 10_000 || c.sub.peerSubscribers/max(c.sub.perConn, 1) > 10_000 || c.sub.rate <= 0 || c.sub.rate > 1000 || c.sub.duration <= 0:
		return c, errors.New("-sub-connections, -sub-peer-subscribers, -sub-duration must be positive, -sub-per-connection 1..100, -sub-rate above 0 and at most 1000, at most 10,000 connections and 1,000,000 subscriptions")
	case c.database == "postgres" || c.database == "template0" || c.database == "template1":
		return c, fmt.Errorf("-database %q would drop a system database", c.database)
	}
	for _, s := range c.servers {
		if !slices.Contains(allServers, s) {
			return c, fmt.Errorf("-servers: unknown server %q (known: %s)", s, strings.Join(allServers, ", "))
		}
	}
	return c, nil
}

// defaultScenarios is every scenario.
var defaultScenarios = []string{"full", "light", "deep", "wide", "write", "subscribe"}

// parseScenarios reads -scenarios: names of scenarios, read standing for
// the four read shapes; they run in report order whatever the order given.
func parseScenarios(s string) ([]string, error) {
	asked := splitList(s)
	if len(asked) == 0 {
		return nil, errors.New("-scenarios: name at least one")
	}
	known := append(slices.Clone(defaultScenarios), "read")
	var out []string
	for _, a := range asked {
		if !slices.Contains(known, a) {
			return nil, fmt.Errorf("-scenarios: unknown scenario %q (known: %s)", a, strings.Join(known, ", "))
		}
	}
	for _, k := range defaultScenarios {
		_, isRead := shapeByKey(k)
		if slices.Contains(asked, k) || (isRead && slices.Contains(asked, "read")) {
			out = append(out, k)
		}
	}
	return out, nil
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
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

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench-peer: "+format+"\n", args...)
}

// run is the whole comparison.
func run(args []string) (err error) {
	if runtime.GOOS != "linux" {
		return errors.New("it reads CPU times from /proc: run it on Linux")
	}
	cfg, err := parseFlags(args)
	if err != nil {
		return err
	}
	root, err := repoRoot()
	if err != nil {
		return err
	}
	b := &bench{cfg: cfg, root: root, dir: filepath.Join(root, "bench", "peer")}
	if b.node, err = findNode(b.dir, cfg.servers); err != nil {
		return err
	}
	if b.admin, err = url.Parse(cfg.pgURL); err != nil || (b.admin.Scheme != "postgres" && b.admin.Scheme != "postgresql") {
		return fmt.Errorf("-pg %q is not a postgres:// URL", cfg.pgURL)
	}
	if b.cfg.workDir == "" {
		if b.cfg.workDir, err = os.MkdirTemp("", "bench-peer-"); err != nil {
			return err
		}
		// A temporary work directory goes after a run that went well; after a
		// failure it stays for its logs.
		defer func() {
			if err == nil {
				_ = os.RemoveAll(b.cfg.workDir)
			} else {
				logf("the servers' logs are in %s", b.cfg.workDir)
			}
		}()
	} else if err := os.MkdirAll(b.cfg.workDir, 0o755); err != nil {
		return err
	}
	logf("work directory (binaries, server logs): %s", b.cfg.workDir)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	defer b.close() // before the work directory goes
	pgVersion, err := recreateDatabase(ctx, cfg.pgURL, cfg.database)
	if err != nil {
		return err
	}

	tg, err := b.startTaskgraph(ctx)
	if err != nil {
		return err
	}
	targets := map[string]*target{"taskgraph": tg}
	for _, key := range cfg.servers {
		if key != "taskgraph" {
			if targets[key], err = b.startPeer(ctx, key); err != nil {
				return err
			}
		}
	}
	// The fill serves the reads and createTask; the subscription scenario
	// makes a project of its own.
	var facts *dbFacts
	if timed := slices.DeleteFunc(slices.Clone(cfg.scenarios), func(s string) bool { return s == "subscribe" }); len(timed) > 0 {
		logf("filling %s through Taskgraph's API: %d tasks, %d relationships, %d file impacts",
			cfg.database, cfg.size.tasks, cfg.size.relationships, cfg.size.tasks*cfg.size.impactsPerTask)
		seededData, err := seed(ctx, &gqlClient{url: tg.url, token: tg.token, http: &checkClient}, cfg.size, logf)
		if err != nil {
			return fmt.Errorf("filling through the API: %w", err)
		}
		if facts, err = analyze(ctx, b.dbURL(b.admin.Host)); err != nil {
			return err
		}
		logf("ANALYZE done: %s", facts)
		if err := prepareRequests(targets, seededData, facts, b.cfg); err != nil {
			return err
		}
	}
	order := make([]*target, 0, len(cfg.servers))
	for _, key := range cfg.servers {
		order = append(order, targets[key])
	}
	verified, err := verify(ctx, tg, order, b.cfg)
	if err != nil {
		return err
	}
	results, err := b.timeScenarios(ctx, order)
	if err != nil {
		return err
	}
	var subs []subResult
	if slices.Contains(cfg.scenarios, "subscribe") {
		if subs, err = b.runSubscriptions(ctx, tg, targets); err != nil {
			return fmt.Errorf("subscribe: %w", err)
		}
	}
	report(os.Stdout, reportInput{cfg: b.cfg, order: order, results: results, verified: verified,
		pgVersion: pgVersion, rows: facts, subs: subs})
	return nil
}

// checkClient is the client of the fill and the checks.
var checkClient = http.Client{Timeout: 120 * time.Second}

func bearer(token string) http.Header {
	return http.Header{"Authorization": {"Bearer " + token}}
}

func randomToken() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return "peer-" + hex.EncodeToString(b), nil
}

// repoRoot is the directory of Taskgraph's go.mod, found from the working
// directory up.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && strings.Contains(string(b), "module github.com/taskgraph/taskgraph\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("run it inside Taskgraph's repository (no go.mod of github.com/taskgraph/taskgraph above the working directory)")
		}
		dir = parent
	}
}
