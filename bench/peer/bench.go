package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"
)

// bench is one run of the comparison: its settings and what it started.
type bench struct {
	cfg   config
	root  string // the repository
	dir   string // bench/peer
	node  *nodeRuntime
	admin *url.URL // -pg

	procs   children
	proxies []*sqlProxy
	tgBuilt bool
	direct  bool           // servers started from now on connect to PostgreSQL without a counting proxy
	starts  map[string]int // servers started, by key: names the logs of the later ones
}

// logName is the log file of a server's next start: key.log, then
// key-2.log, …
func (b *bench) logName(key string) string {
	if b.starts == nil {
		b.starts = map[string]int{}
	}
	b.starts[key]++
	if n := b.starts[key]; n > 1 {
		return fmt.Sprintf("%s-%d", key, n)
	}
	return key
}

// close stops every server, then the proxies.
func (b *bench) close() {
	b.procs.stopAll()
	for _, p := range b.proxies {
		p.Close()
	}
}

// dbURL is the bench database's URL at hostport, with -pg's user and
// options.
func (b *bench) dbURL(hostport string) string {
	u := *b.admin
	u.Host = hostport
	u.Path = "/" + b.cfg.database
	q := u.Query()
	if q.Get("sslmode") == "" {
		q.Set("sslmode", "disable")
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// serverDB is the URL a server connects with: through a counting proxy of
// its own, or straight to PostgreSQL without -count-statements.
func (b *bench) serverDB() (string, *sqlProxy, error) {
	if !b.cfg.countStmts || b.direct {
		return b.dbURL(b.admin.Host), nil, nil
	}
	upstream := b.admin.Host
	if b.admin.Port() == "" {
		upstream = b.admin.Hostname() + ":5432"
	}
	p, err := startSQLProxy(upstream)
	if err != nil {
		return "", nil, err
	}
	b.proxies = append(b.proxies, p)
	return b.dbURL(p.Addr()), p, nil
}

// startTaskgraph builds cmd/taskgraph (once) and serves the bench database
// with it.
func (b *bench) startTaskgraph(ctx context.Context) (*target, error) {
	bin := filepath.Join(b.cfg.workDir, "taskgraph")
	if !b.tgBuilt {
		logf("building Taskgraph")
		build := exec.CommandContext(ctx, envOr("GO", "go"), "build", "-o", bin, "./cmd/taskgraph")
		build.Dir, build.Stdout, build.Stderr = b.root, os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return nil, fmt.Errorf("go build ./cmd/taskgraph: %w", err)
		}
		b.tgBuilt = true
	}
	name := b.logName("taskgraph")
	t := &target{key: "taskgraph", label: "Taskgraph, PostgreSQL"}
	db, proxy, err := b.serverDB()
	if err != nil {
		return nil, err
	}
	t.proxy = proxy
	if t.token, err = randomToken(); err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	t.url = fmt.Sprintf("http://127.0.0.1:%d/graphql", port)
	// The sweeps wait an hour, as in Taskgraph's statement-count tests, so
	// that their statements are not counted as the requests'.
	if t.proc, err = b.procs.start("Taskgraph", filepath.Join(b.cfg.workDir, name+".log"), nil, bin, "serve",
		"--addr", fmt.Sprintf("127.0.0.1:%d", port), "--database", db, "--admin-token", t.token,
		"--log-format", "json", "--data-dir", filepath.Join(b.cfg.workDir, name+"-data"),
		"--question-sweep-interval", "1h", "--queue-sweep-interval", "1h",
		// The subscription scenario holds all its subscriptions with one token.
		"--max-subscriptions-per-user", strconv.Itoa(min(max(b.cfg.sub.subscribers(), b.cfg.sub.peerSubscribers)+100, 1_000_000)),
		"--max-ws-connections-per-user", strconv.Itoa(min(max(b.cfg.sub.connections, b.cfg.sub.peerSubscribers/b.cfg.sub.perConn)+10, 100_000))); err != nil {
		return nil, err
	}
	return t, waitReady(ctx, t.proc, t.url, bearer(t.token), 60*time.Second)
}

// startPeer starts PostGraphile 4 or 5 or the floor on the bench database.
func (b *bench) startPeer(ctx context.Context, key string) (*target, error) {
	t := &target{key: key}
	db, proxy, err := b.serverDB()
	if err != nil {
		return nil, err
	}
	t.proxy = proxy
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	t.url = fmt.Sprintf("http://127.0.0.1:%d/graphql", port)
	logPath := filepath.Join(b.cfg.workDir, b.logName(key)+".log")
	prod := []string{"NODE_ENV=production"}
	switch key {
	case "pg4":
		t.label = fmt.Sprintf("PostGraphile %s (Node %s)", b.node.pg4Version, b.node.nodeVersion)
		t.proc, err = b.procs.start("PostGraphile 4", logPath, prod, b.node.node,
			filepath.Join(b.dir, "postgraphile4", "server.js"), strconv.Itoa(port), db)
	case "pg5":
		t.label = fmt.Sprintf("PostGraphile %s (Grafast, Node %s)", b.node.pg5Version, b.node.nodeVersion)
		t.proc, err = b.procs.start("PostGraphile 5", logPath, prod, b.node.node,
			filepath.Join(b.dir, "postgraphile5.mjs"), strconv.Itoa(port), db)
	case "floor", "floorw":
		writes := "insert"
		t.label = "Go floor: a batched statement per level + encoding/json"
		if key == "floorw" {
			t.label, writes, t.writesOnly = "Go floor with Taskgraph's writes: number, task, history row, event in one statement", "taskgraph", true
		}
		var self string
		if self, err = os.Executable(); err == nil {
			t.proc, err = b.procs.start("the floor", logPath, nil, self, "floor",
				"-addr", fmt.Sprintf("127.0.0.1:%d", port), "-database", db, "-writes", writes)
		}
	default:
		err = fmt.Errorf("unknown server %q", key)
	}
	if err != nil {
		return nil, err
	}
	return t, waitReady(ctx, t.proc, t.url, nil, 120*time.Second)
}

// timeScenarios runs each scenario: a warm-up turn per server, then the
// rounds, every server in turn in each. It returns the summaries by
// scenario and server.
func (b *bench) timeScenarios(ctx context.Context, order []*target) (map[string]map[string]summary, error) {
	c := b.cfg
	results := map[string]map[string]summary{}
	lc := loadConfig{connections: c.connections, database: c.database, seq: &counter{}}
	for _, sc := range c.scenarios {
		if sc == "subscribe" {
			continue // runSubscriptions
		}
		if c.warmup > 0 {
			for _, t := range order {
				if !t.serves(sc) {
					continue
				}
				logf("%s: warming up %s for %s", sc, t.label, c.warmup)
				if _, err := runPhase(ctx, t, sc, c.warmup, lc); err != nil {
					return nil, err
				}
			}
		}
		phases := map[string][]phase{}
		for r := 1; r <= c.rounds; r++ {
			for _, t := range order {
				if !t.serves(sc) {
					continue
				}
				p, err := runPhase(ctx, t, sc, c.duration, lc)
				if err != nil {
					return nil, err
				}
				logf("%s round %d/%d: %-50s %6d requests, %7.1f req/s", sc, r, c.rounds, t.label, p.requests, float64(p.requests)/p.elapsed.Seconds())
				phases[t.key] = append(phases[t.key], p)
			}
		}
		results[sc] = map[string]summary{}
		for key, ps := range phases {
			results[sc][key] = summarize(ps)
		}
	}
	return results, nil
}
