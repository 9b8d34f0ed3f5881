package markdown

import (
	"iter"
	"strings"
)

// HeadingTrails returns, for each chunk of one page (texts in page order), the markdown headings in force where
// the chunk starts, outermost first, joined by " > " (e.g. "Academic Policies > Grades > Grade I (Incomplete)").
// A passage alone often lacks what it is about; its heading trail says it, for search and for the reader.
func HeadingTrails(chunks []string) []string {
	var stack [7]string // stack[level] for levels 1..6
	out := make([]string, len(chunks))
	for i, text := range chunks {
		var parts []string
		for l := 1; l <= 6; l++ {
			if stack[l] != "" {
				parts = append(parts, stack[l])
			}
		}
		out[i] = strings.Join(parts, " > ")
		for level, text := range Headings(text) {
			stack[level] = text
			for l := level + 1; l <= 6; l++ {
				stack[l] = ""
			}
		}
	}
	return out
}

// Headings yields the level and text of each ATX heading of markdown text, outside fenced code. The text is as
// a reader sees it: without the closing "#" sequence, emphasis, or links. A link keeps its text: a heading that
// links elsewhere ("## [Self-serve](https://...)") says "Self-serve", and the permalink anchor many site
// generators append ("[¶](#section)") leaves nothing.
func Headings(text string) iter.Seq2[int, string] {
	return func(yield func(int, string) bool) {
		fenced := false
		for line := range strings.Lines(text) {
			t := strings.TrimSpace(line)
			level := HeadingOutsideFence(t, &fenced)
			if level == 0 {
				continue
			}
			if !yield(level, strings.Trim(strings.TrimSpace(StripLinks(t[level:])), "#*¶ \t")) {
				return
			}
		}
	}
}

// HeadingOutsideFence is HeadingLevel for a caller reading a text line by line (line trimmed of spaces), with
// *fenced tracking fenced code: a "```" or "~~~" line opens or closes it, and inside it a "#" starts a comment,
// not a heading (0).
func HeadingOutsideFence(line string, fenced *bool) int {
	if FenceLine(line) {
		*fenced = !*fenced
		return 0
	}
	if *fenced {
		return 0
	}
	return HeadingLevel(line)
}

// FenceLine reports whether a line (trimmed of spaces) opens or closes a fenced code block: it starts with "```"
// or "~~~". Given a whole block, it reads the block's first line.
func FenceLine(line string) bool {
	return strings.HasPrefix(line, "```") || strings.HasPrefix(line, "~~~")
}

// HeadingLevel returns the level of a markdown ATX heading line (up to three spaces, 1-6 "#", then a space, a
// tab or the end of the line), or 0.
func HeadingLevel(line string) int {
	s := strings.TrimLeft(line, " ")
	if len(line)-len(s) > 3 {
		return 0
	}
	n := 0
	for n < len(s) && s[n] == '#' {
		n++
	}
	if n == 0 || n > 6 || (n < len(s) && s[n] != ' ' && s[n] != '\t') {
		return 0
	}
	return n
}

// ListItem reports whether a line starts a markdown list item ("- ", "* ", "+ ", "1. ", "1) ").
func ListItem(t string) bool {
	if len(t) > 1 && (t[0] == '-' || t[0] == '*' || t[0] == '+') && t[1] == ' ' {
		return true
	}
	return OrderedItem(t)
}

// OrderedItem reports whether a line starts an item of a numbered list ("1. ", "1) "): a step of a procedure.
func OrderedItem(t string) bool {
	i := 0
	for i < len(t) && i < 4 && '0' <= t[i] && t[i] <= '9' {
		i++
	}
	return i > 0 && i+1 < len(t) && (t[i] == '.' || t[i] == ')') && t[i+1] == ' '
}

// Announces reports whether a paragraph introduces the block after it: it ends with a colon ("try the command:"),
// or it is bold text alone, the caption of an example or a table ("**Example 10.12. Excerpt of named.conf**").
func Announces(p string) bool {
	p = strings.TrimSpace(p)
	if strings.HasSuffix(p, ":") {
		return true
	}
	inner, ok := strings.CutPrefix(p, "**")
	if inner, ok = strings.CutSuffix(inner, "**"); !ok || inner == "" {
		return false
	}
	return !strings.Contains(inner, "**")
}
