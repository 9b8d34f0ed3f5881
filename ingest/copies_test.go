package ingest

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ragproxy/ragproxy/internal/pdftest"
)

// TestDropCopies checks that a PDF holding the site's pages (the whole book in one file) is left out, and that a
// PDF of its own text, or one too short to judge, is kept, as every HTML page is.
func TestDropCopies(t *testing.T) {
	chapter := func(n int) string {
		var b strings.Builder
		for i := range 40 {
			fmt.Fprintf(&b, "Chapter %d paragraph %d explains how the %d-th daemon reads its configuration file "+
				"and restarts when the administrator sends it signal number %d.\n\n", n, i, n*100+i, i%7)
		}
		return b.String()
	}
	var book strings.Builder
	book.WriteString("The Reference Manual\nContents\n")
	for n := 1; n <= 3; n++ {
		// The PDF's text breaks its lines elsewhere: a word run is compared, not the markdown.
		book.WriteString(strings.ReplaceAll(chapter(n), " the ", "\nthe "))
	}
	var form strings.Builder
	for i := range 60 {
		fmt.Fprintf(&form, "Field %d of the reimbursement form: write the amount, the date and the cost centre %d.\n", i, i*3)
	}
	docs := []*doc{
		{url: "https://site.test/ch1.html", markdown: chapter(1)},
		{url: "https://site.test/ch2.html", markdown: chapter(2)},
		{url: "https://site.test/ch3.html", markdown: chapter(3)},
		{url: "https://site.test/book.pdf", markdown: book.String(), pdf: true},
		{url: "https://site.test/form.pdf", markdown: form.String(), pdf: true},
		{url: "https://site.test/flyer.pdf", markdown: "Chapter 1 paragraph 0 explains how the 100-th daemon reads.", pdf: true},
	}
	r := &run{cfg: Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, report: &Report{}}
	kept, err := r.dropCopies(docs)
	if err != nil {
		t.Fatal(err)
	}
	var urls []string
	for _, d := range kept {
		urls = append(urls, d.url)
	}
	want := "ch1.html ch2.html ch3.html form.pdf flyer.pdf"
	if got := strings.ReplaceAll(strings.Join(urls, " "), "https://site.test/", ""); got != want {
		t.Errorf("kept %s, want %s", got, want)
	}
	if r.report.Duplicates != 1 {
		t.Errorf("%d duplicates counted, want 1", r.report.Duplicates)
	}
	// A site without PDFs is returned as it is, its texts not read.
	html := docs[:3]
	if kept, err := r.dropCopies(html); err != nil || len(kept) != 3 {
		t.Errorf("a site without PDFs: %d kept (%v), want 3", len(kept), err)
	}
}

// TestPDFCopyLeftOutAndRecorded ingests a site whose pages a PDF copies: the PDF is left out, the version records
// it, and the next ingest leaves it out again without reading it.
func TestPDFCopyLeftOutAndRecorded(t *testing.T) {
	sentence := func(topic string, i int) string {
		return fmt.Sprintf("Rule %d of the %s handbook says that form %d goes to the %s office within %d days.", i, topic, i*7, topic, i+3)
	}
	files := map[string]string{}
	var lines []string
	for _, topic := range []string{"housing", "tuition", "parking"} {
		var b strings.Builder
		fmt.Fprintf(&b, "<html><head><title>%s</title></head><body><main><h1>%s</h1>", topic, topic)
		for i := range 14 {
			fmt.Fprintf(&b, "<p>%s</p>", sentence(topic, i))
			lines = append(lines, sentence(topic, i))
		}
		b.WriteString("</main></body></html>")
		files[topic+"/index.html"] = b.String()
	}
	pdfLines := make([]pdftest.Line, len(lines))
	for i, l := range lines {
		pdfLines[i] = pdftest.Line{Y: 780 - 12*i, Text: l}
	}
	files["handbook.pdf"] = string(pdftest.Page("", pdfLines))
	src := writeSite(t, t.TempDir(), files)
	dir := filepath.Join(t.TempDir(), "ix")

	var log strings.Builder
	logged := func(c *Config) { c.Logger = slog.New(slog.NewTextHandler(&log, nil)) }
	first := ingestSite(t, src, dir, logged)
	if first.Pages != 3 || first.Duplicates != 1 || !strings.Contains(log.String(), "PDF left out") {
		t.Fatalf("first run: %d pages, %d duplicates, log %q; want 3 and the PDF left out", first.Pages, first.Duplicates, log.String())
	}
	copies, err := readCopies(filepath.Join(dir, "v-"+first.Version))
	if c := copies[siteBase+"handbook.pdf"]; err != nil || c.RawHash == "" || len(c.Shingles) < 8*copyMinShingles {
		t.Fatalf("the version's record of copies: %v (%v)", copies, err)
	}

	// A record without the sample (as an older version wrote it) is judged again by parsing the PDF, and the
	// version, unchanged, gets its record brought up to date.
	version := filepath.Join(dir, "v-"+first.Version)
	if err := os.WriteFile(filepath.Join(version, CopiesFile),
		[]byte(`[{"url":"`+siteBase+`handbook.pdf","raw_hash":"`+copies[siteBase+"handbook.pdf"].RawHash+`"}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	log.Reset()
	if again := ingestSite(t, src, dir, logged); again.Version != first.Version || !strings.Contains(log.String(), "PDF left out") {
		t.Errorf("an older record: version %s, log %q; want %s and the PDF judged again", again.Version, log.String(), first.Version)
	}
	if c, err := readCopies(version); err != nil || len(c[siteBase+"handbook.pdf"].Shingles) == 0 {
		t.Errorf("the unchanged version's record was not brought up to date: %v (%v)", c, err)
	}

	log.Reset()
	second := ingestSite(t, src, dir, logged)
	if second.Pages != 3 || second.Duplicates != 1 || second.Version != first.Version {
		t.Errorf("second run: %d pages, %d duplicates, version %s; want 3, 1 and %s", second.Pages, second.Duplicates, second.Version, first.Version)
	}
	if strings.Contains(log.String(), "PDF left out") || strings.Contains(log.String(), "PDF read") {
		t.Errorf("the unchanged PDF was read again: %q", log.String())
	}

	// The pages rewritten, the PDF unchanged: its recorded text is no longer the site's, so it is read and indexed.
	for _, topic := range []string{"housing", "tuition", "parking"} {
		files[topic+"/index.html"] = page(topic, "This office moved; ask at the front desk about "+topic+".")
	}
	writeSite(t, src, files)
	log.Reset()
	third := ingestSite(t, src, dir, logged)
	if third.Pages != 4 || third.Duplicates != 0 || !strings.Contains(log.String(), "PDF read") {
		t.Errorf("pages rewritten: %d pages, %d duplicates, log %q; want 4, 0 and the PDF read", third.Pages, third.Duplicates, log.String())
	}
	if copies, err := readCopies(filepath.Join(dir, "v-"+third.Version)); err != nil || len(copies) != 0 {
		t.Errorf("the record after the PDF was read: %v (%v), want none", copies, err)
	}

	// Without the HTML pages the PDF holds text of its own: a new PDF is judged, and kept.
	files2 := map[string]string{"index.html": page("Home", "welcome"), "handbook2.pdf": files["handbook.pdf"]}
	own := ingestSite(t, writeSite(t, t.TempDir(), files2), filepath.Join(t.TempDir(), "ix2"), nil)
	if own.Pages != 2 || own.Duplicates != 0 {
		t.Errorf("a PDF of its own: %d pages, %d duplicates; want 2 and 0", own.Pages, own.Duplicates)
	}
}

// TestDropCopiesCJK checks the same for Japanese, whose runs of characters a PDF's line breaks cut elsewhere than
// the page's paragraphs do: they are compared as character bigrams.
func TestDropCopiesCJK(t *testing.T) {
	var page strings.Builder
	for i := range 30 {
		fmt.Fprintf(&page, "第%d章では設定ファイルの場所と読み込まれる順序を説明し、管理者がサービスを再起動する方法を示します。\n\n", i)
	}
	// The PDF: the same text, its lines broken every 17 characters.
	var pdf strings.Builder
	for i, r := range []rune(page.String()) {
		if i > 0 && i%17 == 0 {
			pdf.WriteByte('\n')
		}
		pdf.WriteRune(r)
	}
	docs := []*doc{
		{url: "https://site.test/ch1.ja.html", markdown: page.String()},
		{url: "https://site.test/book.ja.pdf", markdown: pdf.String(), pdf: true},
	}
	r := &run{cfg: Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, report: &Report{}}
	kept, err := r.dropCopies(docs)
	if err != nil {
		t.Fatal(err)
	}
	if len(kept) != 1 || kept[0].pdf {
		t.Errorf("kept %d documents, want the page alone", len(kept))
	}
}
