package serve

import (
	"context"
	"log/slog"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/ragproxy/ragproxy/grounding"
	"github.com/ragproxy/ragproxy/ingest"
	"github.com/ragproxy/ragproxy/insights"
	"github.com/ragproxy/ragproxy/observability"
	"github.com/ragproxy/ragproxy/retrieval"
	"github.com/ragproxy/ragproxy/retrieval/faq"
	"github.com/ragproxy/ragproxy/server"
)

// Insights are the question log's settings.
type Insights struct {
	// DB is the insights database: a postgres:// URL (replicas share it), or a SQLite file. Default insights.db in
	// the index directory.
	DB string
	// Mode is what the log keeps of each question; default insights.Redacted. With insights.Off no question is
	// stored (they are still counted), and feedback finds no answer to rate.
	Mode insights.Mode
	// Retention is how long questions and feedback are kept; default insights.DefaultRetention.
	Retention time.Duration
}

// insightsDB is the database the insights live in.
func (c *Config) insightsDB() string {
	if c.Insights.DB != "" {
		return c.Insights.DB
	}
	return filepath.Join(c.Index, "insights.db")
}

// wireInsights opens the insights database (lazily: one that is down costs the insights until it is up, not the
// server) and wires the question log, feedback, the insights report and the FAQ entries into the gateway and
// the grounder. The returned run writes the log until its context ends; close closes the database.
func (c *Config) wireInsights(ctx context.Context, scfg *server.Config, g *grounding.Grounder, live *retrieval.Live,
	metrics *observability.Metrics, logger *slog.Logger) (run func(context.Context), closeDB func()) {
	db := c.insightsDB()
	where := db
	if insights.IsPostgreSQL(db) {
		where = "postgresql"
	}
	var reported atomic.Bool // the database's unavailability is logged once, not at every attempt
	store := &insights.Lazy{
		Open: func(ctx context.Context) (insights.Store, error) {
			s, err := insights.Open(ctx, db, insights.Config{Retention: c.Insights.Retention})
			if err == nil && reported.Swap(false) {
				logger.Info("insights database available again", "db", where)
			}
			return s, err
		},
		OnError: func(err error) {
			if !reported.Swap(true) {
				logger.Error("insights database unavailable; answers go on without it, and it is tried again every 10s",
					"db", where, "err", err)
			}
		},
	}
	price := ingest.DefaultPrices[c.Upstream.Primary.Model]
	log := insights.NewLog(insights.LogConfig{Store: store, Mode: c.Insights.Mode, Metrics: metrics, Logger: logger,
		Price: insights.Price{Input: price.Input, Output: price.Output}})
	api := &insights.API{Store: store, Log: log, Mode: c.Insights.Mode, Metrics: metrics,
		Pages: func() []string {
			r, release := live.Acquire()
			defer release()
			return r.Index().PageURLs()
		},
		FAQChanged: func(_ context.Context, es []insights.FAQEntry) error {
			g.LiveFAQ.Set(faqEntries(es))
			return nil
		}}
	scfg.Questions = log
	scfg.Routes = append(scfg.Routes, api.ClientRoutes()...)
	scfg.Admin = append(scfg.Admin, api.AdminRoutes()...)
	// The entries added through the admin API answer from the start, as before the restart.
	if es, err := store.FAQEntries(ctx); err == nil {
		g.LiveFAQ.Set(faqEntries(es))
		logger.Info("insights", "db", where, "question_log", c.Insights.Mode.String(), "faq_entries_added", len(es))
	}
	return func(ctx context.Context) { _ = log.Run(ctx) }, func() { _ = store.Close() }
}

// The server's metrics count the question log's answers, ratings and losses.
var _ insights.Metrics = (*observability.Metrics)(nil)

// faqEntries are the admin API's entries as the FAQ matcher takes them.
func faqEntries(es []insights.FAQEntry) []faq.Entry {
	out := make([]faq.Entry, len(es))
	for i, e := range es {
		out[i] = faq.Entry{Question: e.Question, Answer: e.Answer, URL: e.URL, Title: e.Title, Lang: e.Lang, Source: "admin"}
	}
	return out
}
