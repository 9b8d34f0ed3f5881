package tokenizer

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Character classes of the o200k_base pre-tokenisation pattern. tiktoken's pattern (openai_public.py, and
// tiktoken-go's encoding.go, which hands it to github.com/dlclark/regexp2) is the ordered alternation
//
//	[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//	[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//	\p{N}{1,3}
//	 ?[^\s\p{L}\p{N}]+[\r\n/]*
//	\s*[\r\n]+
//	\s+(?!\S)
//	\s+
//
// nextPiece matches it by hand, following regexp2's semantics: leftmost alternative first, greedy
// quantifiers that give back one character at a time, \p{..} from Go's unicode tables, \s as
// unicode.IsSpace, and case-insensitive literals compared through unicode.ToLower.
const (
	classUpper  uint8 = 1 << iota // [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]
	classLower                    // [\p{Ll}\p{Lm}\p{Lo}\p{M}]
	classLetter                   // \p{L}
	classNumber                   // \p{N}
	classSpace                    // \s
)

// classify computes the classes of r from the unicode tables.
func classify(r rune) uint8 {
	var c uint8
	if unicode.Is(unicode.Lu, r) || unicode.Is(unicode.Lt, r) {
		c |= classUpper
	}
	if unicode.Is(unicode.Ll, r) {
		c |= classLower
	}
	if unicode.Is(unicode.Lm, r) || unicode.Is(unicode.Lo, r) || unicode.Is(unicode.M, r) {
		c |= classUpper | classLower
	}
	if unicode.Is(unicode.L, r) {
		c |= classLetter
	}
	if unicode.Is(unicode.N, r) {
		c |= classNumber
	}
	if unicode.IsSpace(r) {
		c |= classSpace
	}
	return c
}

// classTable holds the classes of every rune of the Basic Multilingual Plane; others are classified on
// demand.
type classTable [1 << 16]uint8

func newClassTable() *classTable {
	t := new(classTable)
	for r := range t {
		t[r] = classify(rune(r))
	}
	return t
}

// at returns the classes and byte width of the rune at s[i]. s must be valid UTF-8.
func (t *classTable) at(s string, i int) (uint8, int) {
	if b := s[i]; b < utf8.RuneSelf {
		return t[b], 1
	}
	r, w := utf8.DecodeRuneInString(s[i:])
	if r < 1<<16 {
		return t[r], w
	}
	return classify(r), w
}

// run returns the end of the longest run of runes from s[i] that have one of the classes in want.
func (t *classTable) run(s string, i int, want uint8) int {
	for i < len(s) {
		c, w := t.at(s, i)
		if c&want == 0 {
			break
		}
		i += w
	}
	return i
}

// nextPiece returns the end of the pre-tokenisation piece that starts at s[i], i < len(s). s must be valid
// UTF-8. Every position starts some alternative, so pieces tile s.
func (t *classTable) nextPiece(s string, i int) int {
	if j := asciiWord(s, i); j > 0 {
		return j
	}
	c0, w0 := t.at(s, i)
	b0 := s[i]
	// [^\r\n\p{L}\p{N}]: a rune that may prefix a word (punctuation, spaces, marks, symbols).
	prefix := c0&(classLetter|classNumber) == 0 && b0 != '\r' && b0 != '\n'
	if prefix || c0&(classUpper|classLower) != 0 {
		if j := t.lowerWord(s, i, w0, prefix); j >= 0 {
			return j
		}
		if j := t.upperWord(s, i, w0, prefix); j >= 0 {
			return j
		}
	}
	if c0&classNumber != 0 { // \p{N}{1,3}
		j := i + w0
		for k := 1; k < 3 && j < len(s); k++ {
			c, w := t.at(s, j)
			if c&classNumber == 0 {
				break
			}
			j += w
		}
		return j
	}
	return t.punctOrSpace(s, i, "\r\n/")
}

// punctOrSpace matches the alternatives the two patterns share, at s[i] where no word or number starts:
// " ?[^\s\p{L}\p{N}]+" followed by any of the bytes of trail ("[\r\n/]*" in o200k_base, "[\r\n]*" in
// cl100k_base), else the whitespace alternatives. Without the space the run would have to start at the
// space, which is \s.
func (t *classTable) punctOrSpace(s string, i int, trail string) int {
	b0 := s[i]
	j := i
	if b0 == ' ' {
		j++
	}
	if j < len(s) {
		if c, _ := t.at(s, j); c&(classSpace|classLetter|classNumber) == 0 {
			for j < len(s) {
				c, w := t.at(s, j)
				if c&(classSpace|classLetter|classNumber) != 0 {
					break
				}
				j += w
			}
			for j < len(s) && strings.IndexByte(trail, s[j]) >= 0 {
				j++
			}
			return j
		}
	}
	// Only whitespace is left: every other rune starts one of the alternatives above.
	end, lastNewline := i, -1
	for end < len(s) {
		c, w := t.at(s, end)
		if c&classSpace == 0 {
			break
		}
		if s[end] == '\r' || s[end] == '\n' {
			lastNewline = end
		}
		end += w
	}
	if lastNewline >= 0 { // \s*[\r\n]+: \s* gives back up to the last line break.
		return lastNewline + 1
	}
	if end == len(s) { // \s+(?!\S) at the end of the text
		return end
	}
	// \s+(?!\S) gives back the last space so the next piece can prefix the word that follows; a single
	// space cannot, and falls through to \s+.
	if _, w := utf8.DecodeLastRuneInString(s[i:end]); end-w > i {
		return end - w
	}
	return end
}

// lowerWord matches [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+ and
// the optional contraction at s[i], returning its end or -1.
func (t *classTable) lowerWord(s string, i, w0 int, prefix bool) int {
	if prefix {
		if j := t.lowerWordFrom(s, i+w0); j >= 0 {
			return j
		}
	}
	return t.lowerWordFrom(s, i)
}

func (t *classTable) lowerWordFrom(s string, start int) int {
	// The upper run is greedy and gives back one rune at a time until the lower run can start.
	k := t.run(s, start, classUpper)
	for {
		if k < len(s) {
			if c, w := t.at(s, k); c&classLower != 0 {
				return contraction(s, t.run(s, k+w, classLower))
			}
		}
		if k == start {
			return -1
		}
		_, w := utf8.DecodeLastRuneInString(s[start:k])
		k -= w
	}
}

// upperWord matches [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]* and the
// optional contraction at s[i], returning its end or -1.
func (t *classTable) upperWord(s string, i, w0 int, prefix bool) int {
	if prefix {
		if k := t.run(s, i+w0, classUpper); k > i+w0 {
			return contraction(s, t.run(s, k, classLower))
		}
	}
	if k := t.run(s, i, classUpper); k > i {
		return contraction(s, t.run(s, k, classLower))
	}
	return -1
}

// contraction extends a word ending at j by (?i:'s|'t|'re|'ve|'m|'ll|'d). regexp2 matches a
// case-insensitive literal when unicode.ToLower of the input rune equals the lower-cased pattern rune.
func contraction(s string, j int) int {
	if j+1 >= len(s) || s[j] != '\'' {
		return j
	}
	r1, w1 := utf8.DecodeRuneInString(s[j+1:])
	switch unicode.ToLower(r1) {
	case 's', 't', 'm', 'd':
		return j + 1 + w1
	case 'r', 'v':
		if k := j + 1 + w1; k < len(s) {
			if r2, w2 := utf8.DecodeRuneInString(s[k:]); unicode.ToLower(r2) == 'e' {
				return k + w2
			}
		}
	case 'l':
		if k := j + 1 + w1; k < len(s) {
			if r2, w2 := utf8.DecodeRuneInString(s[k:]); unicode.ToLower(r2) == 'l' {
				return k + w2
			}
		}
	}
	return j
}

// asciiWord is the fast path of the two word alternatives for ASCII text: an optional ASCII prefix rune,
// then ASCII upper-case and lower-case runs. It returns the end of the word at s[i], or 0 when the
// general matcher must decide (no ASCII letter there, or a non-ASCII rune that might extend a run).
func asciiWord(s string, i int) int {
	start := i
	switch b := s[i]; {
	case isASCIILetter(b):
	case b < utf8.RuneSelf && b != '\r' && b != '\n' && !('0' <= b && b <= '9'):
		start++ // [^\r\n\p{L}\p{N}]: an ASCII rune that is no letter, digit or line break
	default:
		return 0
	}
	u := start
	for u < len(s) && 'A' <= s[u] && s[u] <= 'Z' {
		u++
	}
	l := u
	for l < len(s) && 'a' <= s[l] && s[l] <= 'z' {
		l++
	}
	if l < len(s) && s[l] >= utf8.RuneSelf {
		return 0
	}
	if l > u { // [\p{Lu}...]*[\p{Ll}...]+: the upper run needs no giving back, ASCII letters are one or other
		return contraction(s, l)
	}
	if u > start { // only upper case: the first alternative fails, the second matches
		return contraction(s, u)
	}
	return 0
}

func isASCIILetter(b byte) bool { return 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' }

// nextPieceCL100k is nextPiece for cl100k_base, whose pattern (tiktoken's openai_public.py, tiktoken-go's
// encoding.go) is the ordered alternation
//
//	(?i:'s|'t|'re|'ve|'m|'ll|'d)
//	[^\r\n\p{L}\p{N}]?\p{L}+
//	\p{N}{1,3}
//	 ?[^\s\p{L}\p{N}]+[\r\n]*
//	\s*[\r\n]+
//	\s+(?!\S)
//	\s+
//
// matched with regexp2's semantics, as nextPiece does. Unlike o200k_base, a contraction is a piece of its
// own, a word is any run of letters whatever their case (marks, \p{M}, are not letters here), and a run of
// punctuation does not take a trailing "/".
func (t *classTable) nextPieceCL100k(s string, i int) int {
	if s[i] == '\'' {
		if j := contraction(s, i); j > i {
			return j
		}
	}
	c0, w0 := t.at(s, i)
	b0 := s[i]
	if c0&classLetter != 0 {
		return t.run(s, i, classLetter)
	}
	if c0&classNumber == 0 && b0 != '\r' && b0 != '\n' { // [^\r\n\p{L}\p{N}] before a word
		if j := t.run(s, i+w0, classLetter); j > i+w0 {
			return j
		}
	}
	if c0&classNumber != 0 { // \p{N}{1,3}
		j := i + w0
		for k := 1; k < 3 && j < len(s); k++ {
			c, w := t.at(s, j)
			if c&classNumber == 0 {
				break
			}
			j += w
		}
		return j
	}
	return t.punctOrSpace(s, i, "\r\n")
}
