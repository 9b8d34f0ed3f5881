package insights

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// Report formats Print writes.
const (
	FormatText = "text"
	FormatJSON = "json"
	FormatHTML = "html"
)

// PrintConfig says which report Print writes, and how.
type PrintConfig struct {
	// DB is the database: a postgres:// URL, or a SQLite file that must exist (a report creates nothing).
	DB string
	// Query selects the questions and lists of the report.
	Query ReportQuery
	// Format is FormatText (the default, for a terminal), FormatJSON (as GET /admin/insights answers) or
	// FormatHTML (one self-contained page).
	Format string
}

// Print writes the report of a question log's database to w, without a server. Retention is the server's to
// enforce: a report deletes nothing.
func Print(ctx context.Context, w io.Writer, c PrintConfig) error {
	if !IsPostgreSQL(c.DB) {
		if _, err := os.Stat(c.DB); err != nil {
			return fmt.Errorf("insights: %w", err)
		}
	}
	store, err := Open(ctx, c.DB, Config{Retention: -1})
	if err != nil {
		return err
	}
	defer store.Close()
	r, err := store.Report(ctx, c.Query)
	if err != nil {
		return err
	}
	switch c.Format {
	case FormatJSON:
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	case FormatHTML:
		return WriteHTML(w, r)
	case "", FormatText:
		return WriteText(w, r)
	}
	return fmt.Errorf("insights: report format %q: want text, json or html", c.Format)
}
