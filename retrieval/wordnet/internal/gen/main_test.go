package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// The committed file is what the generator makes of the WordNet 3.0 database (Debian's wordnet-base), byte for
// byte.
func TestReproducesCommittedFile(t *testing.T) {
	const dict = "/usr/share/wordnet"
	if _, err := os.Stat(filepath.Join(dict, "data.noun")); err != nil {
		t.Skipf("no WordNet database in %s (apt-get install wordnet-base): %v", dict, err)
	}
	out := filepath.Join(t.TempDir(), "wordnet.txt.gz")
	if err := run(dict, out); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join("..", "..", "wordnet.txt.gz"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("generated file (%d bytes) differs from the committed one (%d bytes): run go generate ./retrieval/wordnet", len(got), len(want))
	}
}
