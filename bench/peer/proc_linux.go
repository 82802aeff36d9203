//go:build linux

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// clockTick is the unit of utime and stime in /proc/<pid>/stat: USER_HZ,
// 100 on every Linux build Go supports.
const clockTick = 10 * time.Millisecond

// setChildAttrs puts a server in a process group of its own (so that a signal
// reaches whatever it starts) and has the kernel kill it if this program
// dies without cleaning up.
func setChildAttrs(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// signalGroup sends sig to the process group of pid.
func signalGroup(pid int, sig syscall.Signal) error { return syscall.Kill(-pid, sig) }

// processCPU is the user plus system CPU time pid has used, all its threads
// together.
func processCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return parseStatCPU(b)
}

// parseStatCPU reads utime and stime (fields 14 and 15) from the text of
// /proc/<pid>/stat. The command name (field 2) is in parentheses and may hold
// spaces, so fields are counted from the last ')'.
func parseStatCPU(stat []byte) (time.Duration, error) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("unreadable /proc stat %q", stat)
	}
	f := strings.Fields(string(stat[i+1:]))
	// f[0] is field 3 (state): utime is field 14, f[11].
	if len(f) < 13 {
		return 0, fmt.Errorf("short /proc stat %q", stat)
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	s, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("unreadable /proc stat times %q %q", f[11], f[12])
	}
	return time.Duration(u+s) * clockTick, nil
}

// backendScanner lists the PostgreSQL backends connected to one database
// on this machine. Backends are recognised by their process title,
// "postgres: [cluster: ]user database client(port) state". It remembers the
// processes that are nothing of PostgreSQL's, so that a scan reads little
// more than the backends' stat files.
type backendScanner struct {
	db    string
	other map[int]bool // pids whose command line does not mention postgres
}

func newBackendScanner(db string) *backendScanner {
	return &backendScanner{db: db, other: map[int]bool{}}
}

// scan returns the database's backends by pid.
func (s *backendScanner) scan() (map[int]backend, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	out := map[int]backend{}
	live := make(map[int]bool, len(entries))
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		live[pid] = true
		if s.other[pid] {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue
		}
		// A backend just forked may not have its title yet: only processes
		// that are nothing of PostgreSQL's are skipped from now on.
		if !bytes.Contains(b, []byte("postgres")) {
			s.other[pid] = true
			continue
		}
		port, ok := backendOf(b, s.db)
		if !ok {
			continue
		}
		if cpu, err := processCPU(pid); err == nil {
			out[pid] = backend{cpu: cpu, clientPort: port}
		}
	}
	for pid := range s.other {
		if !live[pid] {
			delete(s.other, pid) // the pid may come back as another process
		}
	}
	return out, nil
}

// backendOf reports whether a process's cmdline is the title of a
// PostgreSQL backend of database db, and its client's port.
func backendOf(cmdline []byte, db string) (clientPort int, ok bool) {
	title, ok := strings.CutPrefix(string(bytes.TrimRight(cmdline, "\x00 ")), "postgres: ")
	if !ok {
		return 0, false
	}
	f := strings.Fields(strings.ReplaceAll(title, "\x00", " "))
	for i := 0; i+1 < len(f); i++ {
		// user database client state: the field after the database is the
		// client's address, host(port) or [local].
		if f[i] != db {
			continue
		}
		if f[i+1] == "[local]" {
			return 0, true
		}
		if open := strings.LastIndexByte(f[i+1], '('); open >= 0 && strings.HasSuffix(f[i+1], ")") {
			port, err := strconv.Atoi(f[i+1][open+1 : len(f[i+1])-1])
			return port, err == nil
		}
	}
	return 0, false
}

// processRSS is the resident memory of pid (VmRSS of /proc/<pid>/status).
func processRSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	return parseStatusRSS(b)
}

// parseStatusRSS reads the VmRSS line ("VmRSS:   123456 kB") of the text of
// /proc/<pid>/status, in bytes.
func parseStatusRSS(status []byte) (int64, error) {
	for _, line := range strings.Split(string(status), "\n") {
		rest, ok := strings.CutPrefix(line, "VmRSS:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			break
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			break
		}
		return kb * 1024, nil
	}
	return 0, fmt.Errorf("no VmRSS line in /proc status")
}
