//go:build linux

package main

import (
	"os"
	"testing"
)

func TestParseStatCPU(t *testing.T) {
	// The command name may hold spaces and parentheses.
	stat := "4242 (node (x) y) S 1 4242 4242 0 -1 4194560 2954 0 0 0 1234 56 0 0 20 0 11 0 99 1 2 3"
	got, err := parseStatCPU([]byte(stat))
	if err != nil {
		t.Fatal(err)
	}
	if want := 1290 * clockTick; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if _, err := parseStatCPU([]byte("4242 (short) S 1 2")); err == nil {
		t.Error("a short stat line was read")
	}
}

func TestProcessCPUOfThisProcess(t *testing.T) {
	if _, err := processCPU(os.Getpid()); err != nil {
		t.Fatal(err)
	}
}

func TestBackendOf(t *testing.T) {
	for _, c := range []struct {
		cmdline string
		port    int
		ok      bool
	}{
		{"postgres: 15/main: postgres taskgraph_peer 127.0.0.1(41234) idle\x00\x00", 41234, true},
		{"postgres: postgres taskgraph_peer 127.0.0.1(5000) SELECT", 5000, true},
		{"postgres: 15/main: postgres taskgraph_peer [local] idle", 0, true},
		{"postgres: 15/main: postgres test 127.0.0.1(41234) idle", 0, false},
		{"postgres: 15/main: checkpointer", 0, false},
		{"/usr/bin/taskgraph_peer 127.0.0.1(1)", 0, false},
	} {
		port, ok := backendOf([]byte(c.cmdline), "taskgraph_peer")
		if ok != c.ok || port != c.port {
			t.Errorf("%q: got (%d, %v), want (%d, %v)", c.cmdline, port, ok, c.port, c.ok)
		}
	}
}

func TestBackendScannerSkipsOtherProcesses(t *testing.T) {
	s := newBackendScanner("no_such_database_of_peer")
	got, err := s.scan()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Errorf("backends of a database that does not exist: %v", got)
	}
	if !s.other[os.Getpid()] {
		t.Error("this test process is not remembered as one to skip")
	}
}

func TestParseStatusRSS(t *testing.T) {
	status := "Name:\tnode\nVmPeak:\t  999 kB\nVmRSS:\t   12345 kB\nRssAnon:\t 1 kB\n"
	if got, err := parseStatusRSS([]byte(status)); err != nil || got != 12345*1024 {
		t.Errorf("got %d, %v", got, err)
	}
	for _, bad := range []string{"Name:\tx\n", "VmRSS:\t12 MB\n", "VmRSS:\tlots kB\n"} {
		if _, err := parseStatusRSS([]byte(bad)); err == nil {
			t.Errorf("%q was read", bad)
		}
	}
	if _, err := processRSS(os.Getpid()); err != nil {
		t.Error(err)
	}
}
