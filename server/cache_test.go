package server

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ragproxy/ragproxy/cache"
	"github.com/ragproxy/ragproxy/compat"
	"github.com/ragproxy/ragproxy/compat/openaitest"
	"github.com/ragproxy/ragproxy/internal/redistest"
	"github.com/ragproxy/ragproxy/internal/ssetest"
)

const cacheQuestion = `"messages":[{"role":"user","content":"when is enrolment?"}]`

// cacheGrounding filters and cites like the RetrievalGrounder, so the stored
// record must keep what the client got, not what the upstream sent.
func cacheGrounding() *fakeGrounder {
	return &fakeGrounder{ground: func() *Grounding {
		return &Grounding{NewFilter: newUpperFilter}
	}}
}

func newCacheHarness(t testing.TB, c cache.Cache, cfg Config, fake openaitest.Config) *harness {
	t.Helper()
	cfg.Cache = c
	if cfg.Grounder == nil {
		cfg.Grounder = cacheGrounding()
	}
	return newHarness(t, harnessOpts{cfg: cfg, fake: fake})
}

// completionOf reads the parts of a chat.completion a cached answer keeps.
type completionOf struct {
	Model   string `json:"model"`
	Choices []struct {
		Message struct {
			Content     string              `json:"content"`
			Annotations []compat.Annotation `json:"annotations"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage compat.Usage `json:"usage"`
}

func parseCompletion(t testing.TB, body string) completionOf {
	t.Helper()
	var c completionOf
	if err := json.Unmarshal([]byte(body), &c); err != nil {
		t.Fatalf("completion %q: %v", body, err)
	}
	return c
}

func TestCacheReplaysOneRecordAsStreamAndJSON(t *testing.T) {
	for _, be := range cacheBackends() {
		t.Run(be.name, func(t *testing.T) {
			m := newMetrics(t)
			h := newCacheHarness(t, be.new(t), Config{Observer: &MetricsObserver{Metrics: m}}, openaitest.Config{})
			body := `{"model":"ragproxy","temperature":0,` + cacheQuestion + `}`

			resp, first := h.post(t, "/chat/completions", body)
			if resp.StatusCode != http.StatusOK || resp.Header.Get("X-Cache") != "MISS" {
				t.Fatalf("first: %d x-cache %q %s", resp.StatusCode, resp.Header.Get("X-Cache"), first)
			}
			resp, stream := h.post(t, "/chat/completions", `{"model":"ragproxy","temperature":0,"stream":true,`+cacheQuestion+`}`)
			if got := resp.Header.Get("X-Cache"); got != "HIT" {
				t.Errorf("stream x-cache = %q, want HIT", got)
			}
			golden(t, "cache_hit_stream.txt", normalize(stream))
			resp, withUsage := h.post(t, "/chat/completions", `{"model":"ragproxy","temperature":0,"stream":true,"stream_options":{"include_usage":true},`+cacheQuestion+`}`)
			if resp.Header.Get("X-Cache") != "HIT" || !strings.Contains(withUsage, `"choices":[],"usage":{"prompt_tokens"`) {
				t.Errorf("stream with include_usage: x-cache %q, no usage chunk:\n%s", resp.Header.Get("X-Cache"), withUsage)
			}
			resp, again := h.post(t, "/chat/completions", body)
			if got := resp.Header.Get("X-Cache"); got != "HIT" {
				t.Errorf("JSON x-cache = %q, want HIT", got)
			}
			if diff := cmp.Diff(parseCompletion(t, first), parseCompletion(t, again)); diff != "" {
				t.Errorf("replayed completion (-upstream +cached):\n%s", diff)
			}
			if !strings.Contains(first, "YOU SAID: WHEN IS ENROLMENT?") {
				t.Errorf("first answer was not filtered: %s", first)
			}
			if c := parseCompletion(t, first); len(c.Choices) != 1 || len(c.Choices[0].Message.Annotations) != 1 {
				t.Errorf("first answer lacks its annotation: %s", first)
			}
			if n := len(h.Fake.Requests()); n != 1 {
				t.Errorf("upstream calls = %d, want 1", n)
			}
			reg := m.Registry()
			for result, want := range map[string]float64{"hit": 3, "miss": 1} {
				if got := metricValue(t, reg, "ragproxy_cache_requests_total", map[string]string{"cache": "response", "result": result}); got != want {
					t.Errorf("cache %s = %v, want %v", result, got, want)
				}
			}
		})
	}
}

type cacheStep struct {
	body   string
	header []string
	// xCache is the wanted X-Cache header ("" = none).
	xCache string
}

func TestCachePolicy(t *testing.T) {
	det := `{"temperature":0,` + cacheQuestion + `}`
	tests := []struct {
		name  string
		steps []cacheStep
		calls int
	}{
		{"deterministic", []cacheStep{{det, nil, "MISS"}, {det, nil, "HIT"}}, 1},
		{"no-cache skips the read", []cacheStep{{det, nil, "MISS"}, {det, []string{"Cache-Control", "no-cache"}, "MISS"}, {det, nil, "HIT"}}, 2},
		{"no-store skips the write", []cacheStep{{det, []string{"Cache-Control", "no-store"}, ""}, {det, nil, "MISS"}, {det, []string{"Cache-Control", "no-store"}, "HIT"}}, 2},
		{"both", []cacheStep{{det, nil, "MISS"}, {det, []string{"Cache-Control", "no-cache, no-store"}, ""}}, 2},
		{"default temperature", []cacheStep{{`{` + cacheQuestion + `}`, nil, ""}, {`{` + cacheQuestion + `}`, nil, ""}}, 2},
		{"temperature 0.7", []cacheStep{{`{"temperature":0.7,` + cacheQuestion + `}`, nil, ""}, {`{"temperature":0.7,` + cacheQuestion + `}`, nil, ""}}, 2},
		{"opt-in header", []cacheStep{{`{` + cacheQuestion + `}`, []string{"X-Ragproxy-Cache", "on"}, "MISS"}, {`{` + cacheQuestion + `}`, []string{"X-Ragproxy-Cache", "on"}, "HIT"}}, 1},
		{"opt-out header", []cacheStep{{det, nil, "MISS"}, {det, []string{"X-Ragproxy-Cache", "off"}, ""}}, 2},
		{"n=2", []cacheStep{{`{"temperature":0,"n":2,` + cacheQuestion + `}`, nil, ""}, {`{"temperature":0,"n":2,` + cacheQuestion + `}`, nil, ""}}, 2},
		{"n=1", []cacheStep{{`{"temperature":0,"n":1,` + cacheQuestion + `}`, nil, "MISS"}, {`{"temperature":0,"n":1,` + cacheQuestion + `}`, nil, "HIT"}}, 1},
		{"image part", []cacheStep{
			{`{"temperature":0,"messages":[{"role":"user","content":[{"type":"text","text":"what is this?"},{"type":"image_url","image_url":{"url":"https://example.edu/a.png"}}]}]}`, nil, ""},
			{`{"temperature":0,"messages":[{"role":"user","content":[{"type":"text","text":"what is this?"},{"type":"image_url","image_url":{"url":"https://example.edu/a.png"}}]}]}`, nil, ""}}, 2},
		{"sampling parameters are in the key", []cacheStep{{`{"temperature":0,"seed":1,` + cacheQuestion + `}`, nil, "MISS"}, {`{"temperature":0,"seed":2,` + cacheQuestion + `}`, nil, "MISS"}, {`{"seed":1,"temperature":0.0,` + cacheQuestion + `}`, nil, "HIT"}}, 2},
		{"user is not in the key", []cacheStep{{`{"temperature":0,"user":"a",` + cacheQuestion + `}`, nil, "MISS"}, {`{"temperature":0,"user":"b",` + cacheQuestion + `}`, nil, "HIT"}}, 1},
		{"task header is in the key", []cacheStep{{det, nil, "MISS"}, {det, []string{"X-OpenWebUI-Task", "title_generation"}, "MISS"}}, 2},
		{"tool calls are not stored", []cacheStep{
			{`{"temperature":0,"tools":[{"type":"function","function":{"name":"f"}}],` + cacheQuestion + `}`, nil, "MISS"},
			{`{"temperature":0,"tools":[{"type":"function","function":{"name":"f"}}],` + cacheQuestion + `}`, nil, "MISS"}}, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lru, err := cache.NewLRU(cache.LRUConfig{})
			if err != nil {
				t.Fatal(err)
			}
			h := newCacheHarness(t, lru, Config{}, openaitest.Config{Reply: func(r *openaitest.Request) openaitest.Reply {
				if strings.Contains(string(r.Body), `"tools"`) {
					return openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "call_1", Name: "f", Arguments: "{}"}}}
				}
				return openaitest.Echo(r)
			}})
			for i, s := range tc.steps {
				resp, body := h.post(t, "/chat/completions", s.body, s.header...)
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("step %d: %d %s", i, resp.StatusCode, body)
				}
				if got := resp.Header.Get("X-Cache"); got != s.xCache {
					t.Errorf("step %d: x-cache = %q, want %q", i, got, s.xCache)
				}
			}
			if n := len(h.Fake.Requests()); n != tc.calls {
				t.Errorf("upstream calls = %d, want %d", n, tc.calls)
			}
		})
	}
}

// TestCacheIndexVersion checks an answer cached under one index version is
// not served once the index changed.
func TestCacheIndexVersion(t *testing.T) {
	for _, be := range cacheBackends() {
		t.Run(be.name, func(t *testing.T) {
			shared := be.new(t)
			body := `{"temperature":0,` + cacheQuestion + `}`
			old := newCacheHarness(t, shared, Config{IndexVersion: "v1", PromptVersion: "p1"}, openaitest.Config{})
			for _, want := range []string{"MISS", "HIT"} {
				if resp, _ := old.post(t, "/chat/completions", body); resp.Header.Get("X-Cache") != want {
					t.Fatalf("v1: x-cache = %q, want %q", resp.Header.Get("X-Cache"), want)
				}
			}
			for _, cfg := range []Config{{IndexVersion: "v2", PromptVersion: "p1"}, {IndexVersion: "v1", PromptVersion: "p2"},
				{IndexVersion: "v1", PromptVersion: "p1", RetrievalSettings: `{"KeepPages":4}`}} {
				h := newCacheHarness(t, shared, cfg, openaitest.Config{})
				if resp, _ := h.post(t, "/chat/completions", body); resp.Header.Get("X-Cache") != "MISS" {
					t.Errorf("%+v: x-cache = %q, want MISS", cfg, resp.Header.Get("X-Cache"))
				}
			}
		})
	}
}

// TestCacheConcurrentMisses sends 50 identical deterministic requests at
// once, half streamed: exactly one goes upstream and all get its answer.
func TestCacheConcurrentMisses(t *testing.T) {
	for _, be := range cacheBackends() {
		t.Run(be.name, func(t *testing.T) {
			h := newCacheHarness(t, be.new(t), Config{}, openaitest.Config{FirstByteDelay: 200 * time.Millisecond})
			const n = 50
			var wg sync.WaitGroup
			var mu sync.Mutex
			xcache := map[string]int{}
			answers := map[string]int{}
			for i := range n {
				wg.Go(func() {
					stream := i%2 == 1
					resp, body := h.postNoKeepAlive(t, `{"temperature":0,"stream":`+boolJSON(stream)+`,`+cacheQuestion+`}`)
					text := body
					if stream {
						text = ssetest.Answer(t, body)
					} else if resp.StatusCode == http.StatusOK {
						text = parseCompletion(t, body).Choices[0].Message.Content
					}
					mu.Lock()
					defer mu.Unlock()
					xcache[resp.Header.Get("X-Cache")]++
					answers[text]++
				})
			}
			wg.Wait()
			if got := len(h.Fake.Requests()); got != 1 {
				t.Errorf("upstream calls = %d, want 1", got)
			}
			if diff := cmp.Diff(map[string]int{"MISS": 1, "HIT": n - 1}, xcache); diff != "" {
				t.Errorf("x-cache headers (-want +got):\n%s", diff)
			}
			if len(answers) != 1 {
				t.Errorf("answers differ: %v", answers)
			}
		})
	}
}

// postNoKeepAlive posts a chat request on a connection of its own: fasthttp's
// shutdown waits on keep-alive connections caught between requests, which
// many concurrent pooled connections make likely.
func (h *harness) postNoKeepAlive(t testing.TB, body string) (*http.Response, string) {
	t.Helper()
	req, err := newStreamRequest(context.Background(), h.URL, body)
	if err != nil {
		t.Error(err)
		return &http.Response{}, ""
	}
	resp, err := httpClientNoPool().Do(req)
	if err != nil {
		t.Error(err)
		return &http.Response{}, ""
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Error(err)
	}
	return resp, string(b)
}

func boolJSON(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// TestCacheRedisDown checks a cache that fails never fails a request: every
// request is answered, uncached, and the failures are reported.
func TestCacheRedisDown(t *testing.T) {
	r, err := cache.NewRedis(cache.RedisConfig{URL: "redis://127.0.0.1:" + strconv.Itoa(redistest.FreePort(t)) + "/0", Timeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var failures atomic.Int64
	tolerant := &cache.Tolerant{Cache: r, Logger: slog.New(slog.DiscardHandler), OnError: func(string, error) { failures.Add(1) }}
	h := newCacheHarness(t, tolerant, Config{}, openaitest.Config{})
	misses := 0
	for _, stream := range []bool{false, true} {
		for range 2 {
			resp, got := h.post(t, "/chat/completions", `{"temperature":0,"stream":`+boolJSON(stream)+`,`+cacheQuestion+`}`)
			if resp.Header.Get("X-Cache") == "MISS" {
				misses++
			}
			if stream {
				got = ssetest.Answer(t, got)
			}
			if resp.StatusCode != http.StatusOK || !strings.Contains(got, "YOU SAID: WHEN IS ENROLMENT?") {
				t.Fatalf("%d %s", resp.StatusCode, got)
			}
		}
	}
	// A request arriving while the previous identical answer is still being
	// handed over may share it (x-cache: HIT); every other one went upstream.
	if n := len(h.Fake.Requests()); n != misses || n < 2 {
		t.Errorf("upstream calls = %d, misses %d; want equal and at least 2", n, misses)
	}
	if failures.Load() == 0 {
		t.Error("no cache failure was reported")
	}
}

// TestCacheAnswerNotShared checks requests waiting on a leader whose answer
// cannot be kept ask upstream themselves.
func TestCacheAnswerNotShared(t *testing.T) {
	lru, _ := cache.NewLRU(cache.LRUConfig{})
	h := newCacheHarness(t, lru, Config{}, openaitest.Config{FirstByteDelay: 100 * time.Millisecond})
	h.Fake.Fail(openaitest.Fault{Status: http.StatusBadRequest})
	var wg sync.WaitGroup
	codes := make([]int, 4)
	for i := range codes {
		wg.Go(func() {
			resp, _ := h.postNoKeepAlive(t, `{"temperature":0,`+cacheQuestion+`}`)
			codes[i] = resp.StatusCode
		})
	}
	wg.Wait()
	ok := 0
	for _, c := range codes {
		if c == http.StatusOK {
			ok++
		}
	}
	if ok < 3 {
		t.Errorf("status codes %v: the requests behind a failed leader were not answered", codes)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := h.Fake.Wait(ctx, 1); err != nil {
		t.Errorf("no second upstream call: %v", err)
	}
}

// lifeRecorder passes on each request's EventStart and EventEnd.
type lifeRecorder struct {
	starts chan struct{}
	ends   chan Event
}

func (o *lifeRecorder) Observe(_ context.Context, ev Event) {
	switch ev.Kind {
	case EventStart:
		o.starts <- struct{}{}
	case EventEnd:
		o.ends <- ev
	}
}

// TestCacheWaiterClientGone checks a request waiting on an identical one in flight whose own client leaves is
// recorded as a client that left (not as a drain's 503), and that the request it waited on is still answered.
func TestCacheWaiterClientGone(t *testing.T) {
	lru, _ := cache.NewLRU(cache.LRUConfig{})
	rec := &lifeRecorder{starts: make(chan struct{}, 2), ends: make(chan Event, 2)}
	upstream, answer := make(chan struct{}, 1), make(chan struct{})
	h := newCacheHarness(t, lru, Config{Observer: rec}, openaitest.Config{Reply: func(r *openaitest.Request) openaitest.Reply {
		upstream <- struct{}{}
		<-answer // the leader's answer waits until the waiter's client has left
		return openaitest.Echo(r)
	}})
	var once sync.Once
	release := func() { once.Do(func() { close(answer) }) }
	t.Cleanup(release) // runs before the harness stops
	wait := waitCtx(t)
	await := func(what string) {
		t.Helper()
		select {
		case <-rec.starts:
		case <-wait.Done():
			t.Fatalf("%s never started", what)
		}
	}
	body := `{"temperature":0,` + cacheQuestion + `}`
	leader := make(chan int, 1)
	go func() {
		resp, _ := h.postNoKeepAlive(t, body)
		leader <- resp.StatusCode
	}()
	await("the leader")
	select {
	case <-upstream:
	case <-wait.Done():
		t.Fatal("the leader never went upstream")
	}
	ctx, leave := context.WithCancel(context.Background())
	req, err := newStreamRequest(ctx, h.URL, body)
	if err != nil {
		t.Fatal(err)
	}
	gone := make(chan struct{})
	go func() {
		defer close(gone)
		if resp, err := httpClientNoPool().Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	await("the waiter")
	leave()
	<-gone
	var ev Event
	select {
	case ev = <-rec.ends:
	case <-wait.Done():
		t.Fatal("the waiter never ended")
	}
	if !ev.ClientGone || !errors.Is(ev.Err, errClientGone) || ev.Status == http.StatusServiceUnavailable {
		t.Errorf("waiter ended with status %d, client gone %v, err %v; want the client recorded as gone", ev.Status,
			ev.ClientGone, ev.Err)
	}
	release()
	select {
	case code := <-leader:
		if code != http.StatusOK {
			t.Errorf("leader: status %d, want 200", code)
		}
	case <-wait.Done():
		t.Fatal("the leader was never answered")
	}
	if ev := <-rec.ends; ev.Status != http.StatusOK || ev.Cache != "miss" {
		t.Errorf("leader ended with status %d, cache %q; want 200 and a miss", ev.Status, ev.Cache)
	}
}

// TestCacheSkipsNoStore checks that an answer whose Grounding says NoStore (grounded without query vectors) is not
// stored, stream or not: the next identical request is a MISS again and is answered anew.
func TestCacheSkipsNoStore(t *testing.T) {
	for _, be := range cacheBackends() {
		t.Run(be.name, func(t *testing.T) {
			g := &fakeGrounder{ground: func() *Grounding { return &Grounding{NewFilter: newUpperFilter, NoStore: true} }}
			h := newCacheHarness(t, be.new(t), Config{Grounder: g}, openaitest.Config{})
			for i, body := range []string{
				`{"model":"ragproxy","temperature":0,` + cacheQuestion + `}`,
				`{"model":"ragproxy","temperature":0,"stream":true,` + cacheQuestion + `}`,
				`{"model":"ragproxy","temperature":0,` + cacheQuestion + `}`,
			} {
				resp, out := h.post(t, "/chat/completions", body)
				if resp.StatusCode != http.StatusOK || resp.Header.Get("X-Cache") != "MISS" {
					t.Errorf("request %d: %d x-cache %q, want MISS: %s", i, resp.StatusCode, resp.Header.Get("X-Cache"), out)
				}
			}
			if n := len(h.Fake.Requests()); n != 3 {
				t.Errorf("upstream saw %d requests, want 3", n)
			}
		})
	}
}
