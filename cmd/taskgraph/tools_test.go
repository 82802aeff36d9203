package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// missing skips a test for want of an outside program or package — or fails
// it under CI=true, whose .ci/run installs them all.
func missing(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf(format+" (under CI=true this test must run: .ci/run installs it)", args...)
	}
	t.Skipf(format, args...)
}

// nodeWith returns node for a test (what) that drives the npm package pkg
// installed in dir; -short leaves such tests out.
func nodeWith(t *testing.T, what, dir, pkg string) string {
	t.Helper()
	if testing.Short() {
		t.Skipf("%s: left out by -short", what)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing(t, "node is not installed")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", pkg)); err != nil {
		missing(t, "%s is not installed: run npm ci in %s", pkg, strings.TrimPrefix(dir, "../../"))
	}
	return node
}
