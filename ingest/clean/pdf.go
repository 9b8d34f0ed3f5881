package clean

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/ledongthuc/pdf"
)

// ErrNoText is returned by PDF when a document has no extractable text (a
// scanned image, an empty file).
var ErrNoText = errors.New("no text in PDF")

// PDF extracts the plain text of a PDF, page by page. Lines are rebuilt from
// the text positions; a vertical gap clearly larger than the page's usual line
// spacing starts a new paragraph (a blank line), and pages are separated by a
// blank line. The title is the document's Info Title, else its first line.
//
// github.com/ledongthuc/pdf panics on some malformed files; PDF recovers and
// returns an error instead.
func PDF(body []byte) (doc Doc, err error) {
	defer func() {
		if r := recover(); r != nil {
			doc, err = Doc{}, fmt.Errorf("clean pdf: malformed document: %v", r)
		}
	}()
	r, err := pdf.NewReader(bytes.NewReader(body), int64(len(body)))
	if err != nil {
		return Doc{}, fmt.Errorf("clean pdf: %w", err)
	}
	var paras []string
	for i := 1; i <= r.NumPage(); i++ {
		p := r.Page(i)
		if p.V.IsNull() {
			continue
		}
		paras = append(paras, pageParagraphs(p.Content().Text)...)
	}
	if len(paras) == 0 {
		return Doc{}, fmt.Errorf("clean pdf: %w", ErrNoText)
	}
	title := strings.TrimSpace(r.Trailer().Key("Info").Key("Title").Text())
	if title == "" {
		title, _, _ = strings.Cut(paras[0], "\n")
	}
	return Doc{Title: title, Markdown: tidy(strings.Join(paras, "\n\n"))}, nil
}

// pageParagraphs rebuilds a page's lines from its text runs (in content
// order, with positions: the library emits one run per glyph) and joins them
// into paragraphs.
func pageParagraphs(texts []pdf.Text) []string {
	type line struct {
		y    float64
		text string
	}
	var lines []line
	var b strings.Builder
	var prev pdf.Text
	flush := func() {
		if t := collapseSpace(b.String()); t != "" {
			lines = append(lines, line{prev.Y, t})
		}
		b.Reset()
	}
	for i, t := range texts {
		if strings.ContainsRune(t.S, utf8.RuneError) {
			// A glyph the font maps to no character: the library writes U+FFFD for it, after nearly every run of
			// some documents' text ("journalctl� -� b�", the Debian Reference's PDFs); it says nothing.
			if t.S = strings.ReplaceAll(t.S, string(utf8.RuneError), ""); t.S == "" {
				continue
			}
		}
		size := max(t.FontSize, 1)
		if i > 0 {
			switch {
			case math.Abs(t.Y-prev.Y) > size/2:
				flush()
			case t.X > prev.X+prev.W+size/5 && !strings.HasSuffix(b.String(), " ") && !strings.HasPrefix(t.S, " "):
				b.WriteByte(' ') // a gap wider than a fifth of an em is a space
			}
		}
		b.WriteString(t.S)
		prev = t
	}
	flush()
	if len(lines) == 0 {
		return nil
	}
	// The usual line spacing is the median gap between consecutive lines.
	var gaps []float64
	for i := 1; i < len(lines); i++ {
		if g := lines[i-1].y - lines[i].y; g > 0 {
			gaps = append(gaps, g)
		}
	}
	sort.Float64s(gaps)
	var usual float64
	if len(gaps) > 0 {
		usual = gaps[len(gaps)/2]
	}
	var paras []string
	var cur []string
	for i, l := range lines {
		if i > 0 && usual > 0 && (lines[i-1].y-l.y > usual*1.5 || l.y > lines[i-1].y) {
			paras = append(paras, strings.Join(cur, "\n"))
			cur = nil
		}
		cur = append(cur, l.text)
	}
	return append(paras, strings.Join(cur, "\n"))
}
