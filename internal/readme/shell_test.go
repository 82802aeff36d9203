package readme

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// shell is one bash process that runs the README's commands one after the
// other, as a user's terminal would: variables, exports and functions of one
// command are there for the next.
type shell struct {
	t      testing.TB
	cmd    *exec.Cmd
	in     io.WriteCloser
	lines  chan string
	dir    string // where background commands write their output
	jobs   []*job
	nextID int
}

// job is a command left running in the background (watch).
type job struct {
	pid  int
	out  string // file holding its output
	what string
}

// marker ends every command's output, followed by its exit status.
const marker = "__readme_command_done__"

// newShell starts bash in dir with env. Its background jobs get process
// groups of their own (set -m), so that stopping one stops `go run` and the
// program it started.
func newShell(t testing.TB, dir string, env []string) *shell {
	t.Helper()
	cmd := exec.Command("bash", "--noprofile", "--norc")
	cmd.Dir = dir
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	s := &shell{t: t, cmd: cmd, in: in, lines: make(chan string, 1024), dir: t.TempDir()}
	go func() {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			s.lines <- sc.Text()
		}
		close(s.lines)
	}()
	t.Cleanup(s.close)
	s.send("set -m")
	return s
}

func (s *shell) send(text string) {
	if _, err := io.WriteString(s.in, text+"\n"); err != nil {
		s.t.Fatalf("writing to bash: %v", err)
	}
}

// run runs one command with stdin from /dev/null and returns its output
// (stdout and stderr) and exit status; status -1 means it did not end
// within timeout (it is then left running until the test ends).
func (s *shell) run(text string, timeout time.Duration) (string, int) {
	s.send("{\n" + text + "\n} </dev/null 2>&1")
	s.send(fmt.Sprintf("printf '\\n%s %%d\\n' $?", marker))
	var out []string
	deadline := time.After(timeout)
	for {
		select {
		case l, ok := <-s.lines:
			if !ok {
				return strings.Join(out, "\n"), -2
			}
			if rest, ok := strings.CutPrefix(l, marker+" "); ok {
				status, _ := strconv.Atoi(rest)
				return strings.TrimSuffix(strings.Join(out, "\n"), "\n"), status
			}
			out = append(out, l)
		case <-deadline:
			return strings.Join(out, "\n"), -1
		}
	}
}

// start runs a command in the background, its output into a file.
func (s *shell) start(text, what string) *job {
	s.nextID++
	j := &job{out: filepath.Join(s.dir, fmt.Sprintf("job%d.out", s.nextID)), what: what}
	out, status := s.run("{\n"+text+"\n} </dev/null >"+j.out+" 2>&1 &\necho \"pid $!\"", time.Minute)
	pid, err := strconv.Atoi(strings.TrimPrefix(lastLine(out), "pid "))
	if status != 0 || err != nil {
		s.t.Fatalf("starting %s in the background: status %d: %s", what, status, out)
	}
	j.pid = pid
	s.jobs = append(s.jobs, j)
	return j
}

// output is what a background job has printed so far.
func (j *job) output() string {
	b, _ := os.ReadFile(j.out)
	return string(b)
}

// stop ends a background job and its process group.
func (j *job) stop() {
	if j.pid == 0 {
		return
	}
	_ = syscall.Kill(-j.pid, syscall.SIGTERM)
	for i := 0; i < 50 && syscall.Kill(-j.pid, 0) == nil; i++ {
		time.Sleep(100 * time.Millisecond)
	}
	_ = syscall.Kill(-j.pid, syscall.SIGKILL)
	j.pid = 0
}

func (s *shell) close() {
	for _, j := range s.jobs {
		j.stop()
	}
	_ = s.in.Close()
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
}

func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}
