package main

import (
	"context"
	"encoding/json"
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
	path := *db
	if path == "" {
		if *idx == "" {
			return errors.New("insights: give --db, or --index with its insights.db")
		}
		path = filepath.Join(*idx, "insights.db")
	}
	if !insights.IsPostgreSQL(path) {
		// Opening creates a database; a report reads one that exists.
		if _, err := os.Stat(path); err != nil {
			return fmt.Errorf("insights: %w", err)
		}
	}
	// Retention is the server's to enforce: a report deletes nothing.
	store, err := insights.Open(ctx, path, insights.Config{Retention: -1})
	if err != nil {
		return err
	}
	defer store.Close()
	q := insights.ReportQuery{Since: period, Model: *assistant, Limit: *limit}
	if *idx != "" {
		if q.Pages, err = indexPages(*idx); err != nil {
			return fmt.Errorf("insights: --index: %w", err)
		}
	}
	r, err := store.Report(ctx, q)
	if err != nil {
		return err
	}
	switch {
	case *asJSON:
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	case *html != "":
		f, err := os.Create(*html)
		if err != nil {
			return fmt.Errorf("insights: %w", err)
		}
		if err := insights.WriteHTML(f, r); err != nil {
			f.Close()
			return fmt.Errorf("insights: %w", err)
		}
		return f.Close()
	}
	return insights.WriteText(os.Stdout, r)
}

// indexPages are the URLs of the pages of the index version CURRENT names.
func indexPages(dir string) ([]string, error) {
	ix, err := index.LoadWith(dir, index.LoadOptions{TextsOnDisk: true, MapVectors: true})
	if err != nil {
		return nil, err
	}
	urls := make([]string, len(ix.Pages))
	for i, p := range ix.Pages {
		urls[i] = p.URL
	}
	return urls, nil
}
