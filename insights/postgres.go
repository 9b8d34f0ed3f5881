package insights

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// OpenPostgreSQL connects to the PostgreSQL database at url (postgres://user:password@host:port/database) and
// migrates it.
func OpenPostgreSQL(ctx context.Context, url string, cfg Config) (*PostgreSQL, error) {
	pc, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("insights: open postgresql: %w", err)
	}
	db := stdlib.OpenDB(*pc)
	db.SetMaxOpenConns(8)
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("insights: open postgresql %s: %w", redactURL(url), err)
	}
	s, err := open(ctx, db, postgresDialect, cfg)
	if err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("insights: open postgresql %s: %w", redactURL(url), err)
	}
	return &PostgreSQL{s}, nil
}

// Open opens the store a --insights-db value names: a postgres:// or postgresql:// URL, else a SQLite file.
func Open(ctx context.Context, db string, cfg Config) (Store, error) {
	if IsPostgreSQL(db) {
		return OpenPostgreSQL(ctx, db, cfg)
	}
	return OpenSQLite(ctx, db, cfg)
}

// IsPostgreSQL reports whether db names a PostgreSQL database.
func IsPostgreSQL(db string) bool {
	return strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://")
}

// redactURL hides a database URL's password, for errors and logs.
func redactURL(u string) string {
	pc, err := pgx.ParseConfig(u)
	if err != nil {
		return "(unparsable url)"
	}
	return fmt.Sprintf("%s@%s:%d/%s", pc.User, pc.Host, pc.Port, pc.Database)
}
