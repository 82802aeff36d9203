package readme

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
)

// TestREADMECommands is a new user on a fresh clone: it clones the
// repository's committed HEAD into a temporary folder, runs `make run` until
// /healthz answers, then walks README.md from the top and runs, in one bash
// session and in order, every command of its sh blocks exactly as printed,
// and the GraphQL documents of "First steps" over HTTP, checking each one's
// exit status and a piece of its output (the steps table below).
//
// The rules, for whoever edits the README:
//   - Every command of an sh block must match a step of the table: run, with
//     the output it must print, or not run, with the reason (a placeholder
//     server, a benchmark, another program). A command the table does not
//     know fails the test.
//   - What the user fills in is filled in: tg_… is the token `make run`
//     printed, <cursor> and <run id> what `taskgraph demo` printed.
//   - The server listens on 127.0.0.1:8080 as the README says when that port
//     is free; when it is taken (another server on this machine) it listens
//     on a free port and 127.0.0.1:8080 in commands is rewritten to it.
//   - A GraphQL document of "First steps" gets as its variable $x the id
//     found under the key x in an earlier answer ($project: createProject's
//     project, $api: the task created under the alias api).
func TestREADMECommands(t *testing.T) {
	if testing.Short() {
		t.Skip("the README's commands on a fresh clone (builds and serves): not under -short")
	}
	// It builds the server without the race detector beside make test's race
	// builds: minutes of CPU on 2 cores. CI runs it after make test.
	if os.Getenv(envRun) != "1" {
		t.Skip("the README's commands on a fresh clone: make test-readme runs them (.ci/run does, after make test)")
	}
	for _, tool := range []string{"git", "make", "bash", "curl", "jq", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("the README's commands need %s on PATH", tool)
			}
			t.Skipf("the README's commands need %s on PATH", tool)
		}
	}
	r := newRun(t)
	md, err := os.ReadFile(filepath.Join(r.clone, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range blocks(string(md)) {
		switch {
		case b.lang == "sh":
			r.block(b)
		case b.lang == "graphql" && b.section == firstSteps:
			r.graphql(b)
		}
		if t.Failed() {
			return
		}
	}
	for _, s := range steps {
		if !s.seen && s.skip == "" {
			t.Errorf("step %q matched no command of the README: remove it from the table", s.match)
		}
	}
}

// envRun asks for TestREADMECommands (make test-readme sets it).
const envRun = "TASKGRAPH_README_TEST"

// firstSteps is the section whose GraphQL documents the test runs.
const firstSteps = "First steps in the playground"

// step says what to do with the README's commands it matches (a regexp on
// the command as one line, its trailing comment dropped).
type step struct {
	match string
	skip  string // not run: why
	want  string // a regexp its output must match
	// background: it runs until the block's other commands are done (watch);
	// poke makes events for it meanwhile; want must match by then.
	background bool
	poke       func(r *run)
	// on8080: it reaches the server at 127.0.0.1:8080 in a way the test
	// cannot redirect; not run when the server had to take another port.
	on8080 bool
	check  func(r *run, out string) // more checks of its output
	seen   bool
	re     *regexp.Regexp
}

var steps = []*step{
	{match: `^make run$`, want: `Created the admin user`},
	{match: `make test$`, skip: "the run this test is part of"},
	{match: `^export TASKGRAPH_TOKEN=tg_…$`},
	{match: `^go install ./cmd/taskgraph$`, check: func(r *run, _ string) { r.installed() }},
	{match: `^go run ./cmd/taskgraph token create --role ADMIN --user admin$`, want: `(?m)^tg_[A-Za-z0-9_-]{43}$`},
	{match: `^curl -s http://127.0.0.1:8080/graphql -H "Authorization: Bearer \$TASKGRAPH_TOKEN" -H 'Content-Type: application/json' -d '\{"query":"\{ viewer \{ slug \} \}"\}'$`,
		want: `^\{"data":\{"viewer":\{"slug":"admin"\}\}\}$`},
	{match: `^go run ./cmd/taskgraph watch --project demo$`, background: true,
		poke: func(r *run) { r.demoTask(false) }, want: `TASK_CREATED\s+TU-DEMO-`},
	{match: `^go run ./cmd/taskgraph watch --project demo --types TASK_STATUS_CHANGED --json$`, background: true,
		poke: func(r *run) { r.demoTask(true) }, want: `"type":"TASK_STATUS_CHANGED"`,
		check: func(r *run, out string) {
			if strings.Contains(out, "TASK_CREATED") {
				r.t.Errorf("watch --types TASK_STATUS_CHANGED printed another type:\n%s", out)
			}
		}},
	{match: `--url https://taskgraph\.example\.com$`, skip: "an example server's URL"},
	{match: `^taskgraph serve --`, skip: "a server of another configuration (origins, an OpenID provider); the test's server is make run's"},
	{match: `^go test -race -gcflags='modernc.org/sqlite/lib=-race=false' `, skip: "a race build of the tests (minutes); make test runs them so"},
	{match: `^export TASKGRAPH_TEST_DATABASE_URL=`, skip: "benchmarks (minutes; make bench)"},
	{match: `^(TASKGRAPH_BENCH_[A-Z_]+=\S+ )*go test -run '\^\$' -bench `, skip: "benchmarks (minutes; make bench)"},
	{match: `^make bench`, skip: "benchmarks (minutes, npm packages; make bench, make bench-peer)"},
	{match: `^go run ./cmd/taskgraph demo$`, want: `Started run \S+ of 9 tasks in project "login"`,
		check: func(r *run, out string) { r.demoPrinted(out) }},
	{match: `^go run ./cmd/taskgraph watch --project login --after <cursor>$`, background: true, want: `(?s)RUN_STARTED.*RUN_COMPLETED`},
	{match: `^go run ./cmd/taskgraph agent --run <run id> --simulate --work 2s --parallel 3$`,
		want: `(?m)^agent \d+: TU-LOGIN-TST-001 End-to-end login tests \(attempt 1\)$`},
	{match: `^claude mcp add `, skip: "Claude Code's own command"},
	{match: `^npx @modelcontextprotocol/inspector --cli -e TASKGRAPH_TOKEN=tg_… taskgraph mcp --method tools/list$`,
		want: `"name": "claim_task"`, on8080: true}, // the Inspector hands taskgraph mcp only the environment given with -e
	{match: `^answer=\$\(taskgraph ask `, skip: "a script for taskgraph agent --exec (TestQuestionAskCommand runs taskgraph ask)"},
	{match: `^\[ "\$answer" = yes \]`, skip: "a script for taskgraph agent --exec (TestQuestionAskCommand runs taskgraph ask)"},
	{match: `^curl -s http://127.0.0.1:8080/graphql .* -F operations=`, skip: "needs a trace session ($SESSION) and its input_events.jsonl"},
	{match: `^curl -s "http://127.0.0.1:8080/export/examples.jsonl`, skip: "needs a suite and a model with completed examples ($SUITE, $MODEL)"},
	{match: `^gql\(\) \{ `},
	{match: `^P=\$\(gql 'mutation \{ createProject`, want: `^P=\S+$`},
	{match: `^PL=\$\(gql 'mutation\(\$p: ID!\) \{ createPlanner`, want: `^PL=\S+$`},
	{match: `^gql 'mutation \{ registerQueueFunction`, want: `^\{"data":\{"registerQueueFunction":\{"function":\{"id":"[^"]+"\}\}\}\}$`},
	{match: `^for n in 1 2 3; do gql 'mutation\(\$pl: ID!, \$n: Int!\) \{ enqueueFunction`,
		want: `(?s)("deduplicated":false.*){3}`},
	{match: `^go run ./cmd/taskgraph worker --function sum --project qdemo --parallel 2 --drain `,
		want: `(?s)(completed \S+ \(sum, attempt 1\).*){3}`},
	{match: `^gql 'query\(\$p: ID!\) \{ queueItems`,
		want: `^\{"data":\{"queueItems":\{"nodes":\[(\{"status":"COMPLETED","attempt":1,"result":\{[^{}]*"sum":1[123][^{}]*\},"claimedBy":"[^"]+"\},?){3}\]\}\}\}$`},
	{match: `^createdb taskgraph$`, skip: "your PostgreSQL (the tests run on theirs with TASKGRAPH_TEST_DATABASE_URL)"},
	{match: `^TASKGRAPH_DATABASE_URL='postgres://user@localhost`, skip: "your PostgreSQL and your secret"},
}

func init() {
	for _, s := range steps {
		s.re = regexp.MustCompile(s.match)
	}
}

// stepFor is the one step that matches c.
func stepFor(t testing.TB, c command) *step {
	t.Helper()
	var found []*step
	for _, s := range steps {
		if s.re.MatchString(c.bare()) {
			found = append(found, s)
		}
	}
	switch len(found) {
	case 1:
		return found[0]
	case 0:
		t.Errorf("README.md:%d: a command the test does not know: add it to the steps of readme_test.go "+
			"(run, with a piece of its output, or not run, with why):\n%s", c.line, c.text)
	default:
		t.Errorf("README.md:%d: several steps match:\n%s", c.line, c.text)
	}
	return nil
}

// run is one pass over the README on a fresh clone.
type run struct {
	t      *testing.T
	clone  string // the fresh clone
	addr   string // host:port the server listens on
	token  string // the admin token make run printed
	filled map[string]string
	ids    map[string]string // GraphQL ids by the key they were found under
	sh     *shell
	gobin  string
	pokes  int
	server *exec.Cmd
	mu     sync.Mutex
	out    bytes.Buffer // make run's output
}

func (r *run) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.out.Write(p)
}

func (r *run) serverOutput() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.out.String()
}

// newRun clones the repository and starts the shell the commands run in.
func newRun(t *testing.T) *run {
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skipf("not in a git checkout: %v", err)
	}
	tmp := t.TempDir()
	r := &run{t: t, clone: filepath.Join(tmp, "taskgraph"), filled: map[string]string{}, ids: map[string]string{},
		gobin: filepath.Join(tmp, "gobin"), addr: "127.0.0.1:8080"}
	if out, err := exec.Command("git", "clone", "--quiet", strings.TrimSpace(string(top)), r.clone).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	if ln, err := net.Listen("tcp", r.addr); err == nil {
		ln.Close()
	} else {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		r.addr = ln.Addr().String()
		ln.Close()
		t.Logf("127.0.0.1:8080 is taken: the server listens on %s, and the commands say so", r.addr)
	}
	var env []string
	// A user's shell has none of the tests' TASKGRAPH_ settings.
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TASKGRAPH_") && !strings.HasPrefix(kv, "GOBIN=") && !strings.HasPrefix(kv, "PATH=") {
			env = append(env, kv)
		}
	}
	// `go install` puts taskgraph in GOBIN, on PATH as the README asks.
	env = append(env, "GOBIN="+r.gobin, "PATH="+r.gobin+string(os.PathListSeparator)+os.Getenv("PATH"))
	if r.addr != "127.0.0.1:8080" {
		env = append(env, "TASKGRAPH_ADDR="+r.addr, "TASKGRAPH_URL=http://"+r.addr)
	}
	r.sh = newShell(t, r.clone, env)
	r.linkNodeModules()
	return r
}

// linkNodeModules lends the clone the MCP client's npm packages of this
// checkout, as `cd test/mcp-client && npm ci` installs them, so that npx
// finds the MCP Inspector without the network.
func (r *run) linkNodeModules() {
	top, _ := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	nm := filepath.Join(strings.TrimSpace(string(top)), "test", "mcp-client", "node_modules")
	if _, err := os.Stat(filepath.Join(nm, "@modelcontextprotocol", "inspector")); err != nil {
		return
	}
	if err := os.Symlink(nm, filepath.Join(r.clone, "node_modules")); err != nil {
		r.t.Fatal(err)
	}
}

// fill puts in what the user fills in.
func (r *run) fill(text string) string {
	text = strings.ReplaceAll(text, "tg_…", r.token)
	text = strings.ReplaceAll(text, "127.0.0.1:8080", r.addr)
	for k, v := range r.filled {
		text = strings.ReplaceAll(text, k, v)
	}
	return text
}

// block runs the commands of an sh block.
func (r *run) block(b block) {
	t := r.t
	var bg []*step
	var jobs []*job
	for _, c := range commands(t, b) {
		s := stepFor(t, c)
		if s == nil {
			continue
		}
		s.seen = true
		switch {
		case s.skip != "":
			t.Logf("README.md:%d: not run (%s): %s", c.line, s.skip, c.bare())
		case s.on8080 && r.addr != "127.0.0.1:8080":
			t.Logf("README.md:%d: not run (127.0.0.1:8080 was taken, and it goes there): %s", c.line, c.bare())
		case c.bare() == "make run":
			r.makeRun(c, s)
		case s.background:
			t.Logf("README.md:%d: started: %s", c.line, c.bare())
			bg = append(bg, s)
			jobs = append(jobs, r.sh.start(r.fill(c.text), c.bare()))
		default:
			r.command(c, s)
		}
	}
	for i, s := range bg {
		r.await(jobs[i], s)
	}
}

// command runs one command and checks it.
func (r *run) command(c command, s *step) {
	t := r.t
	text := r.fill(c.text)
	// an assignment prints nothing: print what it assigned
	if m := regexp.MustCompile(`^([A-Z_]+)=\$\(`).FindStringSubmatch(text); m != nil {
		text += fmt.Sprintf("\nprintf '%s=%%s\\n' \"$%s\"", m[1], m[1])
	}
	start := time.Now()
	out, status := r.sh.run(text, 10*time.Minute)
	t.Logf("README.md:%d: %s (%s, exit %d)", c.line, c.bare(), time.Since(start).Round(time.Millisecond), status)
	if status != 0 {
		t.Errorf("README.md:%d: exit status %d:\n%s\n%s", c.line, status, c.text, out)
		return
	}
	if strings.Contains(out, "=null") {
		t.Errorf("README.md:%d: assigned null:\n%s\n%s", c.line, c.text, out)
	}
	r.expect(c, s, out)
}

// expect checks a command's output against its step.
func (r *run) expect(c command, s *step, out string) {
	if s.want != "" && !regexp.MustCompile(s.want).MatchString(out) {
		r.t.Errorf("README.md:%d: output does not match %s:\n%s\n%s", c.line, s.want, c.text, out)
		return
	}
	if s.check != nil {
		s.check(r, out)
	}
}

// await gives a background command until its output matches (poking it
// meanwhile), then stops it.
func (r *run) await(j *job, s *step) {
	defer j.stop()
	re := regexp.MustCompile(s.want)
	deadline := time.Now().Add(3 * time.Minute)
	for !re.MatchString(j.output()) {
		if time.Now().After(deadline) {
			r.t.Errorf("%s: its output did not match %s within 3 minutes:\n%s", j.what, s.want, j.output())
			return
		}
		if syscall.Kill(j.pid, 0) != nil {
			r.t.Errorf("%s exited:\n%s", j.what, j.output())
			return
		}
		if s.poke != nil {
			s.poke(r)
		}
		time.Sleep(time.Second)
	}
	r.t.Logf("%s printed what it should", j.what)
	if s.check != nil {
		s.check(r, j.output())
	}
}

// makeRun starts `make run` in the clone, once, and waits until the
// server answers /healthz; it takes the admin token from what it printed.
func (r *run) makeRun(c command, s *step) {
	t := r.t
	if r.server != nil {
		t.Logf("README.md:%d: make run: the server is running (the first make run)", c.line)
		return
	}
	cmd := exec.Command("bash", "-c", c.text)
	cmd.Dir, cmd.Env = r.clone, r.sh.cmd.Env
	cmd.Stdout, cmd.Stderr = r, r
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r.server = cmd
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
		if t.Failed() {
			t.Logf("make run printed:\n%s", r.serverOutput())
		}
	})
	for {
		if res, err := http.Get("http://" + r.addr + "/healthz"); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				break
			}
		}
		select {
		case err := <-exited:
			t.Fatalf("make run exited: %v\n%s", err, r.serverOutput())
		case <-time.After(200 * time.Millisecond):
		}
		if time.Since(start) > 20*time.Minute {
			t.Fatalf("make run: /healthz did not answer within 20 minutes:\n%s", r.serverOutput())
		}
	}
	out := r.serverOutput()
	t.Logf("README.md:%d: make run: /healthz answers after %s", c.line, time.Since(start).Round(time.Second))
	m := regexp.MustCompile(`(?m)^\s+(tg_[A-Za-z0-9_-]{43})$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("make run printed no token:\n%s", out)
	}
	r.token = m[1]
	r.expect(c, s, out)
	for _, path := range []string{"/", "/ui/"} {
		res, err := http.Get("http://" + r.addr + path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Errorf("GET %s (the playground, the dashboard): %s", path, res.Status)
		}
	}
}

// gql posts a document with the admin token and returns the answer's data.
func (r *run) gql(query string, vars map[string]any) (json.RawMessage, error) {
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, _ := http.NewRequest("POST", "http://"+r.addr+"/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+r.token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	var ans struct {
		Data   json.RawMessage
		Errors []json.RawMessage
	}
	if err := json.NewDecoder(res.Body).Decode(&ans); err != nil {
		return nil, err
	}
	if len(ans.Errors) > 0 || res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", res.Status, ans.Errors)
	}
	return ans.Data, nil
}

// installed checks that go install put taskgraph on PATH.
func (r *run) installed() {
	if _, err := os.Stat(filepath.Join(r.gobin, "taskgraph")); err != nil {
		r.t.Errorf("go install ./cmd/taskgraph left no taskgraph in GOBIN: %v", err)
	}
}

// demoTask makes events in project demo for a watch: a task created, and
// with status, moved to PENDING.
func (r *run) demoTask(status bool) {
	r.pokes++
	data, err := r.gql(`mutation($p: ID!, $title: String!) { createTask(input: { projectId: $p, title: $title }) { task { id } } }`,
		map[string]any{"p": r.ids["project"], "title": fmt.Sprintf("Watched %d", r.pokes)})
	if err != nil {
		r.t.Fatalf("making an event to watch: %v", err)
	}
	if !status {
		return
	}
	var d struct {
		CreateTask struct{ Task struct{ ID string } }
	}
	_ = json.Unmarshal(data, &d)
	if _, err := r.gql(`mutation($id: ID!) { transitionTask(input: { id: $id, to: PENDING, reason: "ready" }) { task { status } } }`,
		map[string]any{"id": d.CreateTask.Task.ID}); err != nil {
		r.t.Fatalf("making an event to watch: %v", err)
	}
}

// demoPrinted takes <cursor> and <run id> from what the demo printed, and
// checks that the commands it printed are the README's next two.
func (r *run) demoPrinted(out string) {
	watch := regexp.MustCompile(`(?m)^Watch it:\s+(go run ./cmd/taskgraph watch --project login --after (\S+))$`).FindStringSubmatch(out)
	work := regexp.MustCompile(`(?m)^Work it:\s+(go run ./cmd/taskgraph agent --run (\S+) --simulate --work 2s --parallel 3)$`).FindStringSubmatch(out)
	if watch == nil || work == nil {
		r.t.Fatalf("the demo did not print how to watch and work its run as the README does:\n%s", out)
	}
	r.filled["<cursor>"], r.filled["<run id>"] = watch[2], work[2]
}

// firstStepsWant is a piece each First steps document's answer must hold,
// by the document's first field.
var firstStepsWant = map[string]string{
	"createProject":       `"slug":"demo"`,
	"createTask":          `"displayId":"TU-DEMO-FEA-001"`,
	"addTaskRelationship": `"type":"DEPENDS_ON"`,
	"project":             `"totalCount":2`,
}

// graphql runs a First steps document as the playground would.
func (r *run) graphql(b block) {
	t := r.t
	doc, err := parser.ParseQuery(&ast.Source{Input: b.text})
	if err != nil || len(doc.Operations) != 1 {
		t.Errorf("README.md:%d: not one GraphQL operation: %v", b.line, err)
		return
	}
	op := doc.Operations[0]
	vars := map[string]any{}
	for _, v := range op.VariableDefinitions {
		id, ok := r.ids[v.Variable]
		if !ok {
			t.Errorf("README.md:%d: no earlier answer has an id under %q for $%s", b.line, v.Variable, v.Variable)
			return
		}
		vars[v.Variable] = id
	}
	data, err := r.gql(b.text, vars)
	if err != nil {
		t.Errorf("README.md:%d: %v\n%s", b.line, err, b.text)
		return
	}
	t.Logf("README.md:%d: GraphQL %s: %s", b.line, op.SelectionSet[0].(*ast.Field).Name, data)
	want, ok := firstStepsWant[op.SelectionSet[0].(*ast.Field).Name]
	if !ok {
		t.Errorf("README.md:%d: add what its answer must hold to firstStepsWant", b.line)
	} else if !regexp.MustCompile(want).Match(data) {
		t.Errorf("README.md:%d: the answer does not hold %s: %s", b.line, want, data)
	}
	var v any
	_ = json.Unmarshal(data, &v)
	collectIDs(v, r.ids)
}

// collectIDs records, for every key of an answer whose value is an object,
// the first id found under it.
func collectIDs(v any, ids map[string]string) {
	m, ok := v.(map[string]any)
	if !ok {
		if l, ok := v.([]any); ok {
			for _, e := range l {
				collectIDs(e, ids)
			}
		}
		return
	}
	for k, e := range m {
		if id := firstID(e); id != "" {
			ids[k] = id
		}
		collectIDs(e, ids)
	}
}

func firstID(v any) string {
	m, ok := v.(map[string]any)
	if !ok {
		return ""
	}
	if id, ok := m["id"].(string); ok {
		return id
	}
	for _, e := range m {
		if id := firstID(e); id != "" {
			return id
		}
	}
	return ""
}
