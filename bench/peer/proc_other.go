//go:build !linux

package main

import (
	"errors"
	"os/exec"
	"syscall"
	"time"
)

// The side-by-side reads CPU times from /proc: it runs on Linux only.
var errNotLinux = errors.New("bench/peer reads CPU times from /proc: it runs on Linux only")

func setChildAttrs(*exec.Cmd) {}

func signalGroup(int, syscall.Signal) error { return errNotLinux }

func processCPU(int) (time.Duration, error) { return 0, errNotLinux }

type backendScanner struct{}

func newBackendScanner(string) *backendScanner { return &backendScanner{} }

func (*backendScanner) scan() (map[int]backend, error) { return nil, errNotLinux }

func processRSS(int) (int64, error) { return 0, errNotLinux }
