// Package redistest runs a real redis-server (Debian's package) for tests: on a free
// loopback port, in a temporary folder, stopped when the test ends. It never skips: a
// machine without redis-server fails the test, naming the package that provides it
// (scripts/test installs it).
package redistest

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Server is one redis-server process.
type Server struct {
	// Addr is host:port; URL is redis://Addr/0.
	Addr, URL string

	t    testing.TB
	dir  string
	port int
	args []string
	mu   sync.Mutex
	cmd  *exec.Cmd
	log  *os.File
}

// Start runs a redis-server for t: no persistence unless persist is set (then an
// append-only file in its folder, fsynced every write, so a restart finds what it held).
func Start(t testing.TB, persist bool) *Server {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("redis-server is not on PATH: install Debian's package (apt-get install -y redis-server); scripts/test does it as root")
	}
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{t: t, dir: t.TempDir(), port: port}
	s.Addr = "127.0.0.1:" + strconv.Itoa(port)
	s.URL = "redis://" + s.Addr + "/0"
	s.args = []string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", s.dir,
		"--save", "", "--daemonize", "no", "--protected-mode", "yes", "--loglevel", "warning"}
	if persist {
		s.args = append(s.args, "--appendonly", "yes", "--appendfsync", "always")
	} else {
		s.args = append(s.args, "--appendonly", "no")
	}
	s.args = append([]string{bin}, s.args...)
	if err := s.start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

func (s *Server) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	log, err := os.OpenFile(filepath.Join(s.dir, "redis.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(s.args[0], s.args[1:]...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		log.Close()
		return fmt.Errorf("redis-server: %w", err)
	}
	s.cmd, s.log = cmd, log
	deadline := time.Now().Add(10 * time.Second)
	for {
		if s.ping() == nil {
			return nil
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			b, _ := os.ReadFile(filepath.Join(s.dir, "redis.log"))
			return fmt.Errorf("redis-server did not answer PING within 10s; its log:\n%s", b)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// ping sends PING over RESP and expects +PONG.
func (s *Server) ping() error {
	c, err := net.DialTimeout("tcp", s.Addr, time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if !strings.HasPrefix(line, "+PONG") {
		return fmt.Errorf("PING answered %q", line)
	}
	return nil
}

// Kill ends the server with SIGKILL, as a crash would.
func (s *Server) Kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Kill()
	s.cmd.Wait()
	s.log.Close()
	s.cmd = nil
}

// Restart starts the server again on the same port and folder after Kill.
func (s *Server) Restart() {
	s.t.Helper()
	if err := s.start(); err != nil {
		s.t.Fatal(err)
	}
}

// Stop ends the server (SIGTERM, then SIGKILL after 5s).
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		s.cmd.Process.Kill()
		<-done
	}
	s.log.Close()
	s.cmd = nil
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
