//go:build unix

package main

import (
	"os"
	"os/exec"
	"syscall"
)

// setProcessGroup starts cmd in a process group of its own, so that the
// signals below reach every process the task's command starts.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

func suspendGroup(p *os.Process) error { return syscall.Kill(-p.Pid, syscall.SIGSTOP) }

func resumeGroup(p *os.Process) error { return syscall.Kill(-p.Pid, syscall.SIGCONT) }

func killGroup(p *os.Process) error { return syscall.Kill(-p.Pid, syscall.SIGKILL) }
