package insights

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ragproxy/ragproxy/compat"
	"github.com/ragproxy/ragproxy/grounding"
	"github.com/ragproxy/ragproxy/retrieval"
	"github.com/ragproxy/ragproxy/server"
)

// countingMetrics records what a Log counts.
type countingMetrics struct {
	mu      sync.Mutex
	answers map[string]int
	ratings map[string]int
	dropped map[string]int
}

func newCountingMetrics() *countingMetrics {
	return &countingMetrics{answers: map[string]int{}, ratings: map[string]int{}, dropped: map[string]int{}}
}

func (m *countingMetrics) Answer(o string) { m.mu.Lock(); m.answers[o]++; m.mu.Unlock() }

func (m *countingMetrics) Feedback(r string) { m.mu.Lock(); m.ratings[r]++; m.mu.Unlock() }

func (m *countingMetrics) QuestionsDropped(reason string, n int) {
	m.mu.Lock()
	m.dropped[reason] += n
	m.mu.Unlock()
}

func (m *countingMetrics) get(f func(*countingMetrics) int) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return f(m)
}

func serverQuestion(id, text, outcome, answer string) server.Question {
	return server.Question{QuestionReport: server.QuestionReport{Question: text, Outcome: outcome, Confidence: 0.6, Topic: "/t/"},
		ResponseID: id, Model: "site", At: day0, Latency: 30 * time.Millisecond, Answer: answer, Cited: []string{"https://u.example/a/"},
		Usage: compat.Usage{PromptTokens: 1000, CompletionTokens: 100, TotalTokens: 1100}, Upstream: true, Key: "****wxyz"}
}

// startLog runs a Log until the test ends.
func startLog(t *testing.T, cfg LogConfig) *Log {
	l := NewLog(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = l.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return l
}

func TestLogWritesRedacted(t *testing.T) {
	for _, mode := range []Mode{Redacted, Full} {
		t.Run(mode.String(), func(t *testing.T) {
			ctx := context.Background()
			s, err := OpenSQLite(ctx, filepath.Join(t.TempDir(), "q.db"), Config{Now: func() time.Time { return day0 }})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			m := newCountingMetrics()
			l := startLog(t, LogConfig{Store: s, Mode: mode, Metrics: m, Price: Price{Input: 0.15, Output: 0.6}, FlushInterval: time.Hour})
			l.LogQuestion(ctx, serverQuestion("chatcmpl-a", "My e-mail is ann@example.org, call 510-642-6000", server.OutcomeAnswered, "Yes."))
			l.LogQuestion(ctx, serverQuestion("chatcmpl-b", "Where is the map?", server.OutcomeAnswered, "I don't know: the pages do not say."))
			// FlushInterval is an hour: only Flush writes them now.
			if err := l.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			list, err := s.Questions(ctx, ListQuery{Since: time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			if len(list.Data) != 2 {
				t.Fatalf("%d questions stored, want 2", len(list.Data))
			}
			a, b := list.Data[1], list.Data[0]
			wantText := "My e-mail is [email], call [phone]"
			if mode == Full {
				wantText = "My e-mail is ann@example.org, call 510-642-6000"
			}
			if a.Question != wantText {
				t.Errorf("stored %q, want %q", a.Question, wantText)
			}
			if b.Outcome != Unanswered || a.Outcome != Answered {
				t.Errorf("outcomes %q and %q, want answered and unanswered (the answer says it does not know)", a.Outcome, b.Outcome)
			}
			if wantCost := (1000*0.15 + 100*0.6) / 1e6; !approx(a.Cost, wantCost) || a.Key != "****wxyz" || a.Pages[0] != "https://u.example/a/" {
				t.Errorf("stored %+v; want cost %v", a, wantCost)
			}
			if got := m.get(func(m *countingMetrics) int { return m.answers[Answered]*10 + m.answers[Unanswered] }); got != 11 {
				t.Errorf("answers counted %v", m.answers)
			}
		})
	}
}

// failingWriter is a store that is down, then up again.
type failingWriter struct {
	mu     sync.Mutex
	down   bool
	stored int
}

func (w *failingWriter) AddQuestions(_ context.Context, qs []Question) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.down {
		return errors.New("connection refused")
	}
	w.stored += len(qs)
	return nil
}

func (w *failingWriter) set(down bool) { w.mu.Lock(); w.down = down; w.mu.Unlock() }

func TestLogStoreDown(t *testing.T) {
	ctx := context.Background()
	var logs bytes.Buffer
	var logMu sync.Mutex
	logger := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		logMu.Lock()
		defer logMu.Unlock()
		return logs.Write(p)
	}), nil))
	w := &failingWriter{down: true}
	m := newCountingMetrics()
	l := startLog(t, LogConfig{Store: w, Metrics: m, Logger: logger, FlushInterval: time.Hour})
	for i := range 3 {
		l.LogQuestion(ctx, serverQuestion("id", "q", server.OutcomeAnswered, "a"))
		if err := l.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		if i == 1 {
			w.set(false)
		}
	}
	logMu.Lock()
	text := logs.String()
	logMu.Unlock()
	if n := strings.Count(text, "the store failed"); n != 1 {
		t.Errorf("the outage was logged %d times, want once:\n%s", n, text)
	}
	if !strings.Contains(text, "works again") {
		t.Errorf("the recovery was not logged:\n%s", text)
	}
	if got := m.get(func(m *countingMetrics) int { return m.dropped[DroppedStore] }); got != 2 || w.stored != 1 {
		t.Errorf("dropped %d, stored %d; want 2 and 1", got, w.stored)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// blockingWriter holds every write until released.
type blockingWriter struct{ release chan struct{} }

func (w *blockingWriter) AddQuestions(ctx context.Context, _ []Question) error {
	select {
	case <-w.release:
	case <-ctx.Done():
	}
	return nil
}

// TestLogNeverBlocks checks that a store that hangs makes questions be dropped and counted, never waited for.
func TestLogNeverBlocks(t *testing.T) {
	w := &blockingWriter{release: make(chan struct{})}
	m := newCountingMetrics()
	l := startLog(t, LogConfig{Store: w, Metrics: m, Buffer: 4, Batch: 1})
	t.Cleanup(func() { close(w.release) })
	done := make(chan struct{})
	go func() {
		for range 100 {
			l.LogQuestion(context.Background(), serverQuestion("id", "q", server.OutcomeAnswered, "a"))
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("LogQuestion blocked on a store that hangs")
	}
	// One in the writer's hands, four in the buffer; the rest dropped.
	if got := m.get(func(m *countingMetrics) int { return m.dropped[DroppedFull] }); got < 95 || got > 96 {
		t.Errorf("%d questions dropped, want 95 or 96", got)
	}
}

func TestLogOff(t *testing.T) {
	m := newCountingMetrics()
	w := &failingWriter{}
	l := startLog(t, LogConfig{Store: w, Mode: Off, Metrics: m})
	l.LogQuestion(context.Background(), serverQuestion("id", "q", server.OutcomeFAQ, "a"))
	if err := l.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if w.stored != 0 || m.get(func(m *countingMetrics) int { return m.answers[FAQ] }) != 1 {
		t.Errorf("off: stored %d, counted %v", w.stored, m.answers)
	}
}

// TestLogRunDrains checks that questions still buffered when the server stops are written.
func TestLogRunDrains(t *testing.T) {
	w := &failingWriter{}
	l := NewLog(LogConfig{Store: w, FlushInterval: time.Hour, Batch: 1000})
	for range 10 {
		l.LogQuestion(context.Background(), serverQuestion("id", "q", server.OutcomeAnswered, "a"))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := l.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if w.stored != 10 {
		t.Errorf("%d written at the end, want 10", w.stored)
	}
}

func TestSaysDontKnow(t *testing.T) {
	for text, want := range map[string]bool{
		"I don't know: I couldn't find this in the site's pages.":      true,
		"**I do not know** what the shuttle costs.":                    true,
		"I couldn’t find that on the site.":                            true,
		"No passage answers this directly; the closest:\n> Tuition …":  true,
		"The library opens at 9. I don't know about holidays, though.": false,
		"Tuition is $4,850 a semester.":                                false,
	} {
		if got := SaysDontKnow(text); got != want {
			t.Errorf("SaysDontKnow(%q) = %v", text, got)
		}
	}
}

// ragproxy's own "I don't know" and "no passage answers directly" texts count as not knowing in every language
// it speaks, as do the model's usual ways of saying so; an answer that only mentions not knowing further on does
// not.
func TestSaysDontKnowInEachLanguage(t *testing.T) {
	for _, lang := range keyLanguages {
		res := &retrieval.Result{Lang: lang}
		for _, text := range []string{grounding.DontKnow(res, 3), grounding.ExtractiveAnswer(res, nil)} {
			if !SaysDontKnow(text) {
				t.Errorf("%s: SaysDontKnow(%q) = false", lang, text)
			}
		}
	}
	for text, want := range map[string]bool{
		"Ich weiß es nicht. Die Seiten nennen keinen Preis.": true,
		"Je ne sais pas ; le contexte ne le dit pas.":        true,
		"Я не знаю, на сайте этого нет.":                     true,
		"我不知道。": true,
		"Jeg vet ikke: sidene sier ingenting om det.":                     true,
		"Nie wiem, strony tego nie podają.":                               true,
		"نمی‌دانم؛ صفحه‌های سایت چیزی در این باره نمی‌گویند.":             true,
		"Die Gebühr beträgt 80 $. Ob sie erstattet wird, weiß ich nicht.": false,
		"La bibliothèque ouvre à 9 h.":                                    false,
	} {
		if got := SaysDontKnow(text); got != want {
			t.Errorf("SaysDontKnow(%q) = %v, want %v", text, got, want)
		}
	}
}

// TestLazy checks that a store that cannot be opened is tried again later, and works once it can.
func TestLazy(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "q.db")
	attempts, failures := 0, 0
	clock := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	l := &Lazy{RetryEvery: time.Minute, Now: func() time.Time { return clock }, OnError: func(error) { failures++ }, Open: func(ctx context.Context) (Store, error) {
		attempts++
		if attempts == 1 {
			return nil, errors.New("connection refused")
		}
		return OpenSQLite(ctx, path, Config{})
	}}
	defer l.Close()
	if _, err := l.FAQEntries(ctx); err == nil {
		t.Fatal("the first open failed, yet the store answered")
	}
	if _, err := l.FAQEntries(ctx); err == nil || attempts != 1 {
		t.Fatalf("within RetryEvery of the failure: err %v after %d attempts, want the failure again without a new attempt", err, attempts)
	}
	clock = clock.Add(time.Minute)
	if _, err := l.AddFAQ(ctx, FAQEntry{Question: "q", Answer: "a", URL: "https://u.example/"}); err != nil {
		t.Fatal(err)
	}
	if es, err := l.FAQEntries(ctx); err != nil || len(es) != 1 || attempts != 2 || failures != 1 {
		t.Errorf("entries %v (%v) after %d attempts, %d failures", es, err, attempts, failures)
	}
}
