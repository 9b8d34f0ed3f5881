// Package pgtest gives a test a PostgreSQL schema of its own, in the database the tests share
// (RAGPROXY_TEST_POSTGRES_URL, which .ci/run sets up), dropped when the test ends.
package pgtest

import (
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
)

// Schema creates a schema named prefix and random hex in the database at base, dropped at the end of tb, and
// returns base's URL with it as the search path.
func Schema(tb testing.TB, base, prefix string) string {
	tb.Helper()
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := prefix + hex.EncodeToString(b[:])
	db, err := sql.Open("pgx", base)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := db.Exec("CREATE SCHEMA " + name); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		_, _ = db.Exec("DROP SCHEMA " + name + " CASCADE")
		_ = db.Close()
	})
	u, err := url.Parse(base)
	if err != nil {
		tb.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", name)
	u.RawQuery = q.Encode()
	return u.String()
}
