package textnorm

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Words calls yield with each word of s in order until yield returns false. A word is a lowercase run of Unicode
// letters and digits, extended so that the forms people search for stay whole:
//
//   - digits joined by '.', ',', '-' or '/' stay one word ("3.70", "510-642-1483", "2016-17", "8/24"); thousands
//     separators are removed ("$13,510" and "13510" are both "13510") and decimal trailing zeros are folded
//     ("3.70" is "3.7", "4.0" is "4");
//   - letters joined by '&' stay one word ("l&s", "at&t");
//   - a possessive "'s" is dropped and other apostrophes inside a word are removed ("don't" is "dont");
//   - anything else (punctuation, '$', '%', hyphens between letters) separates words.
//
// Stopwords are not removed and words are not stemmed; see Terms for that.
func Words(s string, yield func(w string) bool) {
	i := 0
	for i < len(s) {
		r, n := decode(s, i)
		if !isWordRune(r) {
			i += n
			continue
		}
		start := i
		var b strings.Builder // used only when the word needs rewriting
		rewrite := false
		prev := r
		i += n
		for i < len(s) {
			r, n = decode(s, i)
			if isWordRune(r) {
				prev = r
				i += n
				continue
			}
			next, nn := decode(s, i+n)
			if i+n >= len(s) {
				next, nn = 0, 0
			}
			joined := false
			switch r {
			case '.', '-', '/':
				joined = isDigit(prev) && isDigit(next)
				if joined && r == '.' {
					rewrite = true
				}
			case ',':
				// A thousands separator: exactly three digits follow.
				joined = isDigit(prev) && thousands(s[i+1:])
				rewrite = rewrite || joined
			case '&':
				joined = unicode.IsLetter(prev) && unicode.IsLetter(next)
			case '\'', '\u2019':
				if unicode.IsLetter(prev) && unicode.IsLetter(next) {
					after := i + n + nn
					if (next == 's' || next == 'S') && (after >= len(s) || !isWordRune(peek(s, after))) {
						// Possessive: end the word before the apostrophe and skip the "s".
						w := s[start:i]
						i = after
						if !emit(w, rewrite, &b, yield) {
							return
						}
						goto next
					}
					joined = true
					rewrite = true
				}
			}
			if !joined {
				break
			}
			prev = next
			i += n + nn
		}
		if !emit(s[start:i], rewrite, &b, yield) {
			return
		}
	next:
	}
}

func emit(w string, rewrite bool, b *strings.Builder, yield func(string) bool) bool {
	if rewrite {
		w = normaliseWord(w, b)
	}
	if hasUpper(w) {
		w = strings.ToLower(w)
	}
	if w == "" {
		return true
	}
	return yield(w)
}

// normaliseWord drops apostrophes and thousands separators and folds decimal trailing zeros.
func normaliseWord(w string, b *strings.Builder) string {
	b.Reset()
	dot := -1
	for i := 0; i < len(w); i++ {
		switch c := w[i]; c {
		case '\'':
		case ',':
		case '.':
			if dot >= 0 { // a second dot: "1.2.3" keeps every dot.
				dot = -2
			} else if dot == -1 {
				dot = b.Len()
			}
			b.WriteByte(c)
		default:
			if c == 0xE2 && strings.HasPrefix(w[i:], "\u2019") {
				i += len("\u2019") - 1
				continue
			}
			b.WriteByte(c)
		}
	}
	out := b.String()
	if dot >= 0 && !strings.ContainsAny(out[dot+1:], "-/") {
		out = strings.TrimRight(out, "0")
		out = strings.TrimSuffix(out, ".")
		if out == "" {
			out = "0"
		}
	}
	return out
}

func decode(s string, i int) (rune, int) {
	if i >= len(s) {
		return 0, 1
	}
	if c := s[i]; c < utf8.RuneSelf {
		return rune(c), 1
	}
	return utf8.DecodeRuneInString(s[i:])
}

func thousands(s string) bool {
	if len(s) < 3 || !isDigit(rune(s[0])) || !isDigit(rune(s[1])) || !isDigit(rune(s[2])) {
		return false
	}
	return len(s) == 3 || !isDigit(rune(s[3]))
}

func peek(s string, i int) rune {
	r, _ := decode(s, i)
	return r
}

func isWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r)
}

func isDigit(r rune) bool { return '0' <= r && r <= '9' }

func hasUpper(w string) bool {
	for i := 0; i < len(w); i++ {
		c := w[i]
		if 'A' <= c && c <= 'Z' || c >= utf8.RuneSelf {
			return true
		}
	}
	return false
}

// IsNumeric reports whether w (a word from Words) is made of digits and number punctuation only.
func IsNumeric(w string) bool {
	if w == "" {
		return false
	}
	for i := 0; i < len(w); i++ {
		switch c := w[i]; {
		case '0' <= c && c <= '9', c == '.', c == '-', c == '/':
		default:
			return false
		}
	}
	return true
}

// Terms calls yield with the index terms of s: its Words without English stopwords, each stemmed with Stem.
func Terms(s string, yield func(term string) bool) {
	Words(s, func(w string) bool {
		if IsStopword(w) {
			return true
		}
		return yield(Stem(w))
	})
}
