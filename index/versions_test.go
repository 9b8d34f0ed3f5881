package index

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// built is sample with a build time n hours after a fixed instant.
func built(version string, n int) *Index {
	ix := sample(version)
	ix.Manifest.BuiltAt = time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(n) * time.Hour)
	return ix
}

// onDisk lists the versions under dir, newest first, with the current one marked "*".
func onDisk(t *testing.T, dir string) []string {
	t.Helper()
	vs, err := Versions(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, v := range vs {
		if v.Manifest.Hashes != nil {
			t.Errorf("Versions must leave out the manifest's hashes: %s", v.Version)
		}
		s := v.Version
		if v.Current {
			s += "*"
		}
		out = append(out, s)
	}
	return out
}

func TestWriteKeepsVersionsAndActivate(t *testing.T) {
	dir := t.TempDir()
	write := func(ix *Index, opts WriteOptions) {
		t.Helper()
		if err := WriteWith(dir, ix, opts); err != nil {
			t.Fatal(err)
		}
	}
	check := func(step string, want ...string) {
		t.Helper()
		if diff := cmp.Diff(want, onDisk(t, dir)); diff != "" {
			t.Errorf("%s: versions (-want +got):\n%s", step, diff)
		}
	}
	for i, v := range []string{"v1", "v2", "v3", "v4", "v5"} {
		write(built(v, i), WriteOptions{})
	}
	check("five writes keep the default three", "v5*", "v4", "v3")

	if err := Activate(dir, "v3"); err != nil {
		t.Fatal(err)
	}
	check("activate", "v5", "v4", "v3*")
	if ix, err := Load(dir); err != nil || ix.Manifest.Version != "v3" {
		t.Fatalf("Load after Activate: %v, %v", ix, err)
	}
	// A re-ingest after a rollback keeps the version it replaces (the rolled-back-to one) and the newest other.
	write(built("v6", 6), WriteOptions{})
	check("write after the rollback", "v6*", "v5", "v3")

	write(built("v7", 7), WriteOptions{Keep: 2, Protect: []string{"v3"}})
	check("keep 2, v3 protected", "v7*", "v6", "v3")
	write(built("v8", 8), WriteOptions{Keep: 1})
	check("keep under 2 keeps 2", "v8*", "v7")
	write(built("v9", 9), WriteOptions{Keep: 5})
	write(built("v10", 10), WriteOptions{Keep: 5})
	check("keep 5", "v10*", "v9", "v8", "v7")

	for _, bad := range []string{"nope", "", "../v9", "v9/../v8", ".tmp-x"} {
		if err := Activate(dir, bad); !errors.Is(err, ErrUnknownVersion) {
			t.Errorf("Activate(%q) = %v, want ErrUnknownVersion", bad, err)
		}
	}
	check("failed activations change nothing", "v10*", "v9", "v8", "v7")
}

func TestVersionsOfMissingDir(t *testing.T) {
	if _, err := Versions(t.TempDir() + "/none"); !errors.Is(err, ErrNoIndex) {
		t.Errorf("Versions of a missing directory: %v, want ErrNoIndex", err)
	}
}

// TestWriteRemovesStaleTemporaries checks that a write removes what dead writes and ingests left in the index
// directory a day ago or more, and leaves what running ones hold.
func TestWriteRemovesStaleTemporaries(t *testing.T) {
	dir := t.TempDir()
	old, fresh := filepath.Join(dir, ".tmp-texts-1"), filepath.Join(dir, ".tmp-2")
	for _, d := range []string{old, fresh} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	day := time.Now().Add(-25 * time.Hour)
	if err := os.Chtimes(old, day, day); err != nil {
		t.Fatal(err)
	}
	if err := Write(dir, sample("one")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(old); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a day-old temporary directory is still there: %v", err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("a running write's temporary directory was removed: %v", err)
	}
}
