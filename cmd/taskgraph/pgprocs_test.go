//go:build unix

package main

import (
	"bytes"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/testdb"
)

// Processes of PostgreSQL's world that tests start on ports of their own:
// Debian's PgBouncer in transaction mode in front of the shared test
// database, and a private PostgreSQL server that a test may stop and start
// (never the shared one).

// postgresBin is where Debian installs PostgreSQL 15's server programs.
const postgresBin = "/usr/lib/postgresql/15/bin"

// missingTool skips the test when a program it needs is not installed, or
// fails it under CI=true, where .ci/run installs it.
func missingTool(t *testing.T, what string) {
	t.Helper()
	missing(t, "%s is not installed", what)
}

// serviceUser is who runs PostgreSQL's programs: the current user, or — as
// initdb, postgres and pgbouncer refuse to run as root — the postgres user
// when the tests run as root. uid < 0: the current user.
type serviceUser struct{ uid, gid int }

func postgresUser(t *testing.T) serviceUser {
	t.Helper()
	if os.Geteuid() != 0 {
		return serviceUser{uid: -1, gid: -1}
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		t.Skipf("running as root without a postgres user to run PostgreSQL's programs as: %v", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return serviceUser{uid: uid, gid: gid}
}

// command runs name as the service user.
func (u serviceUser) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	if u.uid >= 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(u.uid), Gid: uint32(u.gid)}}
	}
	return cmd
}

// tempDir is a directory the service user owns, removed when the test ends
// (t.TempDir's parent is the test user's alone).
func (u serviceUser) tempDir(t *testing.T, pattern string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", pattern)
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if u.uid >= 0 {
		require.NoError(t, os.Chown(dir, u.uid, u.gid))
	}
	return dir
}

// freePort is a TCP port of 127.0.0.1 that nobody listened on a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// waitForPort waits until something accepts connections on port.
func waitForPort(t *testing.T, port int, what string, exited <-chan struct{}, log func() string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
		if err == nil {
			_ = c.Close()
			return
		}
		select {
		case <-exited:
			t.Fatalf("%s exited before listening:\n%s", what, log())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s does not listen on %d:\n%s", what, port, log())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// lockedBuffer collects a process's output.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startPgBouncer starts PgBouncer in transaction mode in front of the
// database of directURL — a testdb.Postgres URL: a database of its own, or
// a schema (search_path) that each server connection then selects with
// PgBouncer's connect_query — and returns the URL through it. It stops when
// the test ends.
func startPgBouncer(t *testing.T, directURL string) string {
	t.Helper()
	bin, err := exec.LookPath("pgbouncer")
	if err != nil {
		if bin, err = exec.LookPath("/usr/sbin/pgbouncer"); err != nil {
			missingTool(t, "pgbouncer")
		}
	}
	u, err := url.Parse(directURL)
	require.NoError(t, err)
	schema := u.Query().Get("search_path")
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = "5432"
	}
	dbUser := u.User.Username()
	password, _ := u.User.Password()
	svc := postgresUser(t)
	dir := svc.tempDir(t, "taskgraph-pgbouncer-")
	listen := freePort(t)
	// The server connections log in as the test URL's user; clients are
	// trusted (the pooler listens on 127.0.0.1 for this test alone).
	db := fmt.Sprintf("host=%s port=%s dbname=%s user=%s", host, port, strings.TrimPrefix(u.Path, "/"), dbUser)
	if schema != "" {
		db += fmt.Sprintf(" connect_query='SET search_path TO %s'", schema)
	}
	if password != "" {
		db += " password=" + password
	}
	ini := fmt.Sprintf(`[databases]
taskgraph = %s

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = %d
unix_socket_dir =
auth_type = trust
auth_file = %s
pool_mode = transaction
default_pool_size = 40
max_client_conn = 400
query_wait_timeout = 30
logfile = %s
`, db, listen, filepath.Join(dir, "users.txt"), filepath.Join(dir, "pgbouncer.log"))
	for name, content := range map[string]string{"pgbouncer.ini": ini, "users.txt": fmt.Sprintf("%q \"\"\n", dbUser)} {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
		if svc.uid >= 0 {
			require.NoError(t, os.Chown(path, svc.uid, svc.gid))
		}
	}
	out := &lockedBuffer{}
	cmd := svc.command(bin, filepath.Join(dir, "pgbouncer.ini"))
	cmd.Stdout, cmd.Stderr = out, out
	require.NoError(t, cmd.Start())
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	log := func() string {
		b, _ := os.ReadFile(filepath.Join(dir, "pgbouncer.log"))
		if len(b) == 0 {
			return out.String() // it failed before opening its log
		}
		return string(b)
	}
	t.Cleanup(func() {
		// SIGTERM: immediate shutdown (the servers using it stopped first).
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("pgbouncer's log:\n%s", log())
		}
	})
	waitForPort(t, listen, "pgbouncer", exited, log)
	return fmt.Sprintf("postgres://%s@127.0.0.1:%d/taskgraph?sslmode=disable", url.PathEscape(dbUser), listen)
}

// privatePostgres is a PostgreSQL server of one test: its own data
// directory and port.
type privatePostgres struct {
	svc  serviceUser
	dir  string // data directory
	port int
	URL  string
}

// startPrivatePostgres initialises a data directory in a temporary folder
// and starts PostgreSQL on a port of its own; it is stopped and removed when
// the test ends. Without the server programs the test skips (fails under
// CI=true).
func startPrivatePostgres(t *testing.T) *privatePostgres {
	t.Helper()
	if os.Getenv(testdb.EnvURL) == "" && os.Getenv("CI") != "true" {
		t.Skipf("PostgreSQL: %s is not set", testdb.EnvURL)
	}
	if testing.Short() {
		t.Skip("PostgreSQL: left out by -short")
	}
	if _, err := os.Stat(filepath.Join(postgresBin, "initdb")); err != nil {
		missingTool(t, "PostgreSQL 15's server programs ("+postgresBin+")")
	}
	svc := postgresUser(t)
	root := svc.tempDir(t, "taskgraph-pg-")
	p := &privatePostgres{svc: svc, dir: filepath.Join(root, "data"), port: freePort(t)}
	p.run(t, "initdb", "-D", p.dir, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-sync", "--no-instructions")
	p.Start(t)
	t.Cleanup(func() {
		cmd := p.svc.command(filepath.Join(postgresBin, "pg_ctl"), "-D", p.dir, "-m", "immediate", "-w", "stop")
		_ = cmd.Run() // may be stopped already
	})
	p.URL = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", p.port)
	return p
}

// Start starts the server and waits until it accepts connections.
func (p *privatePostgres) Start(t *testing.T) {
	t.Helper()
	// Durability is not what these tests are about: no fsync.
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=100", p.port, filepath.Dir(p.dir))
	p.run(t, "pg_ctl", "-D", p.dir, "-l", filepath.Join(filepath.Dir(p.dir), "postgres.log"), "-o", opts, "-w", "start")
}

// Stop shuts the server down the way a restart or a failover does:
// fast, every connection closed.
func (p *privatePostgres) Stop(t *testing.T) {
	t.Helper()
	p.run(t, "pg_ctl", "-D", p.dir, "-m", "fast", "-w", "stop")
}

func (p *privatePostgres) run(t *testing.T, program string, args ...string) {
	t.Helper()
	cmd := p.svc.command(filepath.Join(postgresBin, program), args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		logText, _ := os.ReadFile(filepath.Join(filepath.Dir(p.dir), "postgres.log"))
		t.Fatalf("%s %s: %v\n%s\n%s", program, strings.Join(args, " "), err, out, logText)
	}
}
