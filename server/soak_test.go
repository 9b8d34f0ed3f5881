package server

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ragproxy/ragproxy/compat/openaitest"
)

// TestSoak runs 64 concurrent streaming clients against the proxy and a loopback fake upstream for a bounded time
// (3 s, or 20 s with RAGPROXY_SOAK=1 as CI sets it), then checks that no request failed and that the in-flight
// gauge and the goroutine count are back where they started (within a connection pool's worth). It logs p50/p99 through the proxy against the fake
// upstream alone; it asserts no timing.
func TestSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("soak test skipped in -short mode")
	}
	duration := 3 * time.Second
	if os.Getenv("RAGPROXY_SOAK") == "1" {
		duration = 20 * time.Second
	}
	m := newMetrics(t)
	fake := openaitest.Config{NoRecord: true, ChunkDelay: 2 * time.Millisecond,
		Reply: func(*openaitest.Request) openaitest.Reply {
			return openaitest.Reply{Content: "a short streamed answer of ten words for the soak"}
		}}
	h := newHarness(t, harnessOpts{cfg: Config{Observer: &MetricsObserver{Metrics: m}}, fake: fake})
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	run := func(base, model string, d time.Duration) (latencies []time.Duration, failures int64) {
		var mu sync.Mutex
		var failed atomic.Int64
		ctx, cancel := context.WithTimeout(context.Background(), d)
		defer cancel()
		var wg sync.WaitGroup
		for range 64 {
			wg.Go(func() {
				for ctx.Err() == nil {
					start := time.Now()
					if err := soakStream(client, base, model); err != nil {
						failed.Add(1)
						t.Logf("stream failed: %v", err)
						continue
					}
					mu.Lock()
					latencies = append(latencies, time.Since(start))
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		return latencies, failed.Load()
	}
	direct, directFailed := run(h.Fake.URL(), "gpt-4o-mini", duration*4/10)
	// A first short round fills the connection pools, so that what stays afterwards is the baseline.
	run(h.URL, "ragproxy", duration/10)
	// The baseline is taken once every request has finished, released and been untracked, not merely left the
	// in-flight gauge (which finish moves before it releases the request).
	waitFor(waitCtx(t), func() bool {
		return metricValue(t, m.Registry(), "ragproxy_inflight_streams", nil) == 0 && h.srv.tracked() == 0
	})
	before := runtime.NumGoroutine()
	proxied, failed := run(h.URL, "ragproxy", duration/2)
	if failed != 0 || directFailed != 0 || len(proxied) == 0 {
		t.Errorf("%d of %d proxied streams failed (%d direct)", failed, int64(len(proxied))+failed, directFailed)
	}
	pct := func(d []time.Duration, p float64) time.Duration {
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		return d[int(p*float64(len(d)-1))]
	}
	if len(direct) > 0 && len(proxied) > 0 {
		t.Logf("soak: %d proxied streams, p50 %v p99 %v (%.2fx / %.2fx of the fake upstream alone: p50 %v p99 %v)",
			len(proxied), pct(proxied, .5), pct(proxied, .99), float64(pct(proxied, .5))/float64(pct(direct, .5)),
			float64(pct(proxied, .99))/float64(pct(direct, .99)), pct(direct, .5), pct(direct, .99))
	}
	settled := waitFor(waitCtx(t), func() bool {
		// Pools may hold a few more idle connections than before; a leak would grow with the thousands of streams.
		return metricValue(t, m.Registry(), "ragproxy_inflight_streams", nil) == 0 && runtime.NumGoroutine() <= before+64
	})
	if !settled {
		t.Errorf("after the soak: in-flight streams %v, goroutines %d (were %d)",
			metricValue(t, m.Registry(), "ragproxy_inflight_streams", nil), runtime.NumGoroutine(), before)
	}
}

// soakStream makes one streaming request and reads it to [DONE].
func soakStream(client *http.Client, base, model string) error {
	resp, err := client.Post(base+"/chat/completions", "application/json",
		strings.NewReader(`{"model":"`+model+`","stream":true,"messages":[{"role":"user","content":"soak"}]}`))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if sc.Text() == "data: [DONE]" {
			return nil
		}
		if strings.Contains(sc.Text(), `"error"`) {
			return fmt.Errorf("error frame: %s", sc.Text())
		}
	}
	return fmt.Errorf("stream ended without [DONE]: %v", sc.Err())
}
