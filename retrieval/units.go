package retrieval

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ragproxy/ragproxy/markdown"
)

// evidenceUnit is a unit of a passage before scoring: its text, the heading it stands under, and for a table row
// the header row it is read with.
type evidenceUnit struct {
	text, heading, header string
	// label is a short first unit under its heading, a value the heading names.
	label bool
	// topic is the paragraph before the unit's that introduces it without being a statement: a definition
	// list's term, an API's signature, a list's lead-in ("`checkpoint_timeout` (`integer`)" before "The default
	// is five minutes"); "" when none since the heading.
	topic string
	// para numbers the paragraphs of a passage from 1, for the sentences of one; 0 for other units.
	para int
}

// evidenceUnits splits a passage into units: each table row (read with its header row), each list item, each
// sentence of a paragraph, each fenced code block whole. Headings are not units; they name the units below them.
func evidenceUnits(text string) []evidenceUnit {
	var (
		out     []evidenceUnit
		heading string
		header  string   // the current table's header row
		row     int      // lines into the current table: 0 outside one
		prev    string   // the previous line, a table's header when a separator follows
		para    []string // the lines of the paragraph or list item being read
		fence   []string // the lines of the fenced code block being read, nil outside one
		// underHeading is the number of units before the current heading's first: -1 before any heading
		underHeading = -1
		paras        int
		topic        string // the last paragraph that introduces what follows (see opensTopic)
	)
	flush := func() {
		if len(para) == 0 {
			return
		}
		joined := strings.Join(para, " ")
		para = para[:0]
		if len(out) == underHeading && heading != "" && utf8.RuneCountInString(joined) <= evidenceLabelRunes {
			out = append(out, evidenceUnit{text: joined, heading: heading, topic: topic, label: true})
			if opensTopic(joined) {
				topic = joined
			}
			return
		}
		if markdown.ListItem(joined) {
			out = appendUnit(out, evidenceUnit{text: joined, heading: heading, topic: topic})
			return
		}
		paras++
		for _, s := range sentences(joined) {
			out = appendUnit(out, evidenceUnit{text: s, heading: heading, topic: topic, para: paras})
		}
		if opensTopic(joined) {
			topic = joined
		}
	}
	fenceQuoted := false // the fence being read opened in a blockquote, whose marker its lines repeat
	for line := range strings.Lines(text) {
		// A blockquote's lines read as their text (the page indents a table or a note; the answer quotes anyway).
		quoted := false
		if fence == nil || fenceQuoted {
			if q := unquote(line); q != line {
				line, quoted = q, true
			}
		}
		t := strings.TrimSpace(line)
		if fence != nil {
			fence = append(fence, strings.TrimRight(line, "\n"))
			if markdown.FenceLine(t) {
				out = appendUnit(out, evidenceUnit{text: strings.Join(fence, "\n"), heading: heading, topic: topic})
				fence = nil
			}
			continue
		}
		if markdown.FenceLine(t) {
			flush()
			fence, fenceQuoted = []string{strings.TrimRight(line, "\n")}, quoted
			continue
		}
		if level := markdown.HeadingLevel(t); level > 0 {
			flush()
			heading = strings.Trim(strings.TrimSpace(markdown.StripLinks(t[level:])), "#*¶ \t")
			topic = ""
			row, prev = 0, ""
			underHeading = len(out)
			continue
		}
		if strings.HasPrefix(t, "|") {
			flush()
			row++
			switch {
			case row == 2 && isTableSeparator(t):
				header = prev
				// The header row was taken as a row of a table without one: it is the header.
				if n := len(out); n > 0 && out[n-1].text == prev && out[n-1].header == "" {
					out = out[:n-1]
				}
			default:
				h := header
				if row == 1 {
					h = ""
				}
				out = appendUnit(out, evidenceUnit{text: t, heading: heading, topic: topic, header: h})
			}
			prev = t
			continue
		}
		row, header, prev = 0, "", t
		if t == "" {
			flush()
			continue
		}
		if markdown.ListItem(t) {
			flush()
		}
		para = append(para, t)
	}
	if fence != nil {
		out = appendUnit(out, evidenceUnit{text: strings.Join(fence, "\n"), heading: heading, topic: topic})
	}
	flush()
	return out
}

// unquote is line without its blockquote markers ("> ", nested ones too), or line itself when it has none.
func unquote(line string) string {
	t := strings.TrimLeft(line, " ")
	if !strings.HasPrefix(t, ">") {
		return line
	}
	for strings.HasPrefix(t, ">") {
		t = strings.TrimPrefix(strings.TrimPrefix(t, ">"), " ")
	}
	return t
}

// opensTopic reports whether a paragraph introduces what follows rather than stating something: it does not end
// a sentence ("`checkpoint_timeout` (`integer`)", "math.isclose(a, b, *, rel_tol=1e-09)", "The options are:").
func opensTopic(p string) bool {
	p = strings.TrimRight(p, "*_`)]\"' ")
	return p != "" && !strings.ContainsRune(".!?", rune(p[len(p)-1]))
}

func appendUnit(out []evidenceUnit, u evidenceUnit) []evidenceUnit {
	if utf8.RuneCountInString(u.text) < evidenceMinRunes {
		return out
	}
	return append(out, u)
}

// tableSeparator is a separator row for a table with header row h: one "---" cell per header cell.
func tableSeparator(h string) string {
	cells := strings.Count(strings.Trim(strings.TrimSpace(h), "|"), "|") + 1
	return "|" + strings.Repeat(" --- |", cells)
}

// sentences splits a paragraph at its sentence ends: ".", "!" or "?" (with any closing quote or bracket), then a
// space and a capital letter, a digit or an opening quote or bracket; not after an abbreviation or an initial
// ("e.g. See", "Dr. Smith", "J. Doe"); and after the full stop, exclamation and question marks of Chinese and
// Japanese ("。", "！", "？"), which no space follows.
func sentences(p string) []string {
	var out []string
	var spans [][2]int // a period in a code span or a link's text ends no sentence ("[E.5.1. Migration](…)")
	if strings.ContainsAny(p, "`[") {
		spans = markdown.Spans(p)
	}
	start := 0
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c == 0xE3 || c == 0xEF { // the first byte of "。" (U+3002), or of "！" and "？" (U+FF01, U+FF1F)
			if r, size := utf8.DecodeRuneInString(p[i:]); r == '。' || r == '！' || r == '？' {
				// Chinese and Japanese end a sentence with these and no space.
				if rest := strings.TrimSpace(p[i+size:]); rest != "" {
					out = append(out, strings.TrimSpace(p[start:i+size]))
					start = i + size
				}
				i += size - 1
			}
			continue
		}
		if c != '.' && c != '!' && c != '?' {
			continue
		}
		j := i + 1
		for j < len(p) && strings.IndexByte(`"')]*_`, p[j]) >= 0 {
			j++
		}
		if j >= len(p) || p[j] != ' ' {
			continue
		}
		k := j
		for k < len(p) && p[k] == ' ' {
			k++
		}
		if k >= len(p) {
			break
		}
		next, _ := utf8.DecodeRuneInString(p[k:])
		if !unicode.IsUpper(next) && !unicode.IsDigit(next) && !strings.ContainsRune(`"'([*`, next) {
			continue
		}
		if c == '.' && abbreviation(p[start:i]) {
			continue
		}
		if _, in := markdown.SpanAt(spans, i); in || inBold(p[start:i]) {
			continue // a caption's number ("**Example 10.12. Excerpt of …**") ends no sentence either
		}
		out = append(out, strings.TrimSpace(p[start:j]))
		start = k
		i = k - 1
	}
	if rest := strings.TrimSpace(p[start:]); rest != "" {
		out = append(out, rest)
	}
	return out
}

// inBold reports whether text ends inside bold markdown: it opens more "**" than it closes, outside code spans
// ("`4**2`" is no bold).
func inBold(text string) bool {
	open, code := false, false
	for i := 0; i < len(text); i++ {
		switch {
		case text[i] == '`':
			code = !code
		case !code && text[i] == '*' && i+1 < len(text) && text[i+1] == '*':
			open = !open
			i++
		}
	}
	return open
}

// abbreviations are the words a period follows without ending a sentence.
var abbreviations = setOf("e.g", "i.e", "etc", "vs", "cf", "dr", "mr", "mrs", "ms", "prof", "st", "no", "nos",
	"fig", "approx", "dept", "inc", "ltd", "jr", "sr", "u.s", "a.m", "p.m", "ph.d", "jan", "feb", "mar", "apr", "jun",
	"jul", "aug", "sep", "sept", "oct", "nov", "dec")

// abbreviation reports whether text before a period ends in an abbreviation or a single letter (an initial).
func abbreviation(before string) bool {
	w := before[strings.LastIndexAny(before, " (")+1:]
	if utf8.RuneCountInString(w) == 1 {
		return true
	}
	return abbreviations[strings.ToLower(w)]
}
