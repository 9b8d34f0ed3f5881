package chunk

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// cutters split an oversized text into smaller spans, from the most to the least natural boundary. Each
// returns the end offsets of the parts (the last one is len(s)).
var cutters = []func(s string) []int{cutLines, cutSentences, cutWords}

// explode splits an oversized block into pieces of at most MaxTokens tokens each, trying line, sentence and
// word boundaries in turn, and token boundaries when a single word is too long (a run of digits or a URL
// thousands of characters long). The first piece keeps the block's kind, so that a heading or list item
// still ends a chunk before it; the others are plain text.
func (c *chunker) explode(b block, level int) []block {
	if b.tokens <= c.cfg.MaxTokens {
		return []block{b}
	}
	for ; level < len(cutters); level++ {
		ends := cutters[level](c.src[b.start:b.end])
		if len(ends) < 2 {
			continue
		}
		var out []block
		start := b.start
		for i, e := range ends {
			p := block{start: start, end: b.start + e, kind: paragraph}
			if i == 0 {
				p.kind, p.level, p.blanks = b.kind, b.level, b.blanks
			}
			p.tokens = c.pieces.Count(p.start, p.end)
			out = append(out, c.explode(p, level+1)...)
			start = p.end
		}
		return out
	}
	return c.byTokens(b)
}

// byTokens cuts a block at token boundaries (moved back to the start of a UTF-8 character), encoding it once.
func (c *chunker) byTokens(b block) []block {
	text := c.src[b.start:b.end]
	toks := c.tok.Encode(text)
	var out []block
	start := 0
	for i := 0; i < len(toks); i += c.cfg.MaxTokens {
		j := min(i+c.cfg.MaxTokens, len(toks))
		end := len(text)
		if j < len(toks) {
			end = start + len(c.tok.Decode(toks[i:j]))
			for end > start && end < len(text) && !utf8.RuneStart(text[end]) {
				end--
			}
		}
		if end <= start {
			continue
		}
		p := block{start: b.start + start, end: b.start + end, kind: paragraph}
		if start == 0 {
			p.kind, p.level, p.blanks = b.kind, b.level, b.blanks
		}
		p.tokens = c.pieces.Count(b.start+start, b.start+end)
		out = append(out, p)
		start = end
	}
	if start < len(text) { // bytes carried over from a rune split at the last cut
		out = append(out, block{start: b.start + start, end: b.end, kind: paragraph, tokens: c.pieces.Count(b.start+start, b.end)})
	}
	return out
}

// cutLines ends a part after each newline.
func cutLines(s string) []int {
	var ends []int
	for i := 0; i < len(s); {
		j := strings.IndexByte(s[i:], '\n')
		if j < 0 {
			break
		}
		i += j + 1
		ends = append(ends, i)
	}
	if len(ends) == 0 || ends[len(ends)-1] != len(s) {
		ends = append(ends, len(s))
	}
	return ends
}

// cutSentences ends a part after ".", "!" or "?" and the whitespace that follows them.
func cutSentences(s string) []int {
	var ends []int
	for i := 0; i < len(s); i++ {
		if ch := s[i]; ch != '.' && ch != '!' && ch != '?' {
			continue
		}
		j := i + 1
		for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
			j++
		}
		if j > i+1 && j < len(s) {
			ends = append(ends, j)
			i = j - 1
		}
	}
	return append(ends, len(s))
}

// cutWords ends a part after each run of whitespace.
func cutWords(s string) []int {
	var ends []int
	inSpace := false
	for i, r := range s {
		if unicode.IsSpace(r) {
			inSpace = true
			continue
		}
		if inSpace && i > 0 {
			ends = append(ends, i)
		}
		inSpace = false
	}
	return append(ends, len(s))
}
