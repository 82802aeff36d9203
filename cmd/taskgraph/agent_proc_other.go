//go:build !unix

package main

import (
	"errors"
	"os"
	"os/exec"
)

// Without process groups a paused run cannot stop a running command: it
// goes on, and the agent claims nothing new until the run resumes.
func setProcessGroup(*exec.Cmd) {}

func suspendGroup(*os.Process) error { return errors.ErrUnsupported }

func resumeGroup(*os.Process) error { return nil }

func killGroup(p *os.Process) error { return p.Kill() }
