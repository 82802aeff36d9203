package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// child is one server process started by the harness.
type child struct {
	name string
	cmd  *exec.Cmd
	log  string // path of its combined stdout and stderr
	done chan struct{}
	err  error // Wait's, once done is closed
}

// children are every process started, so that each is stopped on exit.
type children struct {
	mu   sync.Mutex
	list []*child
}

// start runs argv with env added to this process's environment, its output
// in logPath.
func (cs *children) start(name, logPath string, env []string, argv ...string) (*child, error) {
	out, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = out, out
	setChildAttrs(cmd)
	if err := cmd.Start(); err != nil {
		out.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	c := &child{name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() {
		c.err = cmd.Wait()
		out.Close()
		close(c.done)
	}()
	cs.mu.Lock()
	cs.list = append(cs.list, c)
	cs.mu.Unlock()
	return c, nil
}

// stop ends one child as stopAll does, and forgets it.
func (cs *children) stop(c *child) {
	cs.mu.Lock()
	cs.list = slices.DeleteFunc(cs.list, func(x *child) bool { return x == c })
	cs.mu.Unlock()
	_ = signalGroup(c.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-c.done:
	case <-time.After(5 * time.Second):
		_ = signalGroup(c.cmd.Process.Pid, syscall.SIGKILL)
		<-c.done
	}
}

// stopAll ends every child: SIGTERM to its process group, SIGKILL after 5 s.
func (cs *children) stopAll() {
	cs.mu.Lock()
	list := cs.list
	cs.list = nil
	cs.mu.Unlock()
	for _, c := range list {
		_ = signalGroup(c.cmd.Process.Pid, syscall.SIGTERM)
	}
	for _, c := range list {
		select {
		case <-c.done:
		case <-time.After(5 * time.Second):
			_ = signalGroup(c.cmd.Process.Pid, syscall.SIGKILL)
			<-c.done
		}
	}
}

// pid is the server's process id (the process whose CPU is measured).
func (c *child) pid() int { return c.cmd.Process.Pid }

// exited is an error when the process has ended, with the tail of its log.
func (c *child) exited() error {
	select {
	case <-c.done:
		return fmt.Errorf("%s exited (%v); the end of its log %s:\n%s", c.name, c.err, c.log, logTail(c.log, 2000))
	default:
		return nil
	}
}

// logTail is the last n bytes of a file.
func logTail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// waitReady polls a server with a trivial GraphQL query until it answers
// 200, or fails when the process exits or timeout passes.
func waitReady(ctx context.Context, c *child, url string, header http.Header, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	client := &http.Client{Timeout: 5 * time.Second}
	var last string
	for time.Now().Before(deadline) {
		if err := c.exited(); err != nil {
			return err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(`{"query":"{ __typename }"}`))
		if err != nil {
			return err
		}
		for k, v := range header {
			req.Header[k] = v
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && bytes.Contains(body, []byte(`"__typename"`)) {
				return nil
			}
			last = fmt.Sprintf("HTTP %d %s", resp.StatusCode, body)
		} else {
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	return fmt.Errorf("%s did not answer at %s within %s (last: %s); its log %s:\n%s", c.name, url, timeout, last, c.log, logTail(c.log, 2000))
}

// freePort asks the kernel for a free loopback port.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
