package observability

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// fakeClock is a manual clock for Config.Now.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func TestStreamRecorder(t *testing.T) {
	tests := []struct {
		name       string
		run        func(r *StreamRecorder, c *fakeClock)
		want       StreamStats
		wantTTFT   uint64 // observations in the time-to-first-token histogram
		wantDiscon float64
	}{
		{
			name: "complete stream",
			run: func(r *StreamRecorder, c *fakeClock) {
				c.Advance(250 * time.Millisecond)
				r.Content()
				c.Advance(100 * time.Millisecond)
				r.Content() // not the first token: ignored
				c.Advance(650 * time.Millisecond)
				r.Usage(1200, 340)
			},
			want:     StreamStats{TimeToFirstToken: 250 * time.Millisecond, Duration: time.Second, InputTokens: 1200, OutputTokens: 340},
			wantTTFT: 1,
		},
		{
			name: "client left before the first token",
			run: func(r *StreamRecorder, c *fakeClock) {
				c.Advance(2 * time.Second)
				r.Disconnected()
			},
			want:       StreamStats{Duration: 2 * time.Second, Disconnected: true},
			wantDiscon: 1,
		},
		{
			name: "client left mid-stream, disconnect reported twice",
			run: func(r *StreamRecorder, c *fakeClock) {
				c.Advance(40 * time.Millisecond)
				r.Content()
				c.Advance(time.Second)
				r.Disconnected()
				r.Disconnected()
			},
			want:       StreamStats{TimeToFirstToken: 40 * time.Millisecond, Duration: 1040 * time.Millisecond, Disconnected: true},
			wantTTFT:   1,
			wantDiscon: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := &fakeClock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
			m := newTestMetrics(t, Config{Models: []string{"gpt-4o-mini"}, Now: clock.Now, NoRuntimeMetrics: true})
			rec := m.StartStream("gpt-4o-mini", clock.Now())
			if got := testutil.ToFloat64(m.inflight); got != 1 {
				t.Errorf("in flight during the stream = %v, want 1", got)
			}
			tt.run(rec, clock)
			got := rec.End()
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("stats (-want +got):\n%s", diff)
			}
			clock.Advance(time.Minute)
			if again := rec.End(); again != got {
				t.Errorf("second End returned %+v, want %+v", again, got)
			}
			rec.Content() // after End: no effect
			if got := testutil.ToFloat64(m.inflight); got != 0 {
				t.Errorf("in flight after End (twice) = %v, want 0", got)
			}
			if got := testutil.ToFloat64(m.disconnects); got != tt.wantDiscon {
				t.Errorf("disconnects = %v, want %v", got, tt.wantDiscon)
			}
			var ttftCount uint64
			var ttftSum float64
			for _, s := range histogramSamples(t, m, "gen_ai_server_time_to_first_token_seconds") {
				ttftCount += s.count
				ttftSum += s.sum
			}
			if ttftCount != tt.wantTTFT || ttftSum != tt.want.TimeToFirstToken.Seconds() {
				t.Errorf("ttft histogram count=%d sum=%v, want count=%d sum=%v", ttftCount, ttftSum, tt.wantTTFT, tt.want.TimeToFirstToken.Seconds())
			}
			dur := histogramSamples(t, m, "ragproxy_stream_duration_seconds")
			if len(dur) != 1 || dur[0].count != 1 || dur[0].sum != tt.want.Duration.Seconds() {
				t.Errorf("stream duration series = %+v, want one observation of %v", dur, tt.want.Duration.Seconds())
			}
		})
	}
}

// TestInflightReturnsToZeroAfterAbandonedStreams runs the pattern documented
// on StreamRecorder in a real HTTP server, has clients abandon their streams
// after the first event, and checks the gauge comes back to zero and every
// abandonment is counted.
func TestInflightReturnsToZeroAfterAbandonedStreams(t *testing.T) {
	m := newTestMetrics(t, Config{Models: []string{"gpt-4o-mini"}, NoRuntimeMetrics: true})
	const clients = 6
	var handlers sync.WaitGroup
	handlers.Add(clients)
	started := make(chan struct{}, clients)

	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer handlers.Done()
		rec := m.StartStream("gpt-4o-mini", time.Now())
		defer rec.End()
		w.Header().Set("Content-Type", "text/event-stream")
		flusher := w.(http.Flusher)
		started <- struct{}{}
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			if _, err := fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{\"content\":\"tok%d\"}}]}\n\n", i); err != nil {
				rec.Disconnected()
				return
			}
			flusher.Flush()
			rec.Content()
			select {
			case <-r.Context().Done():
				rec.Disconnected()
				return
			case <-tick.C:
			}
		}
	}))
	defer srv.Close()

	var clientsDone sync.WaitGroup
	for range clients {
		clientsDone.Add(1)
		go func() {
			defer clientsDone.Done()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, nil)
			if err != nil {
				t.Error(err)
				return
			}
			res, err := srv.Client().Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			defer res.Body.Close()
			line, err := bufio.NewReader(res.Body).ReadString('\n')
			if err != nil || line == "" {
				t.Errorf("first event: %q, %v", line, err)
			}
			cancel() // abandon the stream
		}()
	}
	for range clients {
		<-started
	}
	clientsDone.Wait()

	finished := make(chan struct{})
	go func() { handlers.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-time.After(30 * time.Second):
		t.Fatalf("handlers did not notice the abandoned streams; in flight = %v", testutil.ToFloat64(m.inflight))
	}
	if got := testutil.ToFloat64(m.inflight); got != 0 {
		t.Errorf("ragproxy_inflight_streams = %v after abandoned streams, want 0", got)
	}
	if got := testutil.ToFloat64(m.disconnects); got != clients {
		t.Errorf("ragproxy_client_disconnects_total = %v, want %d", got, clients)
	}
	dur := histogramSamples(t, m, "ragproxy_stream_duration_seconds")
	if len(dur) != 1 || dur[0].count != clients {
		t.Errorf("stream durations = %+v, want %d observations", dur, clients)
	}
}
