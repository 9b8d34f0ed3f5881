package boilerplate

import (
	"fmt"
	"testing"
)

// site returns n pages, each with its own text, the shared header and footer blocks given and, on the pages
// whose index is below shared, a breadcrumb.
func site(n, shared int) []string {
	pages := make([]string, n)
	for i := range pages {
		md := ""
		if i < shared {
			md += "[Home](https://example.org/) > [Docs](https://example.org/docs/)\n\n"
		}
		md += body(i)
		md += "\n"
		md += "Copyright 2026, The Foundation. Licensed under the License.\nThe logo is a trademark of The Foundation.\n"
		pages[i] = md
	}
	return pages
}

// body is page i's own text, a code block with a blank line in it last.
func body(i int) string {
	return fmt.Sprintf("# Page %d\n\nThe text of page %d, which no other page has.\n\n```\nexample %d\n\ncode with a blank line\n```\n", i, i, i)
}

func find(t *testing.T, pages []string, cfg Config) *Set {
	t.Helper()
	edges := make([][]uint64, len(pages))
	for i, md := range pages {
		edges[i] = Edges(md, cfg)
	}
	return Build(edges, cfg)
}

func TestFindAndStrip(t *testing.T) {
	pages := site(20, 12) // the breadcrumb opens 12 of 20 pages, the footer closes all
	s := find(t, pages, Config{})
	if s.Len() != 2 || s.Key() == "" {
		t.Fatalf("found %d blocks (key %q), want the breadcrumb and the footer", s.Len(), s.Key())
	}
	for _, i := range []int{3, 15} { // with the breadcrumb and the footer, with the footer alone
		if got := s.Strip(pages[i]); got != body(i) {
			t.Errorf("Strip(page %d) =\n%q\nwant\n%q", i, got, body(i))
		}
	}
	// Under the share, a block stays: the breadcrumb opens 9 of 20 pages.
	if s := find(t, site(20, 9), Config{}); s.Len() != 1 {
		t.Errorf("breadcrumb on 9 of 20 pages: %d blocks found, want the footer alone", s.Len())
	}
	// A small site has no boilerplate.
	if s := find(t, site(9, 9), Config{}); s.Len() != 0 || s.Key() != "" {
		t.Errorf("9 pages: %d blocks found, want none", s.Len())
	}
}

func TestStripKeeps(t *testing.T) {
	pages := site(10, 10)
	s := find(t, pages, Config{})
	footer := "Copyright 2026, The Foundation. Licensed under the License.\nThe logo is a trademark of The Foundation."
	tests := map[string]string{
		// Between content blocks it is no longer at an edge.
		"boilerplate inside": "# Title\n\nFirst.\n\n" + footer + "\n\nLast.\n",
		// A page that is template alone keeps it rather than losing everything.
		"boilerplate alone": footer + "\n",
		"no boilerplate":    "# Title\n\nText.\n",
		"empty":             "",
	}
	for name, md := range tests {
		if got := s.Strip(md); got != md {
			t.Errorf("%s: Strip changed the page to %q", name, got)
		}
	}
	// Indentation is not part of a block's identity.
	if got := s.Strip("Text.\n\n  " + footer + "\n"); got != "Text.\n" {
		t.Errorf("indented footer: %q", got)
	}
}

func TestHeadingsAreNeverBoilerplate(t *testing.T) {
	pages := make([]string, 12)
	for i := range pages {
		pages[i] = fmt.Sprintf("## Contact\n\nPage %d's own text.\n\n## See also\n", i)
	}
	if s := find(t, pages, Config{}); s.Len() != 0 {
		t.Errorf("headings shared by every page: %d blocks found, want none", s.Len())
	}
}

func TestKeyFollowsTheSet(t *testing.T) {
	a, b := find(t, site(20, 12), Config{}), find(t, site(20, 0), Config{})
	if a.Key() == b.Key() {
		t.Error("different sets have the same key")
	}
	if c := find(t, site(30, 20), Config{}); c.Key() != a.Key() {
		t.Error("the same blocks on another site size give another key")
	}
	var none *Set
	if none.Len() != 0 || none.Key() != "" || none.Strip("x\n") != "x\n" {
		t.Error("a nil set should hold nothing and strip nothing")
	}
}
