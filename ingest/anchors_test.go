package ingest

import (
	"strings"
	"testing"

	"github.com/ragproxy/ragproxy/index"
)

// TestPagesKeepTheirSectionAnchors checks that ingest keeps the ids a page's sections have, keeps them for an
// unchanged page on re-ingest, and follows a change of the ids alone (the page's text the same), which a version
// that did not count them would leave unwritten.
func TestPagesKeepTheirSectionAnchors(t *testing.T) {
	files := smallSite()
	plain := page("Admissions help", "admissions")
	withIDs := func(prefix string) string {
		out := plain
		for i := 1; i <= 4; i++ {
			h := "<h2>admissions part " + string(rune('0'+i)) + "</h2>"
			out = strings.Replace(out, h, `<h2 id="`+prefix+string(rune('0'+i))+`">admissions part `+string(rune('0'+i))+"</h2>", 1)
		}
		return out
	}
	files["admissions/index.html"] = withIDs("part-")
	files["index.html"] = page("Home", "welcome", "/physics/", "/chemistry/", "/biology/", "/admissions/")
	src, dir := writeSite(t, t.TempDir(), files), t.TempDir()
	ingestSite(t, src, dir, nil)
	ix := load(t, dir)
	anchors := func(ix *index.Index) []index.Anchor {
		p, ok := ix.PageByURL(siteBase + "admissions/")
		if !ok {
			t.Fatal("admissions page missing")
		}
		return p.Anchors
	}
	if got := anchors(ix); len(got) != 4 || got[1] != (index.Anchor{Heading: "admissions part 2", ID: "part-2"}) {
		t.Fatalf("anchors = %+v", got)
	}
	v1 := ix.Manifest.Version

	rep := ingestSite(t, src, dir, nil)
	if ix2 := load(t, dir); ix2.Manifest.Version != v1 || rep.Reused == 0 {
		t.Errorf("an unchanged re-ingest changed the version or reused nothing (reused %d)", rep.Reused)
	} else if got := anchors(ix2); len(got) != 4 {
		t.Errorf("the reused page lost its anchors: %+v", got)
	}

	writeSite(t, src, map[string]string{"admissions/index.html": withIDs("section-")})
	ingestSite(t, src, dir, nil)
	ix3 := load(t, dir)
	if ix3.Manifest.Version == v1 {
		t.Error("changed section ids did not change the version")
	}
	if got := anchors(ix3); len(got) != 4 || got[0].ID != "section-1" {
		t.Errorf("the changed ids were not kept: %+v", got)
	}
}
