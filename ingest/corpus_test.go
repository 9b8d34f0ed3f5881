package ingest

import (
	"os"
	"testing"
)

// corpusBase is the URL the Berkeley mirror was saved from.
const corpusBase = "http://guide.berkeley.edu/"

// corpusDir returns the Berkeley mirror named by RAGPROXY_TEST_CORPUS, skipping when it is unset.
func corpusDir(tb testing.TB) string {
	tb.Helper()
	dir := os.Getenv("RAGPROXY_TEST_CORPUS")
	if dir == "" {
		tb.Skip("RAGPROXY_TEST_CORPUS is not set")
	}
	return dir
}
