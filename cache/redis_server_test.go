package cache

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

// redisServer is a redis-server process a test started for itself.
type redisServer struct {
	url string
	cmd *exec.Cmd
}

// testRedisURL returns the URL of a Redis server for tb: REDIS_URL if set, else a redis-server started on a
// free loopback port for this test and stopped when it ends. Without either the test is skipped.
func testRedisURL(tb testing.TB) string {
	tb.Helper()
	if u := os.Getenv("REDIS_URL"); u != "" {
		return u
	}
	return startRedis(tb).url
}

// startRedis starts a private redis-server, skipping tb when redis-server is not installed.
func startRedis(tb testing.TB) *redisServer {
	tb.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		tb.Skip("skipping: REDIS_URL is unset and redis-server is not on PATH (apt-get install -y redis-server)")
	}
	port := freePort(tb)
	cmd := exec.Command(bin, "--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	cmd.Dir = tb.TempDir()
	if err := cmd.Start(); err != nil {
		tb.Fatalf("start redis-server: %v", err)
	}
	s := &redisServer{url: fmt.Sprintf("redis://127.0.0.1:%d/0", port), cmd: cmd}
	tb.Cleanup(s.kill)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if pingRaw(addr) == nil {
			return s
		}
		if time.Now().After(deadline) {
			tb.Fatalf("redis-server on %s did not answer PING within 10s", addr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// kill stops the server and waits for it; calling it twice is harmless.
func (s *redisServer) kill() {
	if s.cmd.ProcessState != nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGCONT) // a stopped process cannot act on SIGKILL's exit otherwise
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
}

// pingRaw speaks RESP directly, so server start-up is checked independently of the code under test.
func pingRaw(addr string) error {
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

// freePort returns a loopback TCP port that was free a moment ago.
func freePort(tb testing.TB) int {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("find free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// newTestRedis returns a Redis cache on the test server with a key prefix private to tb.
func newTestRedis(tb testing.TB, url string, timeout time.Duration) *Redis {
	tb.Helper()
	r, err := NewRedis(RedisConfig{URL: url, Timeout: timeout, Prefix: fmt.Sprintf("test:%s:%d:", tb.Name(), time.Now().UnixNano())})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = r.Close() })
	return r
}

// generousTimeout is the Redis timeout of tests about behaviour rather than timeouts, so that a loaded
// machine (or the race detector) does not turn a slow reply into a spurious failure.
const generousTimeout = 5 * time.Second
