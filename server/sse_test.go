package server

import (
	"bufio"
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestHeartbeatPingsEveryQuietTick checks that a silent stream is pinged on every tick (a ping must not count as
// the frame that makes the next tick skip its ping) and that a frame between ticks saves one ping.
func TestHeartbeatPingsEveryQuietTick(t *testing.T) {
	var buf bytes.Buffer
	sw := newSSEWriter(bufio.NewWriter(&buf), func() {})
	ticks := make(chan time.Time)
	stop := sw.pingOn(ticks)
	ticks <- time.Time{}
	ticks <- time.Time{}
	ticks <- time.Time{}
	if err := sw.data([]byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	ticks <- time.Time{} // a frame went out since the last tick: no ping
	ticks <- time.Time{}
	stop()
	if got := strings.Count(buf.String(), ": ping"); got != 4 {
		t.Errorf("pings = %d, want 4 (3 quiet ticks, one after a frame skipped, one more):\n%s", got, buf.String())
	}
}
