package ingest

import (
	"strings"
	"testing"
)

// TestPagesKeepTheirFAQ checks that ingest keeps the FAQ entries a page marks up, keeps them for an unchanged page
// on re-ingest, and follows a change of the FAQ markup alone (JSON-LD, which the cleaned text does not show).
func TestPagesKeepTheirFAQ(t *testing.T) {
	files := smallSite()
	faqPage := func(answer string) string {
		return strings.Replace(page("Admissions help", "admissions"), "</main>",
			`<h2>Frequently asked questions</h2><details><summary>When are acceptance letters sent?</summary>`+
				`<p>Letters go out by March 31.</p></details></main>`+
				`<script type="application/ld+json">{"@context":"https://schema.org","@type":"FAQPage","mainEntity":`+
				`[{"@type":"Question","name":"Is there an application fee?","acceptedAnswer":{"@type":"Answer","text":"`+answer+`"}}]}</script>`, 1)
	}
	files["admissions/index.html"] = faqPage("The fee is $70.")
	files["index.html"] = page("Home", "welcome", "/physics/", "/chemistry/", "/biology/", "/admissions/")
	src, dir := writeSite(t, t.TempDir(), files), t.TempDir()
	ingestSite(t, src, dir, nil)
	ix := load(t, dir)
	p, ok := ix.PageByURL(siteBase + "admissions/")
	if !ok {
		t.Fatal("admissions page missing")
	}
	got := map[string]string{}
	for _, f := range p.FAQ {
		got[f.Question] = f.Answer
		if !strings.HasPrefix(f.URL, siteBase+"admissions/") {
			t.Errorf("entry URL %q is not the page's", f.URL)
		}
	}
	if got["When are acceptance letters sent?"] != "Letters go out by March 31." || got["Is there an application fee?"] != "The fee is $70." {
		t.Fatalf("FAQ entries = %+v", p.FAQ)
	}
	v1 := ix.Manifest.Version

	rep := ingestSite(t, src, dir, nil)
	if ix2 := load(t, dir); ix2.Manifest.Version != v1 || rep.Reused == 0 {
		t.Errorf("an unchanged re-ingest changed the version or reused nothing (reused %d)", rep.Reused)
	} else if p2, _ := ix2.PageByURL(siteBase + "admissions/"); len(p2.FAQ) != 2 {
		t.Errorf("the reused page lost its FAQ: %+v", p2.FAQ)
	}

	writeSite(t, src, map[string]string{"admissions/index.html": faqPage("The fee is $85.")})
	ingestSite(t, src, dir, nil)
	ix3 := load(t, dir)
	if ix3.Manifest.Version == v1 {
		t.Error("a changed FAQ answer did not change the version")
	}
	p3, _ := ix3.PageByURL(siteBase + "admissions/")
	found := false
	for _, f := range p3.FAQ {
		found = found || f.Answer == "The fee is $85."
	}
	if !found {
		t.Errorf("the changed FAQ answer was not kept: %+v", p3.FAQ)
	}
}
