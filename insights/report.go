package insights

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// ReportQuery says what a report covers.
type ReportQuery struct {
	// Since is the period's length, ending now; it covers whole UTC days, today included. Default 30 days.
	Since time.Duration
	// Model, when set, keeps one assistant's questions only.
	Model string
	// Limit bounds each list of the report; default 20.
	Limit int
	// Pages, when set, are the URLs of the served index's pages, for the pages never cited.
	Pages []string
}

// Report summarises a period's questions and feedback.
type Report struct {
	Object   string    `json:"object"`
	From     string    `json:"from"`
	To       string    `json:"to"`
	Model    string    `json:"assistant,omitempty"`
	Totals   Totals    `json:"totals"`
	Days     []Day     `json:"days"`
	Top      []Group   `json:"top_questions"`
	Gaps     []Topic   `json:"gaps"`
	Cited    []Cited   `json:"cited_pages"`
	Never    []string  `json:"never_cited"`
	Downvote []Comment `json:"downvoted"`
}

// Totals are a period's sums.
type Totals struct {
	Questions        int64   `json:"questions"`
	Answered         int64   `json:"answered"`
	Unanswered       int64   `json:"unanswered"`
	FAQ              int64   `json:"faq"`
	LowConfidence    int64   `json:"low_confidence"`
	AnsweredShare    float64 `json:"answered_share"`
	UnansweredShare  float64 `json:"unanswered_share"`
	FAQShare         float64 `json:"faq_share"`
	Up               int64   `json:"thumbs_up"`
	Down             int64   `json:"thumbs_down"`
	LatencyP50       float64 `json:"latency_p50_ms"`
	LatencyP95       float64 `json:"latency_p95_ms"`
	PromptTokens     int64   `json:"prompt_tokens"`
	CompletionTokens int64   `json:"completion_tokens"`
	Cost             float64 `json:"cost_usd"`
}

// Day is one day of the series.
type Day struct {
	Day        string `json:"day"`
	Questions  int64  `json:"questions"`
	Answered   int64  `json:"answered"`
	Unanswered int64  `json:"unanswered"`
	FAQ        int64  `json:"faq"`
	Up         int64  `json:"thumbs_up"`
	Down       int64  `json:"thumbs_down"`
}

// Group is a question and its near-duplicates (those with the same Key).
type Group struct {
	Question      string `json:"question"`
	Count         int64  `json:"count"`
	Unanswered    int64  `json:"unanswered"`
	LowConfidence int64  `json:"low_confidence"`
	Topic         string `json:"topic,omitempty"`
}

// Topic is the unanswered and poorly grounded questions of one part of the site.
type Topic struct {
	Topic     string  `json:"topic"`
	Count     int64   `json:"count"`
	Questions []Group `json:"questions"`
}

// Cited is a page and how many answers cited it.
type Cited struct {
	URL   string `json:"url"`
	Count int64  `json:"count"`
}

// Comment is a downvoted answer.
type Comment struct {
	ResponseID string    `json:"id"`
	At         time.Time `json:"at"`
	Model      string    `json:"model"`
	Question   string    `json:"question"`
	Outcome    string    `json:"outcome"`
	Comment    string    `json:"comment"`
}

// where is a report's filter on the daily tables: from a day, optionally one model.
func (q ReportQuery) where(from int64) (string, []any) {
	if q.Model != "" {
		return " WHERE day >= ? AND model = ?", []any{from, q.Model}
	}
	return " WHERE day >= ?", []any{from}
}

// Report implements Store.
func (s *sqlStore) Report(ctx context.Context, q ReportQuery) (*Report, error) {
	if q.Since <= 0 {
		q.Since = 30 * 24 * time.Hour
	}
	if q.Limit <= 0 {
		q.Limit = 20
	}
	now := s.cfg.now()
	to := dayOf(now)
	from := to - int64((q.Since+24*time.Hour-1)/(24*time.Hour)) + 1
	where, args := q.where(from)
	r := &Report{Object: "insights", From: dayTime(from).Format(time.DateOnly), To: dayTime(to).Format(time.DateOnly), Model: q.Model,
		Days: []Day{}, Top: []Group{}, Gaps: []Topic{}, Cited: []Cited{}, Never: []string{}, Downvote: []Comment{}}
	days := map[int64]*Day{}
	day := func(d int64) *Day {
		if days[d] == nil {
			days[d] = &Day{Day: dayTime(d).Format(time.DateOnly)}
		}
		return days[d]
	}
	t := &r.Totals
	err := s.each(ctx, `SELECT day, outcome, CAST(SUM(n) AS BIGINT), CAST(SUM(low) AS BIGINT), CAST(SUM(prompt_tokens) AS BIGINT),
		CAST(SUM(completion_tokens) AS BIGINT), SUM(cost) FROM daily`+where+` GROUP BY day, outcome`, args, func(scan func(...any) error) error {
		var d, n, low, pt, ct int64
		var outcome string
		var cost float64
		if err := scan(&d, &outcome, &n, &low, &pt, &ct, &cost); err != nil {
			return err
		}
		dd := day(d)
		dd.Questions += n
		t.Questions += n
		switch outcome {
		case Answered:
			dd.Answered += n
			t.Answered += n
		case Unanswered:
			dd.Unanswered += n
			t.Unanswered += n
		case FAQ:
			dd.FAQ += n
			t.FAQ += n
		}
		t.LowConfidence += low
		t.PromptTokens += pt
		t.CompletionTokens += ct
		t.Cost += cost
		return nil
	})
	if err != nil {
		return nil, err
	}
	if t.Questions > 0 {
		t.AnsweredShare = float64(t.Answered) / float64(t.Questions)
		t.UnansweredShare = float64(t.Unanswered) / float64(t.Questions)
		t.FAQShare = float64(t.FAQ) / float64(t.Questions)
	}
	err = s.each(ctx, `SELECT day, rating, COUNT(*) FROM feedback`+where+` GROUP BY day, rating`, args, func(scan func(...any) error) error {
		var d, n int64
		var rating string
		if err := scan(&d, &rating, &n); err != nil {
			return err
		}
		if rating == Up {
			day(d).Up += n
			t.Up += n
		} else {
			day(d).Down += n
			t.Down += n
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, d := range slices.Sorted(mapKeys(days)) {
		r.Days = append(r.Days, *days[d])
	}
	if err := s.latency(ctx, where, args, t); err != nil {
		return nil, err
	}
	if err := s.groups(ctx, where, args, q.Limit, r); err != nil {
		return nil, err
	}
	if err := s.cited(ctx, where, args, q, r); err != nil {
		return nil, err
	}
	return r, s.downvoted(ctx, from, q, r)
}

func mapKeys[K comparable, V any](m map[K]V) func(func(K) bool) {
	return func(yield func(K) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// each runs a query and calls row for each of its rows.
func (s *sqlStore) each(ctx context.Context, q string, args []any, row func(scan func(...any) error) error) error {
	rows, err := s.db.QueryContext(ctx, s.d.bind(q), args...)
	if err != nil {
		return fmt.Errorf("insights: report: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := row(rows.Scan); err != nil {
			return fmt.Errorf("insights: report: %w", err)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("insights: report: %w", err)
	}
	return nil
}

// latency reads the period's p50 and p95 from the per-day histograms: each is the upper bound of the bucket
// where the share is reached.
func (s *sqlStore) latency(ctx context.Context, where string, args []any, t *Totals) error {
	type bucket struct{ b, n int64 }
	var buckets []bucket
	var total int64
	err := s.each(ctx, `SELECT bucket, CAST(SUM(n) AS BIGINT) FROM daily_latency`+where+` GROUP BY bucket ORDER BY bucket`, args,
		func(scan func(...any) error) error {
			var b bucket
			if err := scan(&b.b, &b.n); err != nil {
				return err
			}
			buckets = append(buckets, b)
			total += b.n
			return nil
		})
	if err != nil || total == 0 {
		return err
	}
	pct := func(p float64) float64 {
		rank := int64(p*float64(total) + 0.5)
		var seen int64
		for _, b := range buckets {
			if seen += b.n; seen >= max(rank, 1) {
				return bucketMillis(b.b)
			}
		}
		return bucketMillis(buckets[len(buckets)-1].b)
	}
	t.LatencyP50, t.LatencyP95 = pct(0.5), pct(0.95)
	return nil
}

// groups fills the most asked questions and the gaps (the most frequent unanswered and poorly grounded
// questions, by topic) from one pass over the questions' aggregates, which are stored in question order.
func (s *sqlStore) groups(ctx context.Context, where string, args []any, limit int, r *Report) error {
	type group struct {
		Group
		key string
	}
	var all []group
	err := s.each(ctx, `SELECT qkey, CAST(SUM(n) AS BIGINT), CAST(SUM(unanswered) AS BIGINT), CAST(SUM(low) AS BIGINT), MAX(sample), MAX(topic)
		FROM daily_questions`+where+` GROUP BY qkey`, args, func(scan func(...any) error) error {
		var g group
		if err := scan(&g.key, &g.Count, &g.Unanswered, &g.LowConfidence, &g.Question, &g.Topic); err != nil {
			return err
		}
		all = append(all, g)
		return nil
	})
	if err != nil {
		return err
	}
	slices.SortFunc(all, func(a, b group) int {
		if a.Count != b.Count {
			return cmp.Compare(b.Count, a.Count)
		}
		return strings.Compare(a.key, b.key)
	})
	for _, g := range all[:min(limit, len(all))] {
		r.Top = append(r.Top, g.Group)
	}
	missed := func(g group) int64 { return g.Unanswered + g.LowConfidence }
	all = slices.DeleteFunc(all, func(g group) bool { return missed(g) == 0 })
	slices.SortFunc(all, func(a, b group) int {
		if missed(a) != missed(b) {
			return cmp.Compare(missed(b), missed(a))
		}
		return strings.Compare(a.key, b.key)
	})
	topics := map[string]*Topic{}
	var order []string
	for _, g := range all[:min(limit*10, len(all))] {
		name := g.Topic
		if name == "" {
			name = "(no page found)"
		}
		tp := topics[name]
		if tp == nil {
			tp = &Topic{Topic: name}
			topics[name] = tp
			order = append(order, name)
		}
		tp.Count += missed(g)
		if len(tp.Questions) < limit {
			tp.Questions = append(tp.Questions, g.Group)
		}
	}
	for _, name := range order {
		r.Gaps = append(r.Gaps, *topics[name])
	}
	slices.SortStableFunc(r.Gaps, func(a, b Topic) int { return cmp.Compare(b.Count, a.Count) })
	if len(r.Gaps) > limit {
		r.Gaps = r.Gaps[:limit]
	}
	return nil
}

// cited lists the most cited pages and, given the index's pages, those no answer cited.
func (s *sqlStore) cited(ctx context.Context, where string, args []any, q ReportQuery, r *Report) error {
	seen := map[string]bool{}
	err := s.each(ctx, `SELECT url, CAST(SUM(n) AS BIGINT) AS c FROM daily_pages`+where+` GROUP BY url ORDER BY c DESC, url`, args,
		func(scan func(...any) error) error {
			var c Cited
			if err := scan(&c.URL, &c.Count); err != nil {
				return err
			}
			seen[c.URL] = true
			if len(r.Cited) < q.Limit {
				r.Cited = append(r.Cited, c)
			}
			return nil
		})
	if err != nil {
		return err
	}
	for _, p := range q.Pages {
		if !seen[p] {
			r.Never = append(r.Never, p)
		}
	}
	return nil
}

// downvoted lists the newest downvoted answers with their questions and comments.
func (s *sqlStore) downvoted(ctx context.Context, from int64, q ReportQuery, r *Report) error {
	query := `SELECT f.response_id, f.at, f.model, f.comment, COALESCE(MAX(q.question), ''), COALESCE(MAX(q.outcome), '')
		FROM feedback f LEFT JOIN questions q ON q.response_id = f.response_id
		WHERE f.rating = 'down' AND f.day >= ?`
	args := []any{from}
	if q.Model != "" {
		query += ` AND f.model = ?`
		args = append(args, q.Model)
	}
	query += ` GROUP BY f.id, f.response_id, f.at, f.model, f.comment ORDER BY f.at DESC LIMIT ?`
	return s.each(ctx, query, append(args, q.Limit), func(scan func(...any) error) error {
		var c Comment
		var at int64
		if err := scan(&c.ResponseID, &at, &c.Model, &c.Comment, &c.Question, &c.Outcome); err != nil {
			return err
		}
		c.At = time.UnixMicro(at).UTC()
		r.Downvote = append(r.Downvote, c)
		return nil
	})
}

// ListQuery selects stored questions.
type ListQuery struct {
	// Since is how far back to list; default 30 days.
	Since time.Duration
	// Outcome, when set, keeps questions of that outcome; Model one assistant's.
	Outcome, Model string
	// Page is the page number from 1; PerPage its size, default 50, at most 500.
	Page, PerPage int
}

// QuestionList is a page of stored questions.
type QuestionList struct {
	Object  string     `json:"object"`
	Total   int64      `json:"total"`
	Page    int        `json:"page"`
	PerPage int        `json:"per_page"`
	HasMore bool       `json:"has_more"`
	Data    []Question `json:"data"`
}

// Questions implements Store.
func (s *sqlStore) Questions(ctx context.Context, q ListQuery) (*QuestionList, error) {
	if q.Since <= 0 {
		q.Since = 30 * 24 * time.Hour
	}
	q.Page = max(q.Page, 1)
	if q.PerPage <= 0 {
		q.PerPage = 50
	}
	q.PerPage = min(q.PerPage, 500)
	where := ` WHERE at >= ?`
	args := []any{s.cfg.now().Add(-q.Since).UnixMicro()}
	if q.Outcome != "" {
		where += ` AND outcome = ?`
		args = append(args, q.Outcome)
	}
	if q.Model != "" {
		where += ` AND model = ?`
		args = append(args, q.Model)
	}
	out := &QuestionList{Object: "list", Page: q.Page, PerPage: q.PerPage, Data: []Question{}}
	if err := s.db.QueryRowContext(ctx, s.d.bind(`SELECT COUNT(*) FROM questions`+where), args...).Scan(&out.Total); err != nil {
		return nil, fmt.Errorf("insights: questions: %w", err)
	}
	err := s.each(ctx, `SELECT id, at, model, question, standalone, outcome, confidence, pages, topic, latency_us, prompt_tokens,
		completion_tokens, cost, response_id, client_key FROM questions`+where+` ORDER BY at DESC, id DESC LIMIT ? OFFSET ?`,
		append(args, q.PerPage, (q.Page-1)*q.PerPage), func(scan func(...any) error) error {
			var x Question
			var at, lat int64
			var pages string
			if err := scan(&x.ID, &at, &x.Model, &x.Question, &x.Standalone, &x.Outcome, &x.Confidence, &pages, &x.Topic, &lat,
				&x.PromptTokens, &x.CompletionTokens, &x.Cost, &x.ResponseID, &x.Key); err != nil {
				return err
			}
			x.At, x.Latency = time.UnixMicro(at).UTC(), time.Duration(lat)*time.Microsecond
			x.Pages = []string{}
			if pages != "" {
				x.Pages = strings.Split(pages, "\n")
			}
			out.Data = append(out.Data, x)
			return nil
		})
	if err != nil {
		return nil, err
	}
	out.HasMore = int64(q.Page*q.PerPage) < out.Total
	return out, nil
}
