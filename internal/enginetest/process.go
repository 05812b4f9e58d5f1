package enginetest

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// process is one engine server owned by one test: its own folder, its log
// in a file, its process group stopped when the test ends.
type process struct {
	name    string // for messages: "ollama", "llama-server"
	url     string
	cmd     *exec.Cmd
	logPath string
	exited  chan struct{} // closed when the process has been reaped
	waitErr error         // set before exited is closed
	kill    sync.Once
}

// startProcess runs bin with args in dir (the test's own), logging to
// dir/NAME.log, in its own process group, and registers its stop with t.
// env, when not nil, replaces the environment.
func startProcess(t testing.TB, name, url, dir, bin string, args, env []string) (*process, error) {
	t.Helper()
	logPath := filepath.Join(dir, name+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logFile.Close() // the child holds its own descriptor

	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = procAttr()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w", bin, err)
	}
	p := &process{name: name, url: url, cmd: cmd, logPath: logPath, exited: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		p.stop()
		if t.Failed() {
			t.Logf("%s log (%s) tail:\n%s", name, url, p.LogTail())
		}
	})
	return p, nil
}

// waitReady polls GET url+path until it answers 200, the process exits, or
// limit passes.
func (p *process) waitReady(ctx context.Context, path string, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	client := &http.Client{Timeout: 2 * time.Second}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.url+path, nil)
		if err != nil {
			return err
		}
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-p.exited:
			return fmt.Errorf("%s exited before answering: %v", p.name, p.waitErr)
		case <-ctx.Done():
			return fmt.Errorf("%s did not answer GET %s%s with 200 within %s", p.name, p.url, path, limit)
		case <-tick.C:
		}
	}
}

// Kill kills the server and its children at once (SIGKILL to the process
// group), as a crash would, and waits until the server is gone. It is safe
// to call more than once and from any goroutine.
func (p *process) Kill() {
	p.kill.Do(func() {
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	})
	<-p.exited
}

// stop asks the server to shut down, then kills what is left. The group
// signal also reaches children (Ollama's runners), which outlive a killed
// server otherwise.
func (p *process) stop() {
	select {
	case <-p.exited:
	default:
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(10 * time.Second):
		}
	}
	p.Kill()
}

// LogTail returns the end of the server's log.
func (p *process) LogTail() string {
	b, err := os.ReadFile(p.logPath)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", p.logPath, err)
	}
	return tail(b, 16384)
}

// Exited reports whether the server process has ended, for tests that kill
// it or expect it to die.
func (p *process) Exited() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
