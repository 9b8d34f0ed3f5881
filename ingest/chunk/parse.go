package chunk

import (
	"strings"

	"github.com/ragproxy/ragproxy/markdown"
)

// kind is the type of a markdown block, as the FHNW prototype's parse_markdown distinguishes them.
type kind uint8

const (
	paragraph kind = iota // text lines, tables, fenced code, and pieces of oversized blocks
	heading               // an ATX heading line ("#" to "######")
	blank                 // a run of blank lines
	listItem              // a "*" or "-" list item with its continuation lines
)

// block is a span [start, end) of the page text (lines with their newlines), so that the text of any run of
// blocks is an exact substring of the page.
type block struct {
	start, end int
	kind       kind
	level      int // heading level 1-6
	blanks     int // number of blank lines in a blank run
	tokens     int // token count of the span, counted once
}

// parse splits markdown into blocks line by line: headings, blank-line runs, list items (with their lazy
// continuation lines) and paragraphs. Lines inside fenced code blocks never start a block of their own, so
// a "# comment" in code is not a heading.
func parse(src string) []block {
	var blocks []block
	inFence := false
	fence := ""
	for pos := 0; pos < len(src); {
		end := strings.IndexByte(src[pos:], '\n')
		if end < 0 {
			end = len(src)
		} else {
			end += pos + 1
		}
		line := strings.TrimRight(src[pos:end], "\r\n")
		var last *block
		if len(blocks) > 0 {
			last = &blocks[len(blocks)-1]
		}

		switch {
		case inFence:
			last.end = end
			if strings.HasPrefix(strings.TrimSpace(line), fence) {
				inFence = false
			}
		case strings.TrimSpace(line) == "":
			if last != nil && last.kind == blank {
				last.end = end
				last.blanks++
			} else {
				blocks = append(blocks, block{start: pos, end: end, kind: blank, blanks: 1})
			}
		case fenceMarker(line) != "":
			fence = fenceMarker(line)
			inFence = true
			blocks = append(blocks, block{start: pos, end: end, kind: paragraph})
		case markdown.HeadingLevel(line) > 0:
			blocks = append(blocks, block{start: pos, end: end, kind: heading, level: markdown.HeadingLevel(line)})
		case isListItem(line):
			blocks = append(blocks, block{start: pos, end: end, kind: listItem})
		case last != nil && (last.kind == paragraph || last.kind == listItem):
			last.end = end // paragraph line or lazy continuation of a list item
		default:
			blocks = append(blocks, block{start: pos, end: end, kind: paragraph})
		}
		pos = end
	}
	return blocks
}

// isListItem reports whether line starts a "*" or "-" bullet item, at any indentation: the FHNW prototype's Table 1
// stops at asterisks, and html-to-markdown writes "-" bullets. Thematic breaks ("* * *", "---") are not items.
func isListItem(line string) bool {
	s := strings.TrimLeft(line, " \t")
	if len(s) < 2 || (s[0] != '*' && s[0] != '-') || (s[1] != ' ' && s[1] != '\t') {
		return false
	}
	return !isThematicBreak(s)
}

func isThematicBreak(s string) bool {
	s = strings.TrimSpace(s)
	if len(s) < 3 {
		return false
	}
	c, n := s[0], 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case c:
			n++
		case ' ', '\t':
		default:
			return false
		}
	}
	return n >= 3
}

// fenceMarker returns "```" or "~~~" when line opens a fenced code block, else "".
func fenceMarker(line string) string {
	s := strings.TrimLeft(line, " ")
	if len(line)-len(s) > 3 {
		return ""
	}
	for _, f := range []string{"```", "~~~"} {
		if strings.HasPrefix(s, f) {
			return f
		}
	}
	return ""
}
