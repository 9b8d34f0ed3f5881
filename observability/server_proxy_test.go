package observability_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ragproxy/ragproxy/cache"
	"github.com/ragproxy/ragproxy/compat/openaitest"
	"github.com/ragproxy/ragproxy/embedding"
	"github.com/ragproxy/ragproxy/examples"
	"github.com/ragproxy/ragproxy/grounding"
	"github.com/ragproxy/ragproxy/internal/indextest"
	"github.com/ragproxy/ragproxy/observability"
	"github.com/ragproxy/ragproxy/retrieval"
	"github.com/ragproxy/ragproxy/retrieval/faq"
	"github.com/ragproxy/ragproxy/server"
	"github.com/ragproxy/ragproxy/tokenizer"
	"github.com/ragproxy/ragproxy/upstream"
)

// The settings of the proxy under test, as `ragproxy serve --index DIR
// --fallback-upstream-url ... --fallback-model llama3 --api-keys ...` would
// have them.
const (
	assistant     = "lakeshore" // the index directory's name, serve's default assistant name
	upstreamModel = "gpt-4o-mini"
	fallbackModel = "llama3"
	upstreamKey   = "sk-upstream-test"
	clientKey     = "client-key-test"
	// longAnswerMarker in a question makes the fake upstream stream a long
	// answer, which a client can abandon midway.
	longAnswerMarker = "tell me everything"
)

// proxy is a ragproxy server wired as cmd/ragproxy/serve.go wires it, in
// front of a fake primary and a fake fallback upstream.
type proxy struct {
	// Base is the server's base URL (no /v1).
	Base              string
	Primary, Fallback *openaitest.Server
	Metrics           *observability.Metrics
	logs              *syncBuffer
}

// syncBuffer is a log sink safe for the server's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// exampleIndex ingests the bundled example site into a temporary directory
// named after the assistant and returns that directory.
func exampleIndex(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), assistant)
	indextest.Build(t, indextest.ExampleSite(t), examples.BaseURL, dir)
	return dir
}

// fakeReply answers the two kinds of chat request the proxy sends upstream:
// the query analysis (JSON with rewrites of the question) and the answer.
func fakeReply(r *openaitest.Request) openaitest.Reply {
	if len(r.Messages) > 0 && strings.HasPrefix(r.Messages[0].Text(), "You prepare search queries") {
		convo := r.Messages[len(r.Messages)-1].Text()
		lines := strings.Split(strings.TrimSpace(convo), "\n")
		q := strings.TrimPrefix(lines[len(lines)-1], "user: ")
		b, _ := json.Marshal(map[string]any{"retrieval_needed": true, "rewrites": []string{q, q + "?", "about " + q}})
		return openaitest.Reply{Content: string(b)}
	}
	if last := r.Messages[len(r.Messages)-1].Text(); strings.Contains(last, longAnswerMarker) {
		return openaitest.Reply{Content: strings.Repeat("Lakeshore Polytechnic offers many programs. ", 100)}
	}
	return openaitest.Reply{Content: "In-state tuition is $4,850 per semester ([Tuition](https://www.lakeshore-poly.example/tuition/))."}
}

// startProxy starts the fakes and the proxy; everything stops in t.Cleanup.
func startProxy(t *testing.T) *proxy {
	t.Helper()
	fakeCfg := openaitest.Config{APIKey: upstreamKey, Reply: fakeReply, ChunkDelay: time.Millisecond}
	primary := openaitest.NewServer(fakeCfg)
	t.Cleanup(primary.Close)
	fakeCfg.Models = []string{fallbackModel}
	fallback := openaitest.NewServer(fakeCfg)
	t.Cleanup(fallback.Close)
	indexDir := exampleIndex(t)

	// From here on, runServe and serveFlags.ground in cmd/ragproxy/serve.go.
	logs := &syncBuffer{}
	logger := observability.NewLogger(logs, observability.LogConfig{Level: slog.LevelInfo})
	metrics, err := observability.New(observability.Config{
		Models:    []string{"ragproxy", assistant, upstreamModel, fallbackModel},
		Upstreams: []string{"primary", "fallback"},
		Tasks:     server.Tasks(), Stages: retrieval.Stages(),
	})
	if err != nil {
		t.Fatal(err)
	}
	obs := &server.MetricsObserver{Metrics: metrics, Logger: logger}
	client, err := upstream.New(upstream.Config{
		Primary:  upstream.Endpoint{Name: "primary", BaseURL: primary.URL(), APIKey: upstreamKey, Model: upstreamModel},
		Fallback: upstream.Endpoint{Name: "fallback", BaseURL: fallback.URL(), APIKey: upstreamKey, Model: fallbackModel},
		// serve's default is 200ms; shorter keeps the rounds of traffic quick.
		Backoff:          10 * time.Millisecond,
		FirstByteTimeout: 2 * time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	scfg := server.Config{
		APIKeys:      []string{clientKey},
		MaxBodyBytes: 8 << 20,
		Heartbeat:    10 * time.Second,
		DrainTimeout: 30 * time.Second,
		Logger:       logger,
		Metrics:      metrics.Handler(),
		Observer:     obs,
	}
	lru, err := cache.NewLRU(cache.LRUConfig{})
	if err != nil {
		t.Fatal(err)
	}
	tolerant := func(name string) cache.Cache {
		return &cache.Tolerant{Cache: lru, Logger: logger, OnError: func(string, error) { metrics.Cache(name, "error") }}
	}
	const cacheTTL = time.Hour
	scfg.Cache, scfg.CacheTTL = tolerant("response"), cacheTTL

	tok, err := tokenizer.New()
	if err != nil {
		t.Fatal(err)
	}
	remote := embedding.NewOpenAI(embedding.OpenAIConfig{BaseURL: primary.URL(), APIKey: upstreamKey, Model: "text-embedding-3-large"})
	r, err := retrieval.Open(indexDir, remote, tok, retrieval.Config{})
	if err != nil {
		t.Fatal(err)
	}
	g := &grounding.Grounder{Retriever: r, Tokenizer: tok, SiteName: assistant, OnRetrieval: obs.ObserveRetrieval,
		// One FAQ entry, far from the other traffic's questions.
		FAQ: faq.NewMatcher([]faq.Entry{{Question: "What are the library hours on Saturday?",
			Answer: "On Saturday the library is open from 10:00 a.m. to 6:00 p.m.", URL: "https://www.lakeshore-poly.example/library/"}}),
		OnFAQ: func(_ context.Context, kind string) { obs.Metrics.FAQAnswer(kind) }}
	g.Analyzer = &retrieval.LLMAnalyzer{Ask: upstream.Asker{Client: client, Model: upstreamModel}.Ask, SiteName: assistant,
		OnFallback: func(err error) { logger.Warn("query analysis fell back to heuristics", "err", err) }}
	ca := grounding.NewCachedAnalyzer(g.Analyzer, tolerant("analysis"), upstreamModel+"\x00"+assistant, cacheTTL)
	ca.OnLookup = func(result string) { obs.Metrics.Cache("analysis", result) }
	g.Analyzer = ca
	scfg.Grounder = g
	scfg.Models = []server.ModelAlias{{ID: assistant, Upstream: upstreamModel}}
	m := r.Index().Manifest
	obs.Metrics.SetIndexInfo(assistant, m.Version, m.Embedder, m.Pages, m.Chunks)
	obs.Metrics.SetIndexBuilt(assistant, m.BuiltAt)
	// serve probes its Qdrant, Neo4j and Redis; this server has none, so a stand-in backend feeds the gauge.
	scfg.Ready = server.NewReadiness(server.ReadinessConfig{OnProbe: metrics.BackendUp,
		Backends: []server.Backend{{Name: "redis", Probe: func(context.Context) error { return nil }}}})
	settings, err := json.Marshal(struct {
		Retrieval retrieval.Config
		Offline   bool
		Sources   int
	}{r.Config(), g.Offline, g.MaxSources})
	if err != nil {
		t.Fatal(err)
	}
	scfg.IndexVersion, scfg.RetrievalSettings = m.Version, string(settings)
	scfg.PromptVersion = cache.Key(grounding.GroundingPrompt, assistant, "test")[:16]

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- server.New(scfg, client).Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("server: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("server did not stop")
		}
		if t.Failed() {
			t.Logf("server log:\n%s", logs.String())
		}
	})
	return &proxy{Base: "http://" + ln.Addr().String(), Primary: primary, Fallback: fallback, Metrics: metrics, logs: logs}
}
