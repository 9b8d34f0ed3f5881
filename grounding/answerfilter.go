package grounding

import "strings"

// AnswerFilter is what every answer passes through before a client sees it, whoever wrote it (the model, the
// offline extractive answer, an FAQ entry, a task answer written here): the links its LinkPolicy does not allow
// go (see LinkFilter), and raw HTML is escaped, so that a client rendering the markdown shows a planted
// <img onerror=...> or <a href="javascript:..."> as text instead of running it. Not safe for concurrent use.
type AnswerFilter struct {
	links *LinkFilter
	html  htmlEscaper
}

// NewAnswerFilter returns a filter keeping the links policy allows; a nil policy allows none.
func NewAnswerFilter(policy *LinkPolicy) *AnswerFilter {
	return &AnswerFilter{links: NewLinkFilter(policy), html: htmlEscaper{lineStart: true}}
}

// Write takes the next piece of the answer and returns the text that is safe to send now.
func (f *AnswerFilter) Write(delta string) string { return f.html.write(f.links.Write(delta), false) }

// Flush returns what is still held back, cleaned, at the end of the answer.
func (f *AnswerFilter) Flush() string { return f.html.write(f.links.Flush(), true) }

// Removed counts the links taken out.
func (f *AnswerFilter) Removed() int { return f.links.Removed }

// CleanAnswer passes a whole answer through an AnswerFilter with policy.
func CleanAnswer(text string, policy *LinkPolicy) string {
	f := NewAnswerFilter(policy)
	return f.Write(text) + f.Flush()
}

// htmlEscaper escapes the "<" that would open raw HTML in CommonMark (an open or closing tag, a comment, a
// declaration, a processing instruction) as "&lt;", outside fenced code blocks, whose text renderers show as
// written. Autolinks (<https://...>) stay: the link filter has judged them already. Only fences opened at the
// start of a line count as code: one indented under a list item may end with the item where a reader of the
// lines alone would not see it end, and escaping too much only shows an "&lt;" where escaping too little runs a
// script. For the same reason inline code is escaped like text. Text that may still become a fence line, or a
// "<" not yet followed by enough text to tell a tag from an autolink, is held back until it is complete.
type htmlEscaper struct {
	held      string
	lineStart bool // the next byte starts a line
	fence     byte // '`' or '~' inside a fenced code block, else 0
	fenceLen  int
}

// write escapes held text and s; unless final, it keeps back what the text to come may still change.
func (e *htmlEscaper) write(s string, final bool) string {
	s = e.held + s
	e.held = ""
	var b strings.Builder
	for i := 0; i < len(s); {
		end := strings.IndexByte(s[i:], '\n')
		lineEnd := len(s)
		if end >= 0 {
			lineEnd = i + end + 1
		}
		line := s[i:lineEnd]
		if e.lineStart {
			if end < 0 && !final && e.mayBeFenceLine(line) {
				e.held = line
				break
			}
			if e.fence != 0 {
				if e.closesFence(strings.TrimSuffix(line, "\n")) {
					e.fence, e.fenceLen = 0, 0
				}
				b.WriteString(line)
				i, e.lineStart = lineEnd, end >= 0
				continue
			}
			if c, n := fenceRun(line); n >= 3 && (c == '~' || !strings.Contains(line[n:], "`")) {
				e.fence, e.fenceLen = c, n
				b.WriteString(line)
				i, e.lineStart = lineEnd, end >= 0
				continue
			}
		}
		e.lineStart = false
		if e.fence != 0 { // the rest of a code line
			b.WriteString(line)
			i, e.lineStart = lineEnd, end >= 0
			continue
		}
		j := strings.IndexAny(s[i:lineEnd], "<")
		if j < 0 {
			b.WriteString(line)
			i, e.lineStart = lineEnd, end >= 0
			continue
		}
		b.WriteString(s[i : i+j])
		i += j
		switch opensHTML(s[i:]) {
		case htmlUnknown:
			if !final {
				e.held = s[i:]
				return b.String()
			}
			b.WriteByte('<')
		case htmlTag:
			b.WriteString("&lt;")
		default:
			b.WriteByte('<')
		}
		i++
	}
	return b.String()
}

// fenceRun is the run of fence characters a line starts with, at its very start.
func fenceRun(line string) (byte, int) {
	if line == "" || line[0] != '`' && line[0] != '~' {
		return 0, 0
	}
	n := 0
	for n < len(line) && line[n] == line[0] {
		n++
	}
	return line[0], n
}

// mayBeFenceLine reports whether an unfinished line may still turn out to open or close a fence.
func (e *htmlEscaper) mayBeFenceLine(line string) bool {
	if e.fence != 0 {
		rest := strings.TrimLeft(line, " ")
		if len(line)-len(rest) > 3 {
			return false
		}
		return strings.Trim(strings.TrimLeft(rest, string(e.fence)), " \t") == ""
	}
	if line == "" {
		return true
	}
	c, n := fenceRun(line)
	return c != 0 && (n == len(line) || n >= 3)
}

// closesFence reports whether a whole line closes the open fence: up to three spaces, at least as many of its
// characters, then only spaces and tabs.
func (e *htmlEscaper) closesFence(line string) bool {
	rest := strings.TrimLeft(line, " ")
	if len(line)-len(rest) > 3 {
		return false
	}
	n := len(rest) - len(strings.TrimLeft(rest, string(e.fence)))
	return n >= e.fenceLen && strings.Trim(rest[n:], " \t\r") == ""
}

// What a "<" starts.
const (
	htmlText    = iota // a "<" that is only text
	htmlTag            // raw HTML
	htmlUnknown        // not yet known: more text must come
)

// opensHTML reads what s, starting at "<", starts: raw HTML (a letter opening a tag name, or "/", "!" or "?"),
// an autolink's scheme (a letter, then letters, digits, "+", "." or "-", then ":"), or text.
func opensHTML(s string) int {
	if len(s) < 2 {
		return htmlUnknown
	}
	c := s[1]
	switch {
	case c == '/' || c == '!' || c == '?':
		return htmlTag
	case !isLetter(c):
		return htmlText
	}
	for i := 2; i < len(s) && i <= 33; i++ {
		c := s[i]
		if c == ':' {
			if i >= 3 { // a scheme has two characters at least
				return htmlText
			}
			return htmlTag
		}
		if !isLetter(c) && !('0' <= c && c <= '9') && c != '+' && c != '.' && c != '-' {
			return htmlTag
		}
	}
	if len(s) <= 33 {
		return htmlUnknown
	}
	return htmlTag
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
