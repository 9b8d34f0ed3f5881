package clean

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ragproxy/ragproxy/internal/pdftest"
)

// makePDF writes a minimal one-page PDF with each line of lines at the given y position, and an Info Title.
func makePDF(title string, lines []struct {
	y    int
	text string
}) []byte {
	ls := make([]pdftest.Line, len(lines))
	for i, l := range lines {
		ls[i] = pdftest.Line{Y: l.y, Text: l.text}
	}
	return pdftest.Page(title, ls)
}

func TestPDF(t *testing.T) {
	type ln = struct {
		y    int
		text string
	}
	body := makePDF("Fee Schedule 2016", []ln{
		{700, "Tuition and Fees"},
		{670, "Undergraduate tuition is $13,510"},
		{656, "for California residents."},
		{642, "Fees are billed each term."},
		{600, "Housing"},
		{586, "Bowles Hall costs $4,364 more."},
	})
	doc, err := PDF(body)
	if err != nil {
		t.Fatalf("PDF: %v", err)
	}
	want := Doc{
		Title: "Fee Schedule 2016",
		Markdown: "Tuition and Fees\n\n" +
			"Undergraduate tuition is $13,510\nfor California residents.\nFees are billed each term.\n\n" +
			"Housing\nBowles Hall costs $4,364 more.\n",
	}
	if diff := cmp.Diff(want, doc); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestPDFErrors(t *testing.T) {
	for name, body := range map[string][]byte{
		"not a pdf": []byte("<html>hello</html>"),
		"truncated": makePDF("x", nil)[:60],
		"empty":     nil,
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := PDF(body); err == nil {
				t.Error("PDF succeeded, want an error")
			}
		})
	}
	if _, err := PDF(makePDF("blank", nil)); !errors.Is(err, ErrNoText) {
		t.Errorf("PDF(no text) = %v, want ErrNoText", err)
	}
}

func FuzzPDF(f *testing.F) {
	f.Add(makePDF("t", []struct {
		y    int
		text string
	}{{700, "hello"}, {680, "world"}}))
	f.Add([]byte("%PDF-1.4\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		_, _ = PDF(body) // must not panic
	})
}

// TestPDFUnmappedGlyphs checks that a glyph the font's encoding maps to no character (byte 0x81 in WinAnsi, which
// the library reads as U+FFFD) leaves nothing in the text.
func TestPDFUnmappedGlyphs(t *testing.T) {
	doc, err := PDF(makePDF("x", []struct {
		y    int
		text string
	}{{700, "journalctl\x81 -b\x81"}, {680, "\x81"}, {660, "lists the boot's messages"}}))
	if err != nil {
		t.Fatal(err)
	}
	if want := "journalctl -b\nlists the boot's messages\n"; doc.Markdown != want {
		t.Errorf("text %q, want %q", doc.Markdown, want)
	}
}
