package links

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/ragproxy/ragproxy/ingest/crawl"
	"github.com/ragproxy/ragproxy/internal/corpustest"
)

func TestClean(t *testing.T) {
	tests := []struct {
		name      string
		pages     map[string][]string
		cfg       Config
		wantKeep  []string
		wantLinks map[string][]string
		wantStats Stats
	}{
		{
			name: "dedupe, self-links and dangling links",
			pages: map[string][]string{
				"/a": {"/b", "/b", "/a", "/x", "/c"},
				"/b": {"/a"},
				"/c": {},
			},
			cfg:       Config{BoilerplateShare: 1},
			wantKeep:  []string{"/a", "/b", "/c"},
			wantLinks: map[string][]string{"/a": {"/b", "/c"}, "/b": {"/a"}, "/c": {}},
			wantStats: Stats{Pages: 3, Kept: 3, LinksIn: 6, Duplicates: 1, SelfLinks: 1, Outside: 1, LinksOut: 3},
		},
		{
			name: "sections keep their pages and the pages they link to",
			pages: map[string][]string{
				"/en/":      {"/en/about", "/de/"},
				"/en/about": {"/en/", "/fr/"},
				"/de/":      {"/de/x", "/en/"},
				"/de/x":     {"/de/"},
				"/fr/":      {},
			},
			cfg:      Config{Sections: []string{"/en/"}, BoilerplateShare: 1},
			wantKeep: []string{"/de/", "/en/", "/en/about", "/fr/"},
			// /de/ is kept (linked from /en/) but its link to /de/x leaves the set.
			wantLinks: map[string][]string{"/de/": {"/en/"}, "/en/": {"/de/", "/en/about"}, "/en/about": {"/en/", "/fr/"}, "/fr/": {}},
			wantStats: Stats{Pages: 5, Kept: 4, LinksIn: 6, Outside: 1, LinksOut: 5},
		},
		{
			// Of 8 pages, /home and /menu are linked from 7 (87% > 30%):
			// boilerplate. The other pages lose their links to them; /home and
			// /menu, hubs themselves, keep all their links, even to each other.
			// /p1 and /p2 are linked from 2 pages (25%) and stay.
			name: "boilerplate dropped except on hubs",
			pages: map[string][]string{
				"/home": {"/menu", "/p1", "/p2", "/p3", "/p4", "/p5", "/p6"},
				"/menu": {"/home", "/p1"},
				"/p1":   {"/home", "/menu", "/p2"},
				"/p2":   {"/home", "/menu"},
				"/p3":   {"/home", "/menu"},
				"/p4":   {"/home", "/menu"},
				"/p5":   {"/home", "/menu"},
				"/p6":   {"/menu", "/home"},
			},
			wantKeep: []string{"/home", "/menu", "/p1", "/p2", "/p3", "/p4", "/p5", "/p6"},
			wantLinks: map[string][]string{
				"/home": {"/menu", "/p1", "/p2", "/p3", "/p4", "/p5", "/p6"},
				"/menu": {"/home", "/p1"},
				"/p1":   {"/p2"},
				"/p2":   {}, "/p3": {}, "/p4": {}, "/p5": {}, "/p6": {},
			},
			wantStats: Stats{Pages: 8, Kept: 8, LinksIn: 22, Boilerplate: 12, BoilerplateTargets: []string{"/home", "/menu"}, LinksOut: 10},
		},
		{
			// Exactly at the share is not boilerplate: /t is linked from 2 of
			// 4 pages, and 2 is not more than 0.5 * 4.
			name: "share is strict",
			pages: map[string][]string{
				"/a": {"/t"}, "/b": {"/t"}, "/c": {}, "/t": {},
			},
			cfg:       Config{BoilerplateShare: 0.5},
			wantKeep:  []string{"/a", "/b", "/c", "/t"},
			wantLinks: map[string][]string{"/a": {"/t"}, "/b": {"/t"}, "/c": {}, "/t": {}},
			wantStats: Stats{Pages: 4, Kept: 4, LinksIn: 2, LinksOut: 2},
		},
		{
			name:      "empty",
			pages:     map[string][]string{},
			wantKeep:  []string{},
			wantLinks: map[string][]string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			keep, links, stats := Clean(tt.pages, tt.cfg)
			if diff := cmp.Diff(tt.wantKeep, keep); diff != "" {
				t.Errorf("keep (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantLinks, links); diff != "" {
				t.Errorf("links (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantStats, stats, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("stats (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCleanIsDeterministic(t *testing.T) {
	pages := map[string][]string{"/z": {"/a", "/m"}, "/a": {"/z", "/m"}, "/m": {"/z", "/a"}}
	k1, l1, s1 := Clean(pages, Config{})
	for range 20 {
		k2, l2, s2 := Clean(pages, Config{})
		if !cmp.Equal(k1, k2) || !cmp.Equal(l1, l2) || !cmp.Equal(s1, s2) {
			t.Fatal("Clean gave different results for the same input")
		}
	}
}

func TestSection(t *testing.T) {
	cfg := Config{Sections: []string{"https://x.edu/en/", "https://x.edu/en/admissions/", "https://x.edu/de/"}}
	tests := []struct{ url, want string }{
		{"https://x.edu/en/", "https://x.edu/en/"},
		{"https://x.edu/en/about/", "https://x.edu/en/"},
		{"https://x.edu/en/admissions/apply/", "https://x.edu/en/admissions/"}, // the longest prefix
		{"https://x.edu/de/studium/", "https://x.edu/de/"},
		{"https://x.edu/fr/", ""},
		{"https://x.edu/english/", ""},
	}
	for _, tt := range tests {
		if got := cfg.Section(tt.url); got != tt.want {
			t.Errorf("Section(%q) = %q, want %q", tt.url, got, tt.want)
		}
	}
	if got := (Config{}).Section("https://x.edu/en/"); got != "" {
		t.Errorf("Section without sections = %q, want \"\"", got)
	}
}

// TestBerkeleyShares measures how many links survive on the real corpus at
// the paper's 30% and the prototype code's 15%.
func TestBerkeleyShares(t *testing.T) {
	dir := corpustest.Dir(t)
	pages := make(map[string][]string)
	if _, err := crawl.ReadMirror(context.Background(), dir, "http://guide.berkeley.edu/", func(p crawl.Page) {
		pages[p.URL] = p.Links
	}); err != nil {
		t.Fatal(err)
	}
	var prev Stats
	for i, share := range []float64{1, 0.30, 0.15, 0.05} {
		_, _, st := Clean(pages, Config{Sections: []string{"http://guide.berkeley.edu/2016-17/"}, BoilerplateShare: share})
		t.Logf("share %.2f: %d pages, %d raw links, %d distinct in-set links, %d boilerplate dropped (%d targets), %d kept",
			share, st.Kept, st.LinksIn, st.LinksIn-st.Duplicates-st.SelfLinks-st.Outside, st.Boilerplate, len(st.BoilerplateTargets), st.LinksOut)
		if st.Kept < 770 || st.LinksOut == 0 {
			t.Errorf("share %.2f: kept %d pages and %d links", share, st.Kept, st.LinksOut)
		}
		if i > 0 && (st.LinksOut > prev.LinksOut || len(st.BoilerplateTargets) < len(prev.BoilerplateTargets)) {
			t.Errorf("share %.2f kept %d links and %d targets; a lower share must not keep more links or find fewer targets than %d/%d",
				share, st.LinksOut, len(st.BoilerplateTargets), prev.LinksOut, len(prev.BoilerplateTargets))
		}
		if i == 1 && st.Boilerplate == 0 {
			t.Error("no boilerplate found at 0.30 on a site whose every page carries the same menu")
		}
		prev = st
	}
}
