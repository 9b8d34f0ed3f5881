// Package redistest gives tests a real Redis: the one REDIS_URL names, or a redis-server process started on a
// free loopback port for the test and stopped when it ends. Tests skip when neither is available. It is for
// tests only.
package redistest

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Server is a redis-server process a test started for itself.
type Server struct {
	// URL is the server's redis:// URL (database 0).
	URL string
	cmd *exec.Cmd
}

// URL returns REDIS_URL when it is set, else the URL of a server started for tb.
func URL(tb testing.TB) string {
	tb.Helper()
	if u := os.Getenv("REDIS_URL"); u != "" {
		return u
	}
	return Start(tb).URL
}

// Start starts a private redis-server that tb's cleanup stops, skipping tb when redis-server is not installed.
func Start(tb testing.TB) *Server {
	tb.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		tb.Skip("skipping: REDIS_URL is unset and redis-server is not on PATH (apt-get install -y redis-server)")
	}
	port := FreePort(tb)
	cmd := exec.Command(bin, "--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	cmd.Dir = tb.TempDir()
	if err := cmd.Start(); err != nil {
		tb.Fatalf("start redis-server: %v", err)
	}
	s := &Server{URL: fmt.Sprintf("redis://127.0.0.1:%d/0", port), cmd: cmd}
	tb.Cleanup(s.Kill)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	deadline := time.Now().Add(10 * time.Second)
	for ping(addr) != nil {
		if time.Now().After(deadline) {
			tb.Fatalf("redis-server on %s did not answer PING within 10s", addr)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return s
}

// Kill stops the server and waits for it; calling it twice is harmless.
func (s *Server) Kill() {
	if s.cmd.ProcessState != nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGCONT) // a stopped process cannot act on SIGKILL's exit otherwise
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
}

// Hang stops the process with SIGSTOP. It keeps its socket: connections are accepted by the kernel and never
// answered, which is what a server stalled by a long command or swapping looks like.
func (s *Server) Hang() error {
	return s.cmd.Process.Signal(syscall.SIGSTOP)
}

// ping speaks RESP directly, so start-up is checked independently of the code under test.
func ping(addr string) error {
	conn, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(time.Second))
	if _, err := conn.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return err
	}
	if !strings.HasPrefix(line, "+PONG") {
		return fmt.Errorf("unexpected reply %q", line)
	}
	return nil
}

// FreePort returns a loopback TCP port that was free a moment ago.
func FreePort(tb testing.TB) int {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("find free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
