package insights

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
)

// dialect is what differs between the databases: the schema's column types, placeholders, and how concurrent
// migrations are kept apart.
type dialect struct {
	name string
	// migrations are the schema's versions, in order: migrations[i] takes the schema to version i+1. A released
	// migration is never edited; a change is a new one.
	migrations []string
	// numbered placeholders ($1, $2, ...) instead of ?.
	numbered bool
	// lock, when set, runs first in a migration's transaction and holds other processes' migrations off until
	// it ends.
	lock string
}

// bind rewrites a statement written with ? placeholders for d.
func (d dialect) bind(q string) string {
	if !d.numbered {
		return q
	}
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			fmt.Fprintf(&b, "$%d", n)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// schema writes version 1 of the schema with the dialect's id column, float type and table option for tables
// that are their own index (SQLite's WITHOUT ROWID). Times are Unix microseconds and days are days since
// 1970-01-01 UTC, the same integers in both databases. The daily tables hold per-day aggregates written with
// the questions, so that a report over months reads a few thousand rows per day instead of every question;
// the questions' and pages' aggregates are kept in the order of the question and the page, so that summing
// them over days reads them in order instead of sorting them.
func schema(id, float, withoutRowID string) string {
	return strings.NewReplacer("{id}", id, "{float}", float, "{without_rowid}", withoutRowID).Replace(`
CREATE TABLE questions (
	id {id},
	at BIGINT NOT NULL,
	day INTEGER NOT NULL,
	model TEXT NOT NULL,
	question TEXT NOT NULL,
	standalone TEXT NOT NULL,
	outcome TEXT NOT NULL,
	confidence {float} NOT NULL,
	pages TEXT NOT NULL,
	topic TEXT NOT NULL,
	qkey TEXT NOT NULL,
	latency_us BIGINT NOT NULL,
	prompt_tokens BIGINT NOT NULL,
	completion_tokens BIGINT NOT NULL,
	cost {float} NOT NULL,
	response_id TEXT NOT NULL,
	client_key TEXT NOT NULL
);
CREATE INDEX questions_at ON questions (at);
CREATE INDEX questions_outcome_at ON questions (outcome, at);
CREATE INDEX questions_response ON questions (response_id);
CREATE TABLE feedback (
	id {id},
	response_id TEXT NOT NULL,
	at BIGINT NOT NULL,
	day INTEGER NOT NULL,
	model TEXT NOT NULL,
	rating TEXT NOT NULL,
	comment TEXT NOT NULL
);
CREATE INDEX feedback_at ON feedback (at);
CREATE INDEX feedback_response ON feedback (response_id);
CREATE TABLE daily (
	day INTEGER NOT NULL,
	model TEXT NOT NULL,
	outcome TEXT NOT NULL,
	n BIGINT NOT NULL,
	low BIGINT NOT NULL,
	prompt_tokens BIGINT NOT NULL,
	completion_tokens BIGINT NOT NULL,
	cost {float} NOT NULL,
	PRIMARY KEY (day, model, outcome)
);
CREATE TABLE daily_latency (
	day INTEGER NOT NULL,
	model TEXT NOT NULL,
	bucket INTEGER NOT NULL,
	n BIGINT NOT NULL,
	PRIMARY KEY (day, model, bucket)
);
CREATE TABLE daily_questions (
	day INTEGER NOT NULL,
	model TEXT NOT NULL,
	qkey TEXT NOT NULL,
	n BIGINT NOT NULL,
	unanswered BIGINT NOT NULL,
	low BIGINT NOT NULL,
	sample TEXT NOT NULL,
	topic TEXT NOT NULL,
	PRIMARY KEY (qkey, day, model)
){without_rowid};
CREATE TABLE daily_pages (
	day INTEGER NOT NULL,
	model TEXT NOT NULL,
	url TEXT NOT NULL,
	n BIGINT NOT NULL,
	PRIMARY KEY (url, day, model)
){without_rowid};
CREATE TABLE faq_entries (
	id {id},
	question TEXT NOT NULL,
	answer TEXT NOT NULL,
	url TEXT NOT NULL,
	title TEXT NOT NULL,
	created_at BIGINT NOT NULL
)`)
}

// faqLang is version 2: an FAQ entry's language (a BCP 47 tag; "" for the entries before it, read in the
// language their text is surely written in, else the site's).
const faqLang = `ALTER TABLE faq_entries ADD COLUMN lang TEXT NOT NULL DEFAULT ''`

// feedbackOne is version 3: one feedback row per answer, held by a unique index so that a rating is written
// in one statement (AddFeedback's upsert) rather than deleted and inserted again, which two requests racing on
// PostgreSQL could leave doubled. Of the rows an answer already has, the last written stays.
const feedbackOne = `DELETE FROM feedback WHERE id NOT IN (SELECT MAX(id) FROM feedback GROUP BY response_id);
DROP INDEX feedback_response;
CREATE UNIQUE INDEX feedback_response_one ON feedback (response_id)`

var (
	sqliteDialect = dialect{name: "sqlite", migrations: []string{
		schema("INTEGER PRIMARY KEY AUTOINCREMENT", "REAL", " WITHOUT ROWID"),
		faqLang,
		feedbackOne,
	}}
	postgresDialect = dialect{name: "postgres", numbered: true, migrations: []string{
		schema("BIGSERIAL PRIMARY KEY", "DOUBLE PRECISION", ""),
		faqLang,
		feedbackOne,
	},
		// Replicas starting together each migrate; the first holds the others off until it committed, and they
		// then find nothing left to do. The key is an arbitrary constant of this schema.
		lock: "SELECT pg_advisory_xact_lock(7261626)",
	}
)

// migrate brings the database's schema to the newest version d knows, one version per transaction, and
// refuses a database whose schema is newer than that (written by a later release).
func migrate(ctx context.Context, db *sql.DB, d dialect) error {
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)`); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	for {
		done, err := migrateOne(ctx, db, d)
		if err != nil || done {
			return err
		}
	}
}

// migrateOne applies the next pending migration; done reports that there was none.
func migrateOne(ctx context.Context, db *sql.DB, d dialect) (done bool, err error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("migrate: %w", err)
	}
	defer func() {
		if err != nil || done {
			_ = tx.Rollback()
		}
	}()
	if d.lock != "" {
		if _, err := tx.ExecContext(ctx, d.lock); err != nil {
			return false, fmt.Errorf("migrate: lock: %w", err)
		}
	}
	var version int
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&version); err != nil {
		return false, fmt.Errorf("migrate: %w", err)
	}
	switch {
	case version > len(d.migrations):
		return false, fmt.Errorf("migrate: the database's schema is version %d, newer than this release's %d", version, len(d.migrations))
	case version == len(d.migrations):
		return true, nil
	}
	for _, stmt := range strings.Split(d.migrations[version], ";\n") {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return false, fmt.Errorf("migrate: version %d: %w", version+1, err)
		}
	}
	if _, err := tx.ExecContext(ctx, d.bind(`INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)`),
		version+1, time.Now().UnixMicro()); err != nil {
		return false, fmt.Errorf("migrate: version %d: %w", version+1, err)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("migrate: version %d: %w", version+1, err)
	}
	return false, nil
}

// SchemaVersion is the newest schema version this release writes.
func SchemaVersion() int { return len(sqliteDialect.migrations) }
