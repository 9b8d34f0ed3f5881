package clean

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/net/html"
)

// recordPage puts two copies of a record (a div with a shared class and enough nodes to be one) between before
// and after.
func recordPage(before, record, after string) string {
	rec := `<div class="courseblock"><h3><span>ECON 1</span> <span>Intro</span></h3><p>Terms: <b>Fall</b></p>` +
		`<ul><li>a</li><li>b <a href="/x">x</a></li></ul>` + record + `</div>`
	return "<html><head><title>T</title></head><body><main>" + before + rec + rec + after + "</main></body></html>"
}

func TestRecordsSpliceTheSameMarkdown(t *testing.T) {
	c, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	pages := []string{
		recordPage("<p>Intro text</p>", "<p>More <i>detail</i></p>", "<h2>Next</h2>"),
		recordPage("<div><b>bold</b> lead</div>", "<p>More <i>detail</i></p>", ""),
		recordPage("", "<p>More <i>detail</i></p><table><tr><td>1</td><td>2</td></tr></table>", "<p>end</p>"),
		recordPage("text ", "<p>More <i>detail</i></p>", " <span>inline after</span>"),
	}
	for i, page := range pages {
		want, err := withoutRecords(c, page, "http://example.edu/a/b/")
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.HTML([]byte(page), "http://example.edu/a/b/")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("page %d with records (-without +with):\n%s", i, diff)
		}
	}
	if c.records.cache.Len() == 0 {
		t.Error("no record was cached")
	}
}

func TestRecordsKeyLinksByPage(t *testing.T) {
	c, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	page := recordPage("", `<p><a href="sibling/">relative</a> and <a href="#top">anchor</a></p>`, "")
	for _, u := range []string{"http://example.edu/a/", "http://example.edu/b/c/"} {
		d, err := c.HTML([]byte(page), u)
		if err != nil {
			t.Fatal(err)
		}
		if want := "(" + u + "sibling/)"; !strings.Contains(d.Markdown, want) {
			t.Errorf("markdown for %s lacks %s:\n%s", u, want, d.Markdown)
		}
	}
}

func FuzzRecords(f *testing.F) {
	f.Add("<p>Intro</p>", "<p>More <i>detail</i></p>", "<h2>Next</h2>", "lead ", " tail")
	f.Add("", "<pre> x </pre><code>y</code> ", "<p>end</p>", "<b>b</b>", "<div>d</div>")
	f.Add("<ul><li>x", "<h1>#</h1><a href=x><h2>h</h2></a>", "", "<span> s </span>", "<br> z")
	f.Fuzz(func(t *testing.T, before1, record, after1, before2, after2 string) {
		c, err := New(Config{})
		if err != nil {
			t.Fatal(err)
		}
		// The first page fills the cache; the second must convert as it would without it.
		for _, page := range []string{recordPage(before1, record, after1), recordPage(before2, record, after2)} {
			want, err := withoutRecords(c, page, "http://example.edu/a/")
			if err != nil {
				return // the converter fails on this input (see convertNode)
			}
			got, err := c.HTML([]byte(page), "http://example.edu/a/")
			if err != nil {
				t.Fatalf("HTML(%q): %v", page, err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("records changed the markdown of %q (-without +with):\n%s", page, diff)
			}
		}
	})
}

func TestRecordsSpliceRejectsLostMarkers(t *testing.T) {
	m := newRecords()
	recs := []record{{hit: true, md: "cached"}, {}}
	for _, md := range []string{
		"no markers at all",
		m.nonce + "h0\n\nthen nothing",
		m.nonce + "h0\n\n" + m.nonce + "s1\n\nopen record",
		m.nonce + "h1\n\n" + m.nonce + "s0\n\nx\n\n" + m.nonce + "e0",
		"text " + m.nonce + "h0\n\n" + m.nonce + "s1\n\nx\n\n" + m.nonce + "e1",
	} {
		if got, ok := m.splice(md, recs); ok {
			t.Errorf("splice(%q) = %q, want a failure", md, got)
		}
	}
	got, ok := m.splice("a\n\n"+m.nonce+"h0\n\n"+m.nonce+"s1\n\nnew\n\n"+m.nonce+"e1\n\nb", recs)
	if want := "a\n\ncached\n\nnew\n\nb"; !ok || got != want {
		t.Errorf("splice = %q, %v, want %q", got, ok, want)
	}
}

// withoutRecords converts page as HTML does when it cannot convert repeated records once.
func withoutRecords(c *Cleaner, page, pageURL string) (Doc, error) {
	root, err := html.Parse(strings.NewReader(page))
	if err != nil {
		return Doc{}, err
	}
	return c.html(root, pageURL, false)
}
