package corpustest

import (
	"context"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/ragproxy/ragproxy/examples"
	"github.com/ragproxy/ragproxy/index"
	"github.com/ragproxy/ragproxy/ingest"
)

// TestCopies makes three copies of the example site and ingests them: every page of each copy is kept, under its
// copy's prefix, with links that stay inside the copy.
func TestCopies(t *testing.T) {
	site := t.TempDir()
	sub, _ := fs.Sub(examples.Site, "site")
	if err := os.CopyFS(site, sub); err != nil {
		t.Fatal(err)
	}
	ingestDir := func(src string) *index.Index {
		t.Helper()
		dir := t.TempDir()
		_, err := ingest.Run(context.Background(), ingest.Config{Source: src, BaseURL: examples.BaseURL, IndexDir: dir,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			t.Fatal(err)
		}
		ix, err := index.Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		return ix
	}
	one := ingestDir(site)
	copies := Copies(t, site, examples.BaseURL, 3)
	t.Cleanup(func() { os.RemoveAll(copies) })
	three := ingestDir(copies)
	if len(three.Pages) != 3*len(one.Pages) {
		t.Fatalf("three copies of %d pages gave %d pages", len(one.Pages), len(three.Pages))
	}
	for _, p := range three.Pages {
		prefix := p.URL[:len(examples.BaseURL)+3] // BaseURL + "cK/"
		if !strings.HasPrefix(p.URL, examples.BaseURL+"c") || !strings.Contains(p.Markdown, "Copy "+prefix[len(prefix)-2:len(prefix)-1]+" of this page") {
			t.Errorf("page %s is not marked as its copy's", p.URL)
		}
		for _, l := range p.Links {
			if !strings.HasPrefix(three.Pages[l].URL, prefix) {
				t.Errorf("%s links out of its copy to %s", p.URL, three.Pages[l].URL)
			}
		}
	}
	if again := Copies(t, site, examples.BaseURL, 3); again != copies {
		t.Errorf("a second call made another directory: %s, then %s", copies, again)
	}
}
