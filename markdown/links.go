package markdown

import (
	"iter"
	"strings"
)

// StripLinks turns markdown links into their text and drops bare URLs (a scanner: this runs over every chunk of
// an index).
func StripLinks(s string) string {
	if !strings.Contains(s, "http") && !strings.Contains(s, "](") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	run := 0 // the start of the bytes kept as they are, written out in one piece at the next edit
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case !linkByte[c]:
			i++
			continue
		case c == '[':
			b.WriteString(s[run:i])
			i++
		case c == ']':
			b.WriteString(s[run:i])
			i++
			if i < len(s) && s[i] == '(' {
				if end := linkTargetEnd(s, i); end > 0 {
					i = end
				}
			}
		case (c == 'h' || c == '<') && isURLStart(s, i):
			b.WriteString(s[run:i])
			if c == '<' {
				i++
			}
			for i < len(s) && !urlEnd[s[i]] {
				i++
			}
			if i < len(s) && s[i] == '>' {
				i++
			}
		default:
			i++
			continue
		}
		run = i
	}
	b.WriteString(s[run:])
	return b.String()
}

// linkByte marks the bytes where StripLinks may have something to drop; urlEnd, those that end a bare URL.
var linkByte, urlEnd = byteSet("[]h<"), byteSet(" \t\n\r<>()")

func byteSet(chars string) (set [256]bool) {
	for i := 0; i < len(chars); i++ {
		set[chars[i]] = true
	}
	return set
}

// linkTargetEnd returns the index after the ")" closing a link target that starts with "(" at i (one level of
// nested parentheses and an optional quoted title allowed), or 0 when there is none.
func linkTargetEnd(s string, i int) int {
	if j := closing(s, i, '(', ')', '"'); j >= 0 {
		return j + 1
	}
	return 0
}

// closing returns the index of the byte that closes the bracket open at s[i] (close at depth zero: brackets
// between in pairs, and what a pair of quote bytes encloses skipped), or -1 at a line break or the end first.
func closing(s string, i int, open, close, quote byte) int {
	depth := 0
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case open:
			depth++
		case close:
			if depth == 0 {
				return j
			}
			depth--
		case '\n':
			return -1
		case quote:
			if k := strings.IndexByte(s[j+1:], quote); k >= 0 {
				j += k + 1
			}
		}
	}
	return -1
}

func isURLStart(s string, i int) bool {
	if s[i] == '<' {
		i++
	}
	return strings.HasPrefix(s[i:], "http://") || strings.HasPrefix(s[i:], "https://")
}

// CompactLinks shortens the markdown links of a chunk of page (its absolute URL) for a model's context, where
// link targets are tokens that state no fact: generated documentation links most names of its text to their
// definitions (40% of the Python documentation's chunk tokens are link targets). A link keeps its text and
// loses its target when the target is page itself (an anchor on the page, whose URL the context states once) or
// when its text is code and the target is on page's site (an API name's cross-reference). Every other link
// keeps its target, so the pages and forms a passage sends readers to can still be cited; titles ("url
// "title"") go. Images stay as they are.
func CompactLinks(s, page string) string {
	if !strings.Contains(s, "](") {
		return s
	}
	site := siteOf(page)
	page = withoutFragment(page)
	var b strings.Builder
	done := 0 // what is written of s
	for l := range Links(s) {
		b.WriteString(s[done:l.Start])
		t := withoutFragment(l.Target)
		if t == page || site != "" && strings.HasPrefix(t, site) && IsCodeSpan(l.Text) {
			b.WriteString(l.Text)
		} else {
			writeLink(&b, l.Text, l.Target)
		}
		done = l.End
	}
	if done == 0 {
		return s
	}
	b.WriteString(s[done:])
	return b.String()
}

// Link is a markdown link to an absolute http(s) URL in a text: s[Start:End] is "[Text](Target)", Target
// without the title that may follow it.
type Link struct {
	Text, Target string
	Start, End   int
}

// Links yields the markdown links of s that lead to absolute http(s) URLs, in order; images are not links.
func Links(s string) iter.Seq[Link] {
	return func(yield func(Link) bool) {
		open := -1 // the last "[" not yet closed on this line
		for i := 0; i < len(s); i++ {
			switch s[i] {
			case '\n':
				open = -1
			case '[':
				open = i
			case ']':
				o := open
				open = -1
				if o < 0 || i+1 >= len(s) || s[i+1] != '(' {
					continue
				}
				end := linkTargetEnd(s, i+1)
				if end == 0 {
					continue
				}
				target := linkTarget(s[i+2 : end-1])
				if o > 0 && s[o-1] == '!' || target == "" {
					continue // an image, or a target this does not read: as it is
				}
				if !yield(Link{Text: s[o+1 : i], Target: target, Start: o, End: end}) {
					return
				}
				i = end - 1
			}
		}
	}
}

// linkTarget is the URL of a link's parenthesised part (without its parentheses): without the title that may
// follow it, and without the angle brackets that may enclose it. It is "" when the part holds something else.
func linkTarget(part string) string {
	part = strings.TrimSpace(part)
	var u, rest string
	if strings.HasPrefix(part, "<") {
		end := strings.IndexByte(part, '>')
		if end < 0 {
			return ""
		}
		u, rest = part[1:end], part[end+1:]
	} else {
		u, rest = part, ""
		if i := strings.IndexAny(part, " \t"); i >= 0 {
			u, rest = part[:i], part[i:]
		}
	}
	if rest = strings.TrimSpace(rest); rest != "" && rest[0] != '"' && rest[0] != '\'' {
		return ""
	}
	if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
		return ""
	}
	return u
}

// writeLink writes the markdown link [text](target), the target in angle brackets when it holds spaces or
// parentheses.
func writeLink(b *strings.Builder, text, target string) {
	b.WriteString("[" + text + "](")
	if strings.ContainsAny(target, " ()") {
		b.WriteString("<" + target + ">)")
		return
	}
	b.WriteString(target + ")")
}

// siteOf is the scheme and host of an absolute URL with the "/" after them ("https://example.org/"), or "".
func siteOf(u string) string {
	i := strings.Index(u, "://")
	if i < 0 {
		return ""
	}
	if j := strings.IndexByte(u[i+3:], '/'); j >= 0 {
		return u[:i+3+j+1]
	}
	return u + "/"
}

// withoutFragment is u without its "#fragment".
func withoutFragment(u string) string {
	if i := strings.IndexByte(u, '#'); i >= 0 {
		return u[:i]
	}
	return u
}

// IsCodeSpan reports whether s, a link's text, is one markdown code span ("`print()`").
func IsCodeSpan(s string) bool {
	return len(s) > 2 && s[0] == '`' && s[len(s)-1] == '`' && !strings.Contains(s[1:len(s)-1], "`")
}

// Spans returns the byte ranges of s's code spans ("`a.b`") and links ("[a. b](u)", the target included), in
// order: text a reader takes whole, which a sentence's end or a cut must not fall inside.
func Spans(s string) [][2]int {
	var out [][2]int
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '`':
			if j := strings.IndexByte(s[i+1:], '`'); j >= 0 {
				out = append(out, [2]int{i, i + j + 2})
				i += j + 1
			}
		case '[':
			if end := linkEnd(s, i); end > 0 {
				out = append(out, [2]int{i, end})
				i = end - 1
			}
		}
	}
	return out
}

// linkEnd is the end of the link that opens at s[i] ("[" text "](" target ")"), 0 when none does: its text may
// hold code spans and brackets in pairs, not a line break.
func linkEnd(s string, i int) int {
	if j := closing(s, i, '[', ']', '`'); j >= 0 && j+1 < len(s) && s[j+1] == '(' {
		return linkTargetEnd(s, j+1)
	}
	return 0
}

// SpanAt returns the span of spans (Spans) that holds byte i strictly inside it, and whether one does.
func SpanAt(spans [][2]int, i int) ([2]int, bool) {
	for _, sp := range spans {
		if sp[0] < i && i < sp[1] {
			return sp, true
		}
		if sp[0] >= i {
			break
		}
	}
	return [2]int{}, false
}
