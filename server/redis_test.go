package server

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/ragproxy/ragproxy/cache"
)

// testRedisURL returns REDIS_URL, or the URL of a redis-server started for
// tb on a free loopback port and stopped when tb ends. Without either tb is
// skipped.
func testRedisURL(tb testing.TB) string {
	tb.Helper()
	if u := os.Getenv("REDIS_URL"); u != "" {
		return u
	}
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
	tb.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	deadline := time.Now().Add(10 * time.Second)
	for pingRedis(addr) != nil {
		if time.Now().After(deadline) {
			tb.Fatalf("redis-server on %s did not answer PING within 10s", addr)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return "redis://" + addr + "/0"
}

// pingRedis speaks RESP directly, so start-up is checked without the code
// under test.
func pingRedis(addr string) error {
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

func freePort(tb testing.TB) int {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// newTestRedis returns a Redis cache on url with a key prefix private to tb.
func newTestRedis(tb testing.TB, url string) *cache.Redis {
	tb.Helper()
	r, err := cache.NewRedis(cache.RedisConfig{URL: url, Timeout: 5 * time.Second,
		Prefix: fmt.Sprintf("test:%s:%d:", tb.Name(), time.Now().UnixNano())})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = r.Close() })
	return r
}

// cacheBackends are the caches the response cache is tested on: the
// in-process LRU and a real Redis (skipped when none is available).
func cacheBackends() []struct {
	name string
	new  func(tb testing.TB) cache.Cache
} {
	return []struct {
		name string
		new  func(tb testing.TB) cache.Cache
	}{
		{"lru", func(tb testing.TB) cache.Cache {
			c, err := cache.NewLRU(cache.LRUConfig{})
			if err != nil {
				tb.Fatal(err)
			}
			return c
		}},
		{"redis", func(tb testing.TB) cache.Cache { return newTestRedis(tb, testRedisURL(tb)) }},
	}
}
