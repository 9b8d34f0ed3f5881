package server

import (
	"bufio"
	"net"
	"strings"
	"testing"
	"time"
)

// TestTooLargeIsAnsweredNotReset checks that a client sending a body over the limit, whole, before reading (as
// the SDKs do) gets the 413 rather than a connection reset, which the SDKs take for a network error and retry.
func TestTooLargeIsAnsweredNotReset(t *testing.T) {
	h := newHarness(t, harnessOpts{cfg: Config{MaxBodyBytes: 1024}})
	addr := strings.TrimSuffix(strings.TrimPrefix(h.URL, "http://"), "/v1")
	for i := range 5 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		body := strings.Repeat("x", 4<<20)
		// Like the SDKs, send the whole body before reading the answer.
		c.SetWriteDeadline(time.Now().Add(10 * time.Second))
		_, werr := c.Write([]byte("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " +
			"4194304\r\n\r\n" + body))
		if werr != nil {
			t.Errorf("attempt %d: the body could not be sent: %v", i, werr)
		}
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		line, err := bufio.NewReader(c).ReadString('\n')
		c.Close()
		if err != nil || !strings.HasPrefix(line, "HTTP/1.1 413") {
			t.Errorf("attempt %d: status line %q, err %v; want the 413, not a reset", i, line, err)
		}
	}
}
