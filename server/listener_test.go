package server

import (
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// flakyListener fails its first accepts with EMFILE, as a process out of descriptors does.
type flakyListener struct {
	net.Listener
	fails int
}

func (l *flakyListener) Accept() (net.Conn, error) {
	if l.fails > 0 {
		l.fails--
		return nil, &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.EMFILE)}
	}
	return l.Listener.Accept()
}

func TestCappedListenerWaitsOutEMFILE(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	errs := 0
	ln := newCappedListener(&flakyListener{Listener: inner, fails: 3}, 2, 0, func(error) { errs++ })
	ln.pause = time.Millisecond
	defer ln.Close()
	// The kernel completes the connection before any Accept, so it waits in the backlog for the listener to
	// get past its failures.
	client, err := net.Dial("tcp", inner.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	c, err := ln.Accept()
	if err != nil {
		t.Fatalf("Accept after EMFILE: %v", err)
	}
	c.Close()
	if errs != 3 {
		t.Errorf("accept errors reported = %d, want 3", errs)
	}
	ln.Close()
	if _, err := ln.Accept(); err == nil {
		t.Error("Accept on a closed listener must fail")
	}
}

// dialFrom opens a TCP connection to addr from the loopback address ip (127.0.0.x).
func dialFrom(t *testing.T, ip, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestConnectionCaps opens connections past the per-IP and total caps, idle and slow ones, and checks that the
// server closes what it must and still answers a normal client.
func TestConnectionCaps(t *testing.T) {
	h := newHarness(t, harnessOpts{cfg: Config{MaxConns: 30, MaxConnsPerIP: 8, ReadTimeout: 300 * time.Millisecond}})
	addr := strings.TrimSuffix(strings.TrimPrefix(h.URL, "http://"), "/v1")
	var conns []net.Conn
	for i := range 40 { // 8 per address from five addresses: past the total cap
		c := dialFrom(t, "127.0.0."+string(rune('2'+i%5)), addr)
		if i%2 == 0 {
			c.Write([]byte("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n")) // slow headers, never finished
		}
		conns = append(conns, c)
	}
	resp, body := h.get(t, "/models")
	if resp.StatusCode != 200 || !strings.Contains(body, `"object":"list"`) {
		t.Fatalf("a normal client was not served: %d %s", resp.StatusCode, body)
	}
	// Every idle or slow connection is closed by the server, not left open.
	for i, c := range conns {
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.ReadAll(c); err != nil && !strings.Contains(err.Error(), "reset") {
			t.Errorf("connection %d was not closed by the server: %v", i, err)
			break
		}
	}
	select {
	case err := <-h.done:
		t.Fatalf("the server stopped: %v", err)
	default:
	}
}

// recordingConn records each write that reaches it.
type recordingConn struct {
	net.Conn
	writes []string
	closed bool
}

func (c *recordingConn) Write(p []byte) (int, error) {
	c.writes = append(c.writes, string(p))
	return len(p), nil
}

func (c *recordingConn) Close() error { c.closed = true; return nil }

// TestSlotConnHoldsWrites checks that what is written while the connection holds writes goes out with the next
// write, in order and in one call, or when the connection closes.
func TestSlotConnHoldsWrites(t *testing.T) {
	rec := &recordingConn{}
	c := &slotConn{Conn: rec, release: func() {}}
	c.Write([]byte("a"))
	c.holdWrites(true)
	c.Write([]byte("b"))
	c.Write([]byte("c"))
	c.holdWrites(false)
	if len(rec.writes) != 1 {
		t.Fatalf("writes while holding reached the connection: %q", rec.writes)
	}
	if n, err := c.Write([]byte("d")); n != 1 || err != nil {
		t.Errorf("Write after held ones = %d, %v; want 1, nil", n, err)
	}
	c.Write([]byte("e"))
	c.holdWrites(true)
	c.Write([]byte("f"))
	c.holdWrites(false)
	c.Close()
	want := []string{"a", "bcd", "e", "f"}
	if strings.Join(rec.writes, "|") != strings.Join(want, "|") || !rec.closed {
		t.Errorf("writes = %q (closed %v), want %q and closed", rec.writes, rec.closed, want)
	}
}
