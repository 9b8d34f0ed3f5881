package main

import (
	"flag"
	"fmt"
	"time"

	"github.com/ragproxy/ragproxy/insights"
	"github.com/ragproxy/ragproxy/serve"
)

// insightsFlags are the question log's settings of serve.
type insightsFlags struct {
	mode, db  string
	retention time.Duration
}

func (f *insightsFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.mode, "question-log", envOr("RAGPROXY_QUESTION_LOG", "redacted"), "what the question log keeps of visitors' questions: redacted (e-mail addresses, phone numbers, card-like numbers and long digit runs replaced), full, or off (RAGPROXY_QUESTION_LOG)")
	fs.StringVar(&f.db, "insights-db", envOr("RAGPROXY_INSIGHTS_DB", ""), "database of the question log, feedback and added FAQ entries: a SQLite file, or postgres://user:password@host/db for several replicas; default insights.db in the index directory (RAGPROXY_INSIGHTS_DB)")
	fs.DurationVar(&f.retention, "insights-retention", envDuration("RAGPROXY_INSIGHTS_RETENTION", insights.DefaultRetention), "how long questions and feedback are kept; the database deletes older ones (RAGPROXY_INSIGHTS_RETENTION)")
}

// resolve reads the flags into c.
func (f *insightsFlags) resolve(c *serve.Insights) error {
	mode, err := insights.ParseMode(f.mode)
	if err != nil {
		return fmt.Errorf("serve: --question-log: %w", err)
	}
	if f.retention <= 0 {
		return fmt.Errorf("serve: --insights-retention %v: want a positive duration", f.retention)
	}
	c.Mode, c.DB, c.Retention = mode, f.db, f.retention
	return nil
}
