package insights

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ragproxy/ragproxy/compat"
	"github.com/ragproxy/ragproxy/internal/pgtest"
	"github.com/ragproxy/ragproxy/server"
	"github.com/ragproxy/ragproxy/upstream"
)

// traffic makes questions as a site's visitors ask them: a few thousand distinct questions whose popularity
// falls off as a power law (a few asked all the time, most rarely), each citing one to three of the site's
// pages, over two assistants.
type traffic struct {
	rng   *rand.Rand
	zipf  *rand.Zipf
	pages []string
}

func newTraffic(seed uint64) *traffic {
	rng := rand.New(rand.NewPCG(seed, 1))
	tr := &traffic{rng: rng, zipf: rand.NewZipf(rng, 1.1, 1, 19999)}
	for i := range 800 {
		tr.pages = append(tr.pages, fmt.Sprintf("https://www.example.edu/section-%d/page-%d/", i%40, i))
	}
	return tr
}

var subjects = []string{"library", "tuition", "housing", "parking", "shuttle", "exam", "enrolment", "visa", "scholarship",
	"transcript", "course", "deadline", "fee", "advisor", "lab", "thesis", "grade", "holiday", "clinic", "sport"}

func (tr *traffic) question(at time.Time) server.Question {
	n := int(tr.zipf.Uint64())
	text := fmt.Sprintf("What about the %s %s rules for group %d?", subjects[n%len(subjects)], subjects[(n/20)%len(subjects)], n)
	outcome := server.OutcomeAnswered
	switch n % 10 {
	case 7:
		outcome = server.OutcomeUnanswered
	case 8:
		outcome = server.OutcomeFAQ
	}
	cited := make([]string, 1+n%3)
	for i := range cited {
		cited[i] = tr.pages[(n*7+i*13)%len(tr.pages)]
	}
	model := "site"
	if n%5 == 0 {
		model = "admissions"
	}
	return server.Question{QuestionReport: server.QuestionReport{Question: text, Outcome: outcome, Confidence: tr.rng.Float64(),
		Topic: fmt.Sprintf("/section-%d/", n%40)}, ResponseID: fmt.Sprintf("chatcmpl-%d-%d", at.UnixNano(), tr.rng.Uint64()),
		Model: model, At: at, Latency: time.Duration(50+tr.rng.IntN(3000)) * time.Millisecond, Answer: "An answer.",
		Cited: cited, Usage: compat.Usage{PromptTokens: 3000, CompletionTokens: 200, TotalTokens: 3200}, Upstream: true}
}

// BenchmarkLogSQLite measures questions written per second through the question log into SQLite (redacted,
// in batches), from the first handed over until the last is stored.
func BenchmarkLogSQLite(b *testing.B) {
	ctx := context.Background()
	s, err := OpenSQLite(ctx, filepath.Join(b.TempDir(), "q.db"), Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	tr := newTraffic(1)
	now := time.Now()
	qs := make([]server.Question, b.N)
	for i := range qs {
		qs[i] = tr.question(now.Add(-time.Duration(i) * time.Second))
	}
	m := newCountingMetrics()
	l := NewLog(LogConfig{Store: s, Metrics: m, Buffer: b.N + 1})
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { _ = l.Run(rctx); close(done) }()
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for i := range qs {
		l.LogQuestion(ctx, qs[i])
	}
	if err := l.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	cancel()
	<-done
	if d := m.get(func(m *countingMetrics) int { return m.dropped[DroppedFull] + m.dropped[DroppedStore] }); d != 0 {
		b.Fatalf("%d questions dropped", d)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "questions/s")
}

// BenchmarkLogQuestion measures what the question log adds to a request: the LogQuestion call, with the writer
// storing into SQLite meanwhile. It reports the median and 99th percentile of single calls.
func BenchmarkLogQuestion(b *testing.B) {
	ctx := context.Background()
	s, err := OpenSQLite(ctx, filepath.Join(b.TempDir(), "q.db"), Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	tr := newTraffic(2)
	q := tr.question(time.Now())
	l := NewLog(LogConfig{Store: s})
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { _ = l.Run(rctx); close(done) }()
	defer func() { cancel(); <-done }()
	times := make([]time.Duration, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		l.LogQuestion(ctx, q)
		times[i] = time.Since(start)
		if i%256 == 255 {
			// Requests arrive over time, not in one burst: let the writer keep up, as it does in service.
			b.StopTimer()
			_ = l.Flush(ctx)
			b.StartTimer()
		}
	}
	b.StopTimer()
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(times[len(times)*99/100].Nanoseconds()), "p99-ns")
}

// fillMillion stores n questions over the last 30 days into s, in large batches.
func fillQuestions(b *testing.B, s Store, n int) {
	ctx := context.Background()
	tr := newTraffic(3)
	l := &Log{cfg: LogConfig{Mode: Redacted}}
	now := time.Now()
	step := 30 * 24 * time.Hour / time.Duration(n)
	batch := make([]Question, 0, 5000)
	for i := range n {
		batch = append(batch, l.question(tr.question(now.Add(-time.Duration(i)*step))))
		if len(batch) == cap(batch) || i == n-1 {
			if err := s.AddQuestions(ctx, batch); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
}

// BenchmarkReport measures GET /admin/insights's work over a million stored questions (30 days) in SQLite, and
// in PostgreSQL when RAGPROXY_TEST_POSTGRES_URL is set. Filling takes a few minutes; RAGPROXY_BENCH_INSIGHTS_DB
// names a SQLite file to keep the filled database between runs.
func BenchmarkReport(b *testing.B) {
	const n = 1_000_000
	ctx := context.Background()
	run := func(b *testing.B, s Store) {
		pages := newTraffic(0).pages
		b.ResetTimer()
		for range b.N {
			r, err := s.Report(ctx, ReportQuery{Since: 30 * 24 * time.Hour, Pages: pages})
			if err != nil {
				b.Fatal(err)
			}
			if r.Totals.Questions < n*9/10 {
				b.Fatalf("the report counts %d questions", r.Totals.Questions)
			}
		}
		b.StopTimer()
		l, err := s.Questions(ctx, ListQuery{Since: 30 * 24 * time.Hour, Outcome: Unanswered, Page: 100})
		if err != nil || len(l.Data) == 0 {
			b.Fatalf("questions: %v", err)
		}
	}
	b.Run("sqlite", func(b *testing.B) {
		path := os.Getenv("RAGPROXY_BENCH_INSIGHTS_DB")
		keep := path != ""
		if !keep {
			path = filepath.Join(b.TempDir(), "q.db")
		}
		_, statErr := os.Stat(path)
		s, err := OpenSQLite(ctx, path, Config{Retention: -1})
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		if !keep || statErr != nil {
			fillQuestions(b, s, n)
		}
		run(b, s)
	})
	if base := os.Getenv(postgresEnv); base != "" {
		b.Run("postgresql", func(b *testing.B) {
			s, err := OpenPostgreSQL(ctx, pgtest.Schema(b, base, "t_"), Config{Retention: -1})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			fillQuestions(b, s, n)
			run(b, s)
		})
	}
}

// BenchmarkRequestOverhead measures what the question log adds to a chat request's latency: two gateways, one
// without the log and one logging into SQLite, answer the same streamed questions (the Grounder answers them, so
// no upstream time blurs the difference), alternately, and it reports the median of each and their difference.
func BenchmarkRequestOverhead(b *testing.B) {
	ctx := context.Background()
	s, err := OpenSQLite(ctx, filepath.Join(b.TempDir(), "q.db"), Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	up, err := upstream.New(upstream.Config{Primary: upstream.Endpoint{BaseURL: "http://127.0.0.1:1/v1"}})
	if err != nil {
		b.Fatal(err)
	}
	rctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	start := func(log server.QuestionLog) string {
		srv := server.New(server.Config{Grounder: answering{}, Questions: log, Models: []server.ModelAlias{{ID: "site"}}}, up)
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		wg.Add(1)
		go func() { defer wg.Done(); _ = srv.Serve(rctx, ln) }()
		return "http://" + ln.Addr().String() + "/v1/chat/completions"
	}
	l := NewLog(LogConfig{Store: s})
	wg.Add(1)
	go func() { defer wg.Done(); _ = l.Run(rctx) }()
	off, on := start(nil), start(l)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	body := `{"model":"site","stream":true,"messages":[{"role":"user","content":"Is there a shuttle to the station?"}]}`
	ask := func(url string) time.Duration {
		begin := time.Now()
		resp, err := client.Post(url, "application/json", strings.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatalf("status %d", resp.StatusCode)
		}
		return time.Since(begin)
	}
	for range 50 { // warm both up
		ask(off)
		ask(on)
	}
	offTimes, onTimes := make([]time.Duration, b.N), make([]time.Duration, b.N)
	b.ResetTimer()
	for i := range b.N {
		if i%2 == 0 {
			offTimes[i], onTimes[i] = ask(off), ask(on)
		} else {
			onTimes[i], offTimes[i] = ask(on), ask(off)
		}
	}
	b.StopTimer()
	slices.Sort(offTimes)
	slices.Sort(onTimes)
	p50off, p50on := offTimes[b.N/2], onTimes[b.N/2]
	b.ReportMetric(float64(p50off.Nanoseconds())/1e3, "p50-off-us")
	b.ReportMetric(float64(p50on.Nanoseconds())/1e3, "p50-on-us")
	b.ReportMetric(float64((p50on-p50off).Nanoseconds())/1e3, "p50-added-us")
}
