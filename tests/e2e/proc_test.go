// proc_test.go -- a process the suite starts (kube-apiserver, kube-scheduler, lotus-extender):
// its output goes to DIR/NAME.log, it dies with the test process (PR_SET_PDEATHSIG), and stop
// sends SIGTERM, then SIGKILL after a grace period.
//
// SPDX-License-Identifier: MIT
package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

type proc struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	done    chan struct{}
	mu      sync.Mutex
	err     error
}

var procSeq struct {
	sync.Mutex
	n map[string]int
}

func startProc(dir, name, bin string, args ...string) (*proc, error) {
	procSeq.Lock()
	if procSeq.n == nil {
		procSeq.n = map[string]int{}
	}
	procSeq.n[name]++
	logPath := filepath.Join(dir, fmt.Sprintf("%s-%d.log", name, procSeq.n[name]))
	procSeq.Unlock()
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout = f
	cmd.Stderr = f
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	p := &proc{name: name, cmd: cmd, logPath: logPath, done: make(chan struct{})}
	go func() {
		err := cmd.Wait()
		f.Close()
		p.mu.Lock()
		p.err = err
		p.mu.Unlock()
		close(p.done)
	}()
	return p, nil
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

func (p *proc) signal(sig syscall.Signal) error {
	return p.cmd.Process.Signal(sig)
}

// stop ends the process: SIGTERM, then SIGKILL after grace. Returns its exit error.
func (p *proc) stop(grace time.Duration) error {
	if p.exited() {
		return p.exitErr()
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
	return p.exitErr()
}

// kill ends the process at once (SIGKILL), as a crash would.
func (p *proc) kill() {
	if !p.exited() {
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

func (p *proc) exitErr() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

func (p *proc) log() string {
	b, _ := os.ReadFile(p.logPath)
	return string(b)
}

func (p *proc) tail(n int) string {
	lines := strings.Split(strings.TrimRight(p.log(), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
