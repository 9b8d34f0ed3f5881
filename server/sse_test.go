package server

import (
	"bufio"
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestHeartbeatPingsEveryQuietTick checks that a silent stream is pinged on every tick (a ping must not count as
// the frame that makes the next tick skip its ping) and that a frame between ticks saves one ping. Each call of
// ping is one tick of the heartbeat.
func TestHeartbeatPingsEveryQuietTick(t *testing.T) {
	var buf bytes.Buffer
	sw := newSSEWriter(bufio.NewWriter(&buf), func() {})
	for range 3 {
		if err := sw.ping(); err != nil {
			t.Fatal(err)
		}
	}
	if err := sw.data([]byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	_ = sw.ping() // a frame went out since the last tick: no ping
	_ = sw.ping()
	if got := strings.Count(buf.String(), ": ping"); got != 4 {
		t.Errorf("pings = %d, want 4 (3 quiet ticks, one after a frame skipped, one more):\n%s", got, buf.String())
	}
}

// TestHeartbeatStops checks that the heartbeat pings a silent stream again and again, and never once stop has
// returned.
func TestHeartbeatStops(t *testing.T) {
	var buf bytes.Buffer
	sw := newSSEWriter(bufio.NewWriter(&buf), func() {})
	pings := func() int {
		sw.mu.Lock()
		defer sw.mu.Unlock()
		return strings.Count(buf.String(), ": ping")
	}
	stop := sw.heartbeat(time.Millisecond)
	deadline := time.Now().Add(10 * time.Second)
	for pings() < 3 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	stop()
	n := pings()
	if n < 3 {
		t.Fatalf("pings = %d after 10s of 1ms ticks, want at least 3", n)
	}
	time.Sleep(20 * time.Millisecond) // twenty more ticks, had it not stopped
	if got := pings(); got != n {
		t.Errorf("pings = %d after stop, want %d", got, n)
	}
}
