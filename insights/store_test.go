package insights

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/ragproxy/ragproxy/internal/pgtest"
)

// postgresEnv names the PostgreSQL database the store tests also run against; without it they run on SQLite
// only. Each test gets a schema of its own in that database, dropped at its end.
const postgresEnv = "RAGPROXY_TEST_POSTGRES_URL"

// clock is a settable time for the stores under test.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// backend opens a store of one kind, at the same place each time.
type backend struct {
	name string
	d    dialect
	open func(cfg Config) (Store, error)
}

// mustOpen opens b's store and closes it at the test's end.
func (b backend) mustOpen(t *testing.T, cfg Config) Store {
	t.Helper()
	s, err := b.open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// backends are the stores every test runs against: SQLite in a temporary directory, and PostgreSQL in a fresh
// schema when postgresEnv is set.
func backends(t *testing.T) []backend {
	path := filepath.Join(t.TempDir(), "insights.db")
	out := []backend{{name: "sqlite", d: sqliteDialect, open: func(cfg Config) (Store, error) {
		return OpenSQLite(context.Background(), path, cfg)
	}}}
	base := os.Getenv(postgresEnv)
	if base == "" {
		t.Logf("%s not set: PostgreSQL not tested", postgresEnv)
		return out
	}
	schemaURL := pgtest.Schema(t, base, "t_")
	return append(out, backend{name: "postgresql", d: postgresDialect, open: func(cfg Config) (Store, error) {
		return OpenPostgreSQL(context.Background(), schemaURL, cfg)
	}})
}

// eachBackend runs f against each store kind.
func eachBackend(t *testing.T, f func(t *testing.T, b backend)) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) { f(t, b) })
	}
}

var day0 = time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC)

func (s *sqlStore) database() *sql.DB { return s.db }

func db(s Store) *sql.DB { return s.(interface{ database() *sql.DB }).database() }

func TestMigrations(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		version := func(s Store) int {
			var v int
			if err := db(s).QueryRowContext(ctx, `SELECT MAX(version) FROM schema_migrations`).Scan(&v); err != nil {
				t.Fatal(err)
			}
			return v
		}
		s := b.mustOpen(t, Config{})
		if v := version(s); v != SchemaVersion() {
			t.Fatalf("schema version %d after open, want %d", v, SchemaVersion())
		}
		if _, err := s.AddFAQ(ctx, FAQEntry{Question: "q", Answer: "a", URL: "https://x.example/"}); err != nil {
			t.Fatal(err)
		}
		s.Close()
		// Reopening applies nothing again and keeps the data.
		s = b.mustOpen(t, Config{})
		var n int
		if err := db(s).QueryRowContext(ctx, `SELECT COUNT(*) FROM schema_migrations`).Scan(&n); err != nil || n != SchemaVersion() {
			t.Fatalf("%d migrations recorded (%v), want %d", n, err, SchemaVersion())
		}
		if es, err := s.FAQEntries(ctx); err != nil || len(es) != 1 {
			t.Fatalf("FAQ entries after reopening: %v, %v", es, err)
		}
		// A database written by a later release is refused, not written to.
		if _, err := db(s).ExecContext(ctx, b.d.bind(`INSERT INTO schema_migrations (version, applied_at) VALUES (?, 0)`), SchemaVersion()+1); err != nil {
			t.Fatal(err)
		}
		s.Close()
		if s, err := b.open(Config{}); err == nil {
			s.Close()
			t.Fatal("a database of a newer schema was opened")
		}
	})
}

// fill stores the questions and feedback of the report tests, on a clock at day0.
func fill(t *testing.T, s Store, now time.Time) {
	t.Helper()
	ctx := context.Background()
	q := func(ago time.Duration, model, question, outcome string, conf float64, topic string, latency time.Duration, id string, pages ...string) Question {
		return Question{At: now.Add(-ago), Model: model, Question: question, Outcome: outcome, Confidence: conf, Topic: topic,
			Pages: pages, Latency: latency, PromptTokens: 100, CompletionTokens: 20, Cost: 0.001, ResponseID: id, Key: "****abcd"}
	}
	const lib, apply, parking = "https://u.example/library/", "https://u.example/apply/", "https://u.example/parking/"
	qs := []Question{
		q(48*time.Hour, "site", "What are the library hours?", Answered, 0.8, "library", 100*time.Millisecond, "chatcmpl-1", lib),
		q(47*time.Hour, "site", "library hours", Answered, 0.8, "library", 100*time.Millisecond, "chatcmpl-2", lib),
		q(46*time.Hour, "site", "What are the library's hours", Answered, 0.7, "library", 100*time.Millisecond, "chatcmpl-3", lib),
		q(24*time.Hour, "site", "Is there a shuttle to the airport?", Unanswered, 0.05, "transport", 50*time.Millisecond, "chatcmpl-4"),
		q(23*time.Hour, "site", "shuttle to the airport", Unanswered, 0.04, "transport", 50*time.Millisecond, "chatcmpl-5"),
		q(time.Hour, "nursing", "How do I apply?", FAQ, 0, "", 2*time.Millisecond, "chatcmpl-6", apply),
		q(time.Hour, "site", "How much is a parking permit?", Answered, 0.2, "parking", 300*time.Millisecond, "chatcmpl-7", parking),
		q(40*24*time.Hour, "site", "Old question", Answered, 0.9, "library", time.Second, "chatcmpl-old", lib),
	}
	if err := s.AddQuestions(ctx, qs[:3]); err != nil {
		t.Fatal(err)
	}
	if err := s.AddQuestions(ctx, qs[3:]); err != nil { // a second batch adds to the same aggregate rows
		t.Fatal(err)
	}
	for _, f := range []Feedback{
		{ResponseID: "chatcmpl-1", Rating: Down, At: now},
		{ResponseID: "chatcmpl-1", Rating: Up, At: now}, // a second rating replaces the first
		{ResponseID: "chatcmpl-4", Rating: Down, Comment: "It exists, see the transport page", At: now},
		{ResponseID: "chatcmpl-4", Rating: Down, At: now}, // the same rating again without a comment keeps it
	} {
		if err := s.AddFeedback(ctx, f); err != nil {
			t.Fatal(err)
		}
	}
}

func TestReport(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		clk := &clock{t: day0}
		s := b.mustOpen(t, Config{Now: clk.now})
		fill(t, s, day0)
		if err := s.AddFeedback(ctx, Feedback{ResponseID: "chatcmpl-none", Rating: Up}); !errors.Is(err, ErrUnknownResponse) {
			t.Fatalf("feedback on an unknown id: %v, want ErrUnknownResponse", err)
		}
		pages := []string{"https://u.example/library/", "https://u.example/apply/", "https://u.example/parking/", "https://u.example/maps/"}
		r, err := s.Report(ctx, ReportQuery{Since: 30 * 24 * time.Hour, Pages: pages})
		if err != nil {
			t.Fatal(err)
		}
		lat := r.Totals
		if lat.LatencyP50 < 100 || lat.LatencyP50 >= 110 || lat.LatencyP95 < 300 || lat.LatencyP95 >= 330 {
			t.Errorf("latency p50 %v ms, p95 %v ms; want within 10%% above 100 and 300", lat.LatencyP50, lat.LatencyP95)
		}
		r.Totals.LatencyP50, r.Totals.LatencyP95 = 0, 0
		want := &Report{Object: "insights", From: "2026-10-04", To: "2026-11-02",
			Totals: Totals{Questions: 7, Answered: 4, Unanswered: 2, FAQ: 1, LowConfidence: 1, AnsweredShare: 4.0 / 7,
				UnansweredShare: 2.0 / 7, FAQShare: 1.0 / 7, Up: 1, Down: 1, PromptTokens: 700, CompletionTokens: 140, Cost: 0.007},
			Days: []Day{
				{Day: "2026-10-31", Questions: 3, Answered: 3},
				{Day: "2026-11-01", Questions: 2, Unanswered: 2},
				{Day: "2026-11-02", Questions: 2, Answered: 1, FAQ: 1, Up: 1, Down: 1},
			},
			Top: []Group{
				{Question: "What are the library's hours", Count: 3, Topic: "library"},
				{Question: "shuttle to the airport", Count: 2, Unanswered: 2, Topic: "transport"},
				{Question: "How do I apply?", Count: 1},
				{Question: "How much is a parking permit?", Count: 1, LowConfidence: 1, Topic: "parking"},
			},
			Gaps: []Topic{
				{Topic: "transport", Count: 2, Questions: []Group{{Question: "shuttle to the airport", Count: 2, Unanswered: 2, Topic: "transport"}}},
				{Topic: "parking", Count: 1, Questions: []Group{{Question: "How much is a parking permit?", Count: 1, LowConfidence: 1, Topic: "parking"}}},
			},
			Cited: []Cited{{URL: "https://u.example/library/", Count: 3}, {URL: "https://u.example/apply/", Count: 1},
				{URL: "https://u.example/parking/", Count: 1}},
			Never: []string{"https://u.example/maps/"},
			Downvote: []Comment{{ResponseID: "chatcmpl-4", At: day0, Model: "site", Question: "Is there a shuttle to the airport?",
				Outcome: Unanswered, Comment: "It exists, see the transport page"}},
		}
		if diff := cmp.Diff(want, r, cmp.Comparer(approx)); diff != "" {
			t.Errorf("report (-want +got):\n%s", diff)
		}
		// One assistant's report counts its questions only.
		r, err = s.Report(ctx, ReportQuery{Model: "nursing"})
		if err != nil {
			t.Fatal(err)
		}
		if r.Totals.Questions != 1 || r.Totals.FAQ != 1 || len(r.Top) != 1 || r.Totals.Up+r.Totals.Down != 0 {
			t.Errorf("nursing's report: %+v, top %+v", r.Totals, r.Top)
		}
		// Reopened, the store reports the same.
		s.Close()
		s = b.mustOpen(t, Config{Now: clk.now})
		again, err := s.Report(ctx, ReportQuery{Since: 30 * 24 * time.Hour, Pages: pages})
		if err != nil {
			t.Fatal(err)
		}
		again.Totals.LatencyP50, again.Totals.LatencyP95 = 0, 0
		if diff := cmp.Diff(want, again, cmp.Comparer(approx)); diff != "" {
			t.Errorf("report after reopening (-want +got):\n%s", diff)
		}
	})
}

func approx(a, b float64) bool { return a == b || (a-b < 1e-9 && b-a < 1e-9) }

func TestQuestionsList(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		s := b.mustOpen(t, Config{Now: func() time.Time { return day0 }})
		fill(t, s, day0)
		l, err := s.Questions(ctx, ListQuery{Since: 30 * 24 * time.Hour, PerPage: 3, Page: 2})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, q := range l.Data {
			got = append(got, q.ResponseID)
		}
		// Newest first: 6 and 7 share a time and go by id, then 5, 4, 3, 2, 1; page 2 of 3 a page.
		if diff := cmp.Diff([]string{"chatcmpl-4", "chatcmpl-3", "chatcmpl-2"}, got); diff != "" || l.Total != 7 || !l.HasMore {
			t.Errorf("page 2: total %d, has_more %v, (-want +got):\n%s", l.Total, l.HasMore, diff)
		}
		l, err = s.Questions(ctx, ListQuery{Since: 30 * 24 * time.Hour, Outcome: Unanswered})
		if err != nil {
			t.Fatal(err)
		}
		if l.Total != 2 || len(l.Data) != 2 || l.HasMore || l.Data[0].Question != "shuttle to the airport" {
			t.Errorf("unanswered: %+v", l)
		}
		first := l.Data[0]
		want := Question{ID: first.ID, At: day0.Add(-23 * time.Hour), Model: "site", Question: "shuttle to the airport",
			Outcome: Unanswered, Confidence: 0.04, Pages: []string{}, Topic: "transport", Latency: 50 * time.Millisecond,
			PromptTokens: 100, CompletionTokens: 20, Cost: 0.001, ResponseID: "chatcmpl-5", Key: "****abcd"}
		if diff := cmp.Diff(want, first); diff != "" {
			t.Errorf("stored question (-want +got):\n%s", diff)
		}
	})
}

func TestRetention(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		clk := &clock{t: day0.Add(-40 * 24 * time.Hour)}
		s := b.mustOpen(t, Config{Now: clk.now, Retention: 30 * 24 * time.Hour})
		old := Question{At: clk.now(), Model: "site", Question: "old", Outcome: Answered, ResponseID: "old", Pages: []string{"https://u.example/"}}
		if err := s.AddQuestions(ctx, []Question{old}); err != nil {
			t.Fatal(err)
		}
		if err := s.AddFeedback(ctx, Feedback{ResponseID: "old", Rating: Down}); err != nil {
			t.Fatal(err)
		}
		count := func() (n int) {
			for _, table := range []string{"questions", "feedback", "daily", "daily_latency", "daily_questions", "daily_pages"} {
				var c int
				if err := db(s).QueryRowContext(ctx, `SELECT COUNT(*) FROM `+table).Scan(&c); err != nil {
					t.Fatal(err)
				}
				n += c
			}
			return n
		}
		if n := count(); n != 6 {
			t.Fatalf("%d rows before the retention ran, want 6", n)
		}
		// Forty days later, the next write deletes what is older than 30 days.
		clk.set(day0)
		if err := s.AddQuestions(ctx, []Question{{At: day0, Model: "site", Question: "new", Outcome: Answered, ResponseID: "new"}}); err != nil {
			t.Fatal(err)
		}
		l, err := s.Questions(ctx, ListQuery{Since: 100 * 24 * time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		if l.Total != 1 || l.Data[0].ResponseID != "new" {
			t.Fatalf("after the retention: %+v", l.Data)
		}
		if n := count(); n != 4 { // the new question, its daily, latency and question rows
			t.Errorf("%d rows after the retention, want 4", n)
		}
		if err := s.AddFeedback(ctx, Feedback{ResponseID: "old", Rating: Up}); !errors.Is(err, ErrUnknownResponse) {
			t.Errorf("feedback on a pruned answer: %v", err)
		}
	})
}

func TestFAQEntries(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		s := b.mustOpen(t, Config{Now: func() time.Time { return day0 }})
		a, err := s.AddFAQ(ctx, FAQEntry{Question: "Is there a shuttle?", Answer: "Yes, hourly.", URL: "https://u.example/shuttle/"})
		if err != nil {
			t.Fatal(err)
		}
		b2, err := s.AddFAQ(ctx, FAQEntry{Question: "Parkplätze?", Answer: "Parkplatz C.", URL: "https://u.example/parking/", Title: "Parken", Lang: "de"})
		if err != nil {
			t.Fatal(err)
		}
		if a.ID == b2.ID || !a.CreatedAt.Equal(day0) {
			t.Fatalf("entries %+v and %+v", a, b2)
		}
		if err := s.DeleteFAQ(ctx, a.ID); err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteFAQ(ctx, a.ID); !errors.Is(err, ErrNotFound) {
			t.Errorf("deleting again: %v, want ErrNotFound", err)
		}
		got, err := s.FAQEntries(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]FAQEntry{b2}, got); diff != "" {
			t.Errorf("entries (-want +got):\n%s", diff)
		}
	})
}

// A database of schema version 1 (before entries had a language) is brought to the newest version with its
// entries kept, each without a language.
func TestMigrationKeepsFAQEntries(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		s := b.mustOpen(t, Config{})
		// Back to version 1: the schema as the first release wrote it, with an entry of that release.
		d := b.d
		d.migrations = d.migrations[:1]
		for _, stmt := range []string{`DROP TABLE faq_entries`, `DROP TABLE feedback`, `DELETE FROM schema_migrations`} {
			if _, err := db(s).ExecContext(ctx, stmt); err != nil {
				t.Fatal(err)
			}
		}
		for _, stmt := range strings.Split(d.migrations[0], ";\n") {
			if !strings.Contains(stmt, "faq_entries") && !strings.Contains(stmt, "feedback") {
				continue
			}
			if _, err := db(s).ExecContext(ctx, stmt); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := db(s).ExecContext(ctx, d.bind(`INSERT INTO schema_migrations (version, applied_at) VALUES (1, 0)`)); err != nil {
			t.Fatal(err)
		}
		if _, err := db(s).ExecContext(ctx, d.bind(`INSERT INTO faq_entries (question, answer, url, title, created_at) VALUES (?, ?, ?, ?, ?)`),
			"Is there a shuttle?", "Yes.", "https://u.example/shuttle/", "", day0.UnixMicro()); err != nil {
			t.Fatal(err)
		}
		s.Close()
		s = b.mustOpen(t, Config{})
		got, err := s.FAQEntries(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := []FAQEntry{{ID: got[0].ID, Question: "Is there a shuttle?", Answer: "Yes.", URL: "https://u.example/shuttle/", CreatedAt: day0}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("entries after the migration (-want +got):\n%s", diff)
		}
		if e, err := s.AddFAQ(ctx, FAQEntry{Question: "Parkplätze?", Answer: "C.", URL: "https://u.example/p/", Lang: "de"}); err != nil || e.Lang != "de" {
			t.Errorf("an entry with a language after the migration: %+v, %v", e, err)
		}
	})
}

// An answer keeps one rating, the last; its comment goes only with a different rating, in whichever order the
// chat page's two requests (the thumbs down, then its comment) arrive, and however many race.
func TestFeedbackKeepsItsComment(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		s := b.mustOpen(t, Config{Now: func() time.Time { return day0 }})
		if err := s.AddQuestions(ctx, []Question{{At: day0, Model: "site", Question: "q", Outcome: Answered, ResponseID: "r1"}}); err != nil {
			t.Fatal(err)
		}
		feedback := func() (rating, comment string, n int) {
			t.Helper()
			if err := db(s).QueryRowContext(ctx, `SELECT COUNT(*) FROM feedback`).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if err := db(s).QueryRowContext(ctx, `SELECT rating, comment FROM feedback`).Scan(&rating, &comment); err != nil {
				t.Fatal(err)
			}
			return rating, comment, n
		}
		add := func(f Feedback) {
			t.Helper()
			if err := s.AddFeedback(ctx, f); err != nil {
				t.Fatal(err)
			}
		}
		add(Feedback{ResponseID: "r1", Rating: Down, Comment: "wrong year"})
		add(Feedback{ResponseID: "r1", Rating: Down})
		if r, c, n := feedback(); r != Down || c != "wrong year" || n != 1 {
			t.Errorf("after a thumbs down without a comment: %d rows, %s %q; want 1, down \"wrong year\"", n, r, c)
		}
		add(Feedback{ResponseID: "r1", Rating: Up})
		if r, c, n := feedback(); r != Up || c != "" || n != 1 {
			t.Errorf("after a thumbs up: %d rows, %s %q; want 1, up without a comment", n, r, c)
		}
		// The page's two requests, many times at once.
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				f := Feedback{ResponseID: "r1", Rating: Down}
				if i%2 == 0 {
					f.Comment = "still wrong"
				}
				if err := s.AddFeedback(ctx, f); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		if r, c, n := feedback(); r != Down || c != "still wrong" || n != 1 {
			t.Errorf("after racing requests: %d rows, %s %q; want 1, down \"still wrong\"", n, r, c)
		}
	})
}

// A database of schema version 2, whose answers could hold several feedback rows, keeps each answer's last.
func TestMigrationKeepsLastFeedback(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		s := b.mustOpen(t, Config{})
		for _, stmt := range []string{`DROP INDEX feedback_response_one`, `CREATE INDEX feedback_response ON feedback (response_id)`,
			`DELETE FROM schema_migrations WHERE version = 3`} {
			if _, err := db(s).ExecContext(ctx, stmt); err != nil {
				t.Fatal(err)
			}
		}
		now := time.Now().UnixMicro() // within the retention period
		for i, f := range []Feedback{{ResponseID: "r1", Rating: Up}, {ResponseID: "r1", Rating: Down, Comment: "no"}, {ResponseID: "r2", Rating: Up}} {
			if _, err := db(s).ExecContext(ctx, b.d.bind(`INSERT INTO feedback (response_id, at, day, model, rating, comment) VALUES (?, ?, 0, 'site', ?, ?)`),
				f.ResponseID, now+int64(i), f.Rating, f.Comment); err != nil {
				t.Fatal(err)
			}
		}
		s.Close()
		s = b.mustOpen(t, Config{})
		rows, err := db(s).QueryContext(ctx, `SELECT response_id, rating, comment FROM feedback ORDER BY response_id`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var got []Feedback
		for rows.Next() {
			var f Feedback
			if err := rows.Scan(&f.ResponseID, &f.Rating, &f.Comment); err != nil {
				t.Fatal(err)
			}
			got = append(got, f)
		}
		want := []Feedback{{ResponseID: "r1", Rating: Down, Comment: "no"}, {ResponseID: "r2", Rating: Up}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("feedback after the migration (-want +got):\n%s", diff)
		}
	})
}

// A question in another language is keyed by that language's analysis: its inflections and function words make
// one question of two phrasings, as English ones do; English keys are what they were.
func TestKeyInItsLanguage(t *testing.T) {
	for _, pair := range [][2]string{
		{"Wie lange hält ein Debian-Release?", "wie lange hält das debian release"},
		{"Combien de temps dure une version stable de Debian ?", "combien de temps dure la version stable de debian"},
		{"¿Cuánto tiempo dura una versión estable de Debian?", "cuanto tiempo duran las versiones estables de debian"},
	} {
		if a, b := Key(pair[0]), Key(pair[1]); a != b {
			t.Errorf("Key(%q) = %q, Key(%q) = %q; want one key", pair[0], a, pair[1], b)
		}
	}
	if got := Key("What are the library's hours?"); got != "hour librari" {
		t.Errorf("English key %q, want %q", got, "hour librari")
	}
}
