package insights

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ragproxy/ragproxy/grounding"
	"github.com/ragproxy/ragproxy/textnorm"
)

// sqlStore is the Store both databases share: the same tables and statements, with the dialect's placeholders.
type sqlStore struct {
	db  *sql.DB
	d   dialect
	cfg Config
	// pruned is when retention last ran (Unix nanoseconds).
	pruned atomic.Int64
}

// pruneEvery is how often writing questions also deletes those past the retention.
const pruneEvery = time.Hour

// open migrates db and applies the retention once.
func open(ctx context.Context, db *sql.DB, d dialect, cfg Config) (*sqlStore, error) {
	if err := migrate(ctx, db, d); err != nil {
		return nil, err
	}
	s := &sqlStore{db: db, d: d, cfg: cfg}
	if err := s.retain(ctx, true); err != nil {
		return nil, err
	}
	return s, nil
}

// retain deletes what is older than the retention, when forced or when it last ran pruneEvery ago.
func (s *sqlStore) retain(ctx context.Context, force bool) error {
	keep := s.cfg.retention()
	if keep < 0 {
		return nil
	}
	now := s.cfg.now()
	last := s.pruned.Load()
	if !force && now.UnixNano()-last < int64(pruneEvery) {
		return nil
	}
	if !s.pruned.CompareAndSwap(last, now.UnixNano()) {
		return nil // another writer is pruning
	}
	return s.Prune(ctx, now.Add(-keep))
}

func dayOf(t time.Time) int64 { return t.UTC().Unix() / 86400 }

func dayTime(day int64) time.Time { return time.Unix(day*86400, 0).UTC() }

// Prune implements Store. Aggregates go by whole days: a day is dropped once it began before the cut.
func (s *sqlStore) Prune(ctx context.Context, before time.Time) error {
	at, day := before.UnixMicro(), dayOf(before)
	stmts := []struct {
		q   string
		arg int64
	}{
		{`DELETE FROM questions WHERE at < ?`, at},
		{`DELETE FROM feedback WHERE at < ?`, at},
		{`DELETE FROM daily WHERE day < ?`, day},
		{`DELETE FROM daily_latency WHERE day < ?`, day},
		{`DELETE FROM daily_questions WHERE day < ?`, day},
		{`DELETE FROM daily_pages WHERE day < ?`, day},
	}
	for _, st := range stmts {
		if _, err := s.db.ExecContext(ctx, s.d.bind(st.q), st.arg); err != nil {
			return fmt.Errorf("insights: prune: %w", err)
		}
	}
	return nil
}

// Ping implements Store.
func (s *sqlStore) Ping(ctx context.Context) error {
	if err := s.db.PingContext(ctx); err != nil {
		return fmt.Errorf("insights: ping: %w", err)
	}
	return nil
}

// Close implements Store.
func (s *sqlStore) Close() error { return s.db.Close() }

// LowConfidence is the retrieval confidence under which an answered question counts as poorly grounded in the
// reports: just above the local embedder's similarities of questions unrelated to the site (0.15-0.22 on the
// Berkeley guide; see retrieval.Config.ConfidenceFloor), which the confidence floor lets through.
const LowConfidence = 0.25

// Latency is kept per day in buckets 10% wide from 1 ms (bucket 0 holds everything up to 1 ms), so that a
// percentile read from them is within 10% of the exact one.
const latencyGrowth = 1.1

func latencyBucket(d time.Duration) int64 {
	ms := float64(d) / float64(time.Millisecond)
	if ms <= 1 {
		return 0
	}
	return int64(math.Ceil(math.Log(ms) / math.Log(latencyGrowth)))
}

// bucketMillis is the upper bound of a latency bucket.
func bucketMillis(b int64) float64 { return math.Pow(latencyGrowth, float64(b)) }

// keyLanguages are the languages a question's key is read in, those ragproxy speaks, English first: a question
// not surely in another is read as English.
var keyLanguages = grounding.SpokenLanguages()

// Key is the form near-duplicate questions share: their index terms (stemmed, without stopwords), sorted and
// without repeats, so that "What are the library's hours?" and "library hours" are one question. A question surely
// in another language than English (textnorm.DetectQuestion) is read with that language's stems, stopwords and
// CJK bigrams ("Wie lange hält ein Release?" and "wie lange hält das release" are one question); any other as
// English, as every question was before.
func Key(question string) string {
	var terms []string
	if lang, ok := textnorm.DetectQuestion(question, keyLanguages); ok && !textnorm.IsEnglish(lang) {
		l := textnorm.LanguageOf(lang)
		textnorm.Words(l.Normalize(question), func(w string) bool {
			l.WordTerms(w, textnorm.Options{}, func(t string) { terms = append(terms, t) })
			return true
		})
	} else {
		textnorm.Terms(question, func(t string) bool {
			terms = append(terms, t)
			return true
		})
	}
	if len(terms) == 0 {
		return strings.ToLower(strings.TrimSpace(question))
	}
	slices.Sort(terms)
	return strings.Join(slices.Compact(terms), " ")
}

type dayModel struct {
	day   int64
	model string
}

type dailyKey struct {
	dayModel
	outcome string
}

type dailyRow struct {
	n, low, prompt, completion int64
	cost                       float64
}

type groupKey struct {
	dayModel
	qkey string
}

type groupRow struct {
	n, unanswered, low int64
	sample, topic      string
}

type pageKey struct {
	dayModel
	url string
}

type latencyKey struct {
	dayModel
	bucket int64
}

// AddQuestions implements QuestionWriter. The batch's aggregates are summed first, so each aggregate row is
// written once per batch, and rows go in many to a statement.
func (s *sqlStore) AddQuestions(ctx context.Context, qs []Question) error {
	if len(qs) == 0 {
		return nil
	}
	daily := map[dailyKey]*dailyRow{}
	groups := map[groupKey]*groupRow{}
	pages := map[pageKey]int64{}
	latency := map[latencyKey]int64{}
	rows := make([][]any, 0, len(qs))
	for _, q := range qs {
		dm := dayModel{dayOf(q.At), q.Model}
		key := Key(q.Question)
		if q.Standalone != "" {
			key = Key(q.Standalone) // a follow-up is the question its standalone form asks
		}
		rows = append(rows, []any{q.At.UnixMicro(), dm.day, q.Model, q.Question, q.Standalone, q.Outcome, q.Confidence,
			strings.Join(q.Pages, "\n"), q.Topic, key, q.Latency.Microseconds(), q.PromptTokens, q.CompletionTokens, q.Cost,
			q.ResponseID, q.Key})
		low := int64(0)
		if q.Outcome == Answered && q.Confidence < LowConfidence {
			low = 1
		}
		d := daily[dailyKey{dm, q.Outcome}]
		if d == nil {
			d = &dailyRow{}
			daily[dailyKey{dm, q.Outcome}] = d
		}
		d.n++
		d.low += low
		d.prompt += int64(q.PromptTokens)
		d.completion += int64(q.CompletionTokens)
		d.cost += q.Cost
		g := groups[groupKey{dm, key}]
		if g == nil {
			g = &groupRow{}
			groups[groupKey{dm, key}] = g
		}
		g.n++
		g.low += low
		if q.Outcome == Unanswered {
			g.unanswered++
		}
		g.sample = q.Question
		if q.Standalone != "" {
			g.sample = q.Standalone
		}
		if q.Topic != "" {
			g.topic = q.Topic
		}
		for _, p := range q.Pages {
			pages[pageKey{dm, p}]++
		}
		latency[latencyKey{dm, latencyBucket(q.Latency)}]++
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("insights: add questions: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	if err := s.insert(ctx, tx, `INSERT INTO questions (at, day, model, question, standalone, outcome, confidence, pages,
		topic, qkey, latency_us, prompt_tokens, completion_tokens, cost, response_id, client_key) VALUES `, "", rows); err != nil {
		return err
	}
	if err := s.upsert(ctx, tx, daily, groups, pages, latency); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("insights: add questions: %w", err)
	}
	return s.retain(ctx, false)
}

// rowsPerStatement is how many rows one INSERT writes: far fewer parameters than either database allows
// (SQLite 32766, PostgreSQL 65535), enough to spare most of the per-statement work.
const rowsPerStatement = 64

// insert writes rows (all of the same width) with head, a VALUES list and tail, rowsPerStatement at a time.
func (s *sqlStore) insert(ctx context.Context, tx *sql.Tx, head, tail string, rows [][]any) error {
	if len(rows) == 0 {
		return nil
	}
	width := len(rows[0])
	statement := func(n int) string {
		var b strings.Builder
		b.WriteString(head)
		one := "(" + strings.Repeat("?, ", width-1) + "?)"
		for i := range n {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(one)
		}
		b.WriteString(" ")
		b.WriteString(tail)
		return s.d.bind(b.String())
	}
	var full *sql.Stmt
	args := make([]any, 0, rowsPerStatement*width)
	for start := 0; start < len(rows); start += rowsPerStatement {
		chunk := rows[start:min(start+rowsPerStatement, len(rows))]
		args = args[:0]
		for _, r := range chunk {
			args = append(args, r...)
		}
		var err error
		if len(chunk) == rowsPerStatement {
			if full == nil {
				if full, err = tx.PrepareContext(ctx, statement(rowsPerStatement)); err != nil {
					return fmt.Errorf("insights: add questions: %w", err)
				}
				defer full.Close()
			}
			_, err = full.ExecContext(ctx, args...)
		} else {
			_, err = tx.ExecContext(ctx, statement(len(chunk)), args...)
		}
		if err != nil {
			return fmt.Errorf("insights: add questions: %w", err)
		}
	}
	return nil
}

func (s *sqlStore) upsert(ctx context.Context, tx *sql.Tx, daily map[dailyKey]*dailyRow, groups map[groupKey]*groupRow,
	pages map[pageKey]int64, latency map[latencyKey]int64) error {
	var rows [][]any
	for k, r := range daily {
		rows = append(rows, []any{k.day, k.model, k.outcome, r.n, r.low, r.prompt, r.completion, r.cost})
	}
	err := s.insert(ctx, tx, `INSERT INTO daily (day, model, outcome, n, low, prompt_tokens, completion_tokens, cost) VALUES `,
		`ON CONFLICT (day, model, outcome) DO UPDATE SET n = daily.n + excluded.n, low = daily.low + excluded.low,
		prompt_tokens = daily.prompt_tokens + excluded.prompt_tokens,
		completion_tokens = daily.completion_tokens + excluded.completion_tokens, cost = daily.cost + excluded.cost`, rows)
	if err != nil {
		return err
	}
	rows = rows[:0]
	for k, r := range groups {
		rows = append(rows, []any{k.day, k.model, k.qkey, r.n, r.unanswered, r.low, r.sample, r.topic})
	}
	err = s.insert(ctx, tx, `INSERT INTO daily_questions (day, model, qkey, n, unanswered, low, sample, topic) VALUES `,
		`ON CONFLICT (day, model, qkey) DO UPDATE SET n = daily_questions.n + excluded.n,
		unanswered = daily_questions.unanswered + excluded.unanswered, low = daily_questions.low + excluded.low,
		sample = excluded.sample,
		topic = CASE WHEN excluded.topic = '' THEN daily_questions.topic ELSE excluded.topic END`, rows)
	if err != nil {
		return err
	}
	rows = rows[:0]
	for k, n := range pages {
		rows = append(rows, []any{k.day, k.model, k.url, n})
	}
	err = s.insert(ctx, tx, `INSERT INTO daily_pages (day, model, url, n) VALUES `,
		`ON CONFLICT (day, model, url) DO UPDATE SET n = daily_pages.n + excluded.n`, rows)
	if err != nil {
		return err
	}
	rows = rows[:0]
	for k, n := range latency {
		rows = append(rows, []any{k.day, k.model, k.bucket, n})
	}
	return s.insert(ctx, tx, `INSERT INTO daily_latency (day, model, bucket, n) VALUES `,
		`ON CONFLICT (day, model, bucket) DO UPDATE SET n = daily_latency.n + excluded.n`, rows)
}

// AddFeedback implements Store. A second rating of the same answer replaces the first, but a rating that comes
// without a comment keeps the comment given with the same rating before: the chat page sends a thumbs down and
// then its comment as two requests, and whichever commits last must not wipe the comment.
func (s *sqlStore) AddFeedback(ctx context.Context, f Feedback) error {
	var model string
	err := s.db.QueryRowContext(ctx, s.d.bind(`SELECT model FROM questions WHERE response_id = ? LIMIT 1`), f.ResponseID).Scan(&model)
	if errors.Is(err, sql.ErrNoRows) {
		return ErrUnknownResponse
	}
	if err != nil {
		return fmt.Errorf("insights: add feedback: %w", err)
	}
	if f.At.IsZero() {
		f.At = s.cfg.now()
	}
	_, err = s.db.ExecContext(ctx, s.d.bind(`INSERT INTO feedback (response_id, at, day, model, rating, comment) VALUES (?, ?, ?, ?, ?, ?)
ON CONFLICT (response_id) DO UPDATE SET at = excluded.at, day = excluded.day, model = excluded.model, rating = excluded.rating,
	comment = CASE WHEN excluded.comment = '' AND excluded.rating = feedback.rating THEN feedback.comment ELSE excluded.comment END`),
		f.ResponseID, f.At.UnixMicro(), dayOf(f.At), model, f.Rating, f.Comment)
	if err != nil {
		return fmt.Errorf("insights: add feedback: %w", err)
	}
	return nil
}

// AddFAQ implements Store.
func (s *sqlStore) AddFAQ(ctx context.Context, e FAQEntry) (FAQEntry, error) {
	if e.CreatedAt.IsZero() {
		e.CreatedAt = s.cfg.now()
	}
	e.CreatedAt = e.CreatedAt.UTC().Truncate(time.Microsecond)
	q := `INSERT INTO faq_entries (question, answer, url, title, lang, created_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING id`
	if err := s.db.QueryRowContext(ctx, s.d.bind(q), e.Question, e.Answer, e.URL, e.Title, e.Lang, e.CreatedAt.UnixMicro()).Scan(&e.ID); err != nil {
		return FAQEntry{}, fmt.Errorf("insights: add faq entry: %w", err)
	}
	return e, nil
}

// FAQEntries implements Store.
func (s *sqlStore) FAQEntries(ctx context.Context) ([]FAQEntry, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, question, answer, url, title, lang, created_at FROM faq_entries ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("insights: faq entries: %w", err)
	}
	defer rows.Close()
	out := []FAQEntry{}
	for rows.Next() {
		var e FAQEntry
		var at int64
		if err := rows.Scan(&e.ID, &e.Question, &e.Answer, &e.URL, &e.Title, &e.Lang, &at); err != nil {
			return nil, fmt.Errorf("insights: faq entries: %w", err)
		}
		e.CreatedAt = time.UnixMicro(at).UTC()
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("insights: faq entries: %w", err)
	}
	return out, nil
}

// DeleteFAQ implements Store.
func (s *sqlStore) DeleteFAQ(ctx context.Context, id int64) error {
	res, err := s.db.ExecContext(ctx, s.d.bind(`DELETE FROM faq_entries WHERE id = ?`), id)
	if err != nil {
		return fmt.Errorf("insights: delete faq entry: %w", err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return ErrNotFound
	}
	return nil
}
