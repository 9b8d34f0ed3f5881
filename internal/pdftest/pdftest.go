// Package pdftest writes minimal PDF documents for tests: one page of text lines in Helvetica (WinAnsi encoding).
package pdftest

import (
	"bytes"
	"fmt"
	"strings"
)

// Line is a line of text at height Y (points from the page's bottom; the page is 792 high).
type Line struct {
	Y    int
	Text string
}

// Page returns a one-page PDF holding lines, with title as its Info Title when it is not empty. A line's
// parentheses and backslashes are escaped; its other bytes are written as they are (WinAnsi).
func Page(title string, lines []Line) []byte {
	var content strings.Builder
	for _, l := range lines {
		text := strings.NewReplacer(`\`, `\\`, "(", `\(`, ")", `\)`).Replace(l.Text)
		fmt.Fprintf(&content, "BT /F1 12 Tf 72 %d Td (%s) Tj ET\n", l.Y, text)
	}
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
		fmt.Sprintf("<< /Length %d >>\nstream\n%sendstream", content.Len(), content.String()),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
	}
	info := ""
	if title != "" {
		objs = append(objs, fmt.Sprintf("<< /Title (%s) >>", title))
		info = fmt.Sprintf(" /Info %d 0 R", len(objs))
	}
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R%s >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, info, xref)
	return b.Bytes()
}
