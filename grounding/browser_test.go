package grounding

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ragproxy/ragproxy/internal/nodetest"
	"github.com/ragproxy/ragproxy/retrieval"
)

// sectionPage is a page whose two sections stand far down, screens of filler apart; the quoted sentence is in
// the first, two screens below its heading, so that a browser opened at the section does not show it.
const sectionPage = `<!doctype html><html><head><title>Fees</title></head><body>
<div style="height:3000px">Introduction.</div>
<h2 id="late-fees">Late fees</h2><div style="height:1500px">Fees are set each year.</div>
<p id="fee-text">The late filing fee is eighty dollars for every form.</p>
<div style="height:3000px">More.</div>
<p id="lt-text">If a &lt;pathspec&gt; is given, only matching files are listed.</p>
<div style="height:3000px">More.</div>
<p id="fa-text" dir="rtl">جریمه تأخیر برای هر فرم هشتاد دلار است.</p>
<div style="height:3000px">More.</div>
<h2 id="dates">Dates</h2><p>Forms are due in May.</p>
<div style="height:3000px">End.</div></body></html>`

// TestSectionLinkBrowser opens an offline answer's links in Debian's headless chromium (clients/sectionlinks.mjs):
// the lead's link scrolls to its words; when the page no longer has them (it changed since ingest), to the
// section, where the text directive alone left the page at its top; a quote of another section opens there. It
// needs chromium and `npm ci` in clients, so it runs only when RAGPROXY_BROWSER_TEST=1.
func TestSectionLinkBrowser(t *testing.T) {
	dir := nodetest.Dir(t, "RAGPROXY_BROWSER_TEST", "playwright-core")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(sectionPage))
	}))
	t.Cleanup(srv.Close)
	page := srv.URL + "/fees/"
	res := &retrieval.Result{Pages: []retrieval.PageHit{{URL: page, Title: "Fees"}},
		Chunks: []retrieval.ChunkHit{{URL: page, Text: "…"}, {URL: srv.URL + "/calendar/", Text: "…"}}}
	link := regexp.MustCompile(`\]\((http[^)]+)\)`)
	lead := func(text, anchor string) string {
		ans := ExtractiveAnswer(res, []retrieval.Evidence{{Chunk: 0, Text: text, Own: 1, Anchor: anchor}})
		m := link.FindStringSubmatch(ans)
		if m == nil {
			t.Fatalf("no link in %q", ans)
		}
		return m[1]
	}
	stale := "The late fee for filing is eighty dollars on every form." // the words as an older version wrote them
	type check struct {
		Name string `json:"name"`
		URL  string `json:"url"`
		At   string `json:"at"`
	}
	checks := []check{
		{"the lead's words", lead("The late filing fee is eighty dollars for every form.", "late-fees"), "fee-text"},
		{"words no longer on the page: the section", lead(stale, "late-fees"), "late-fees"},
		{"words no longer on the page, no section: the top", lead(stale, ""), "top"},
		// Persian words are written in the link as they are, not percent-encoded; the browser reads them alike.
		{"words of another script", lead("جریمه تأخیر برای هر فرم هشتاد دلار است.", ""), "fa-text"},
		// The page shows "<pathspec>" where the passage's markdown writes the entities.
		{"words written with entities", lead("If a &lt;pathspec&gt; is given, only matching files are listed.", ""), "lt-text"},
	}
	// A quote of another page's section (no text directive): its link opens that section.
	ans := ExtractiveAnswer(res, []retrieval.Evidence{{Chunk: 1, Text: "The calendar lists the dates.", Own: 1},
		{Chunk: 0, Text: "Forms are due in May.", Own: 1, Anchor: "dates"}})
	links := link.FindAllStringSubmatch(ans, -1)
	if len(links) != 2 {
		t.Fatalf("answer %q has %d links, want 2", ans, len(links))
	}
	checks = append(checks, check{"another quote's section", links[1][1], "dates"})
	if !strings.Contains(checks[3].URL, "text=جریمه%20تأخیر") {
		t.Errorf("Persian lead's link %q does not write its words as they are", checks[3].URL)
	}
	for _, c := range checks {
		if !strings.HasPrefix(c.URL, page) {
			t.Fatalf("%s: link %q is not the page's", c.Name, c.URL)
		}
	}
	b, err := json.Marshal(checks)
	if err != nil {
		t.Fatal(err)
	}
	shots, err := os.MkdirTemp("", "ragproxy-sectionlinks-")
	if err != nil {
		t.Fatal(err)
	}
	nodetest.Run(t, dir, 3*time.Minute, []string{"RAGPROXY_SECTION_LINKS=" + string(b), "RAGPROXY_SCREENSHOT_DIR=" + shots},
		"sectionlinks.mjs")
}
