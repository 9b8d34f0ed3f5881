package insights

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"

	_ "modernc.org/sqlite" // the pure-Go SQLite driver, "sqlite"
)

// SQLite is the embedded store: one database file, no service.
type SQLite struct{ *sqlStore }

// PostgreSQL is the store that several replicas share.
type PostgreSQL struct{ *sqlStore }

var (
	_ Store = (*SQLite)(nil)
	_ Store = (*PostgreSQL)(nil)
)

// OpenSQLite opens (creating it and its directory if needed) the SQLite database at path and migrates it. The
// database runs in write-ahead-log mode, so reports read while questions are written.
func OpenSQLite(ctx context.Context, path string, cfg Config) (*SQLite, error) {
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("insights: open %s: %w", path, err)
		}
	}
	q := url.Values{}
	for _, p := range []string{"journal_mode(WAL)", "busy_timeout(10000)", "synchronous(NORMAL)", "foreign_keys(ON)"} {
		q.Add("_pragma", p)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("insights: open %s: %w", path, err)
	}
	// One writer at a time is SQLite's rule; a single connection for writes would serialise reads too, so a few
	// connections share the file and busy_timeout orders their writes.
	db.SetMaxOpenConns(4)
	s, err := open(ctx, db, sqliteDialect, cfg)
	if err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("insights: open %s: %w", path, err)
	}
	return &SQLite{s}, nil
}
