// Package redistest runs a real redis-server (Debian's package) for tests: on a free
// loopback port, in a temporary folder, stopped when the test ends. It never skips: a
// machine without redis-server fails the test, naming the package that provides it
// (scripts/test installs it).
package redistest

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
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
	// Addr is host:port; URL is redis://Addr/0, or rediss://Addr/0 for StartTLS.
	Addr, URL string
	// TLS, for StartTLS, is a client configuration that trusts the server's
	// certificate (made for the test, self-signed, for 127.0.0.1); nil otherwise.
	TLS *tls.Config

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
	return start(t, persist, false)
}

// StartTLS runs a redis-server for t that speaks TLS only (Debian's is built with it),
// with a self-signed certificate made for the test; Server.TLS trusts it.
func StartTLS(t testing.TB) *Server {
	t.Helper()
	return start(t, false, true)
}

func start(t testing.TB, persist, withTLS bool) *Server {
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
	if withTLS {
		cert, key, cfg, err := selfSigned(s.dir)
		if err != nil {
			t.Fatal(err)
		}
		s.TLS = cfg
		s.URL = "rediss://" + s.Addr + "/0"
		s.args = append(s.args, "--port", "0", "--tls-port", strconv.Itoa(port), "--tls-cert-file", cert,
			"--tls-key-file", key, "--tls-ca-cert-file", cert, "--tls-auth-clients", "no")
	}
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
	var c net.Conn
	var err error
	if s.TLS != nil {
		c, err = tls.DialWithDialer(&net.Dialer{Timeout: time.Second}, "tcp", s.Addr, s.TLS)
	} else {
		c, err = net.DialTimeout("tcp", s.Addr, time.Second)
	}
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

// selfSigned writes a certificate for 127.0.0.1 and its key (PEM) into dir, and returns
// their paths and a client configuration that trusts the certificate.
func selfSigned(dir string) (certFile, keyFile string, cfg *tls.Config, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "redistest"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return "", "", nil, err
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return "", "", nil, err
	}
	certFile, keyFile = filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		return "", "", nil, err
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		return "", "", nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return "", "", nil, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}, nil
}
