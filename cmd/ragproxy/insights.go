package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ragproxy/ragproxy/index"
	"github.com/ragproxy/ragproxy/insights"
)

// runInsights prints the insights report of a question log's database, without a server.
func runInsights(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("insights", flag.ContinueOnError)
	db := fs.String("db", envOr("RAGPROXY_INSIGHTS_DB", ""), "the insights database: a SQLite file or postgres://...; default insights.db in --index (RAGPROXY_INSIGHTS_DB)")
	idx := fs.String("index", envOr("RAGPROXY_INDEX", ""), "index directory: its insights.db, and its pages for those never cited (RAGPROXY_INDEX)")
	since := fs.String("since", "30d", "the period: days (30d) or a duration (12h), ending today")
	assistant := fs.String("assistant", "", "one assistant's questions only (its model id)")
	limit := fs.Int("limit", 20, "entries of each list")
	asJSON := fs.Bool("json", false, "print the report as JSON, as GET /admin/insights answers")
	html := fs.String("html", "", "write the report as an HTML page to this file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("insights: unexpected arguments %q", fs.Args())
	}
	if *asJSON && *html != "" {
		return errors.New("insights: --json and --html: choose one")
	}
	period, err := insights.ParseSince(*since)
	if err != nil {
		return fmt.Errorf("insights: --since: %w", err)
	}
	c := insights.PrintConfig{DB: *db, Query: insights.ReportQuery{Since: period, Model: *assistant, Limit: *limit}}
	if c.DB == "" {
		if *idx == "" {
			return errors.New("insights: give --db, or --index with its insights.db")
		}
		c.DB = filepath.Join(*idx, "insights.db")
	}
	if *idx != "" {
		if c.Query.Pages, err = index.PageURLs(*idx); err != nil {
			return fmt.Errorf("insights: --index: %w", err)
		}
	}
	if *asJSON {
		c.Format = insights.FormatJSON
	}
	if *html == "" {
		return insights.Print(ctx, os.Stdout, c)
	}
	f, err := os.Create(*html)
	if err != nil {
		return fmt.Errorf("insights: %w", err)
	}
	c.Format = insights.FormatHTML
	if err := insights.Print(ctx, f, c); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
