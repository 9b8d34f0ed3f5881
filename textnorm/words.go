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
//   - a possessive "'s" and a contracted verb ("'d", "'ll", "'m", "'re", "'ve") are dropped ("we'd" is "we") and
//     other apostrophes inside a word are removed ("don't" is "dont");
//   - anything else (punctuation, '$', '%', hyphens between letters) separates words.
//
// Stopwords are not removed and words are not stemmed; see Terms for that. Words allocates one string per word;
// AppendWords does not.
func Words(s string, yield func(w string) bool) {
	AppendWords(nil, s, func(w []byte) bool { return yield(string(w)) })
}

// AppendWords is Words without allocation: each word is written into buf (grown as needed) and passed to yield
// as a slice that is valid only until yield returns. Look words up in maps with m[string(w)], which does not
// allocate. It returns the buffer for reuse.
func AppendWords(buf []byte, s string, yield func(w []byte) bool) []byte {
	i := 0
	for i < len(s) {
		// ASCII letters and digits, nearly all of the text, take the table lookups; the rest decodes runes.
		if c := s[i]; c < utf8.RuneSelf && !asciiWord[c] {
			i++
			continue
		}
		r, n := decode(s, i)
		if !isWordRune(r) {
			i += n
			continue
		}
		start := i
		prev := r
		i += n
		end := -1 // set when a possessive ends the word before i
		for i < len(s) {
			if c := s[i]; c < utf8.RuneSelf && asciiWord[c] {
				prev = rune(c)
				i++
				continue
			}
			r, n = decode(s, i)
			if isWordRune(r) {
				prev = r
				i += n
				continue
			}
			var next rune
			nn := 0
			if i+n < len(s) {
				next, nn = decode(s, i+n)
			}
			joined := false
			switch r {
			case '.', '-', '/':
				joined = isDigit(prev) && isDigit(next)
			case ',':
				// A thousands separator: exactly three digits follow.
				joined = isDigit(prev) && thousands(s[i+1:])
			case '&':
				joined = unicode.IsLetter(prev) && unicode.IsLetter(next)
			case '\'', '\u2019':
				if unicode.IsLetter(prev) && unicode.IsLetter(next) {
					if c := clitic(s[i+n:]); c > 0 {
						// A possessive or a contracted verb: the word ends before the apostrophe and the
						// ending is skipped.
						end = i
						i += n + c
						break
					}
					joined = true
				}
			}
			if !joined || end >= 0 {
				break
			}
			prev = next
			i += n + nn
		}
		if end < 0 {
			end = i
		}
		buf = normalise(buf[:0], s[start:end])
		if len(buf) > 0 && !yield(buf) {
			return buf
		}
	}
	return buf
}

// decimalDigit is the ASCII digit of r when r is a decimal digit of another script: Persian's "۵۰۰", Arabic's
// "٥٠٠" and Devanagari's "५००" are "500" ("Nd" runes come in runs of ten, zero to nine; the fullwidth and
// mathematical digits NFKC already folds are among them).
func decimalDigit(r rune) (byte, bool) {
	if r < 0x660 || !unicode.Is(unicode.Nd, r) {
		return 0, false
	}
	lo := rune(-1) // the first rune of the run of digits r is in
	for _, rg := range unicode.Nd.R16 {
		if rune(rg.Lo) <= r && r <= rune(rg.Hi) {
			lo = rune(rg.Lo)
		}
	}
	for _, rg := range unicode.Nd.R32 {
		if rune(rg.Lo) <= r && r <= rune(rg.Hi) {
			lo = rune(rg.Lo)
		}
	}
	if lo < 0 {
		return 0, false
	}
	return '0' + byte((r-lo)%10), true
}

// normalise appends w lowercased, its decimal digits as ASCII's, without apostrophes and thousands separators,
// with decimal trailing zeros folded.
func normalise(buf []byte, w string) []byte {
	dots, dot, dash := 0, 0, false
	for i := 0; i < len(w); i++ {
		c := w[i]
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRuneInString(w[i:])
			i += n - 1
			if r == '\u2019' {
				continue
			}
			if d, ok := decimalDigit(r); ok {
				buf = append(buf, d)
				continue
			}
			buf = utf8.AppendRune(buf, unicode.ToLower(r))
			continue
		}
		switch {
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		case c == '\'' || c == ',':
			continue
		case c == '.':
			dots++
			dot = len(buf)
		case c == '-' || c == '/':
			dash = true
		}
		buf = append(buf, c)
	}
	if dots == 1 && !dash {
		for len(buf) > dot+1 && buf[len(buf)-1] == '0' {
			buf = buf[:len(buf)-1]
		}
		if len(buf) == dot+1 {
			buf = buf[:dot]
		}
	}
	return buf
}

func thousands(s string) bool {
	if len(s) < 3 || !isDigit(rune(s[0])) || !isDigit(rune(s[1])) || !isDigit(rune(s[2])) {
		return false
	}
	return len(s) == 3 || !isDigit(rune(s[3]))
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

// clitic is the length of the ending that s, the text after an apostrophe, starts with when it ends a word
// there: a possessive "s" or a contracted verb ("d", "ll", "m", "re", "ve" of "we'd", "they'll", "i'm",
// "you're", "i've"), in either case; else 0. Without them, "we'd" was the word "wed" and "i'd" the word "id".
func clitic(s string) int {
	n := 0
	for n < len(s) && n < 3 && ('a' <= s[n]|0x20 && s[n]|0x20 <= 'z') {
		n++
	}
	if n < len(s) && isWordRune(peek(s, n)) {
		return 0
	}
	switch strings.ToLower(s[:n]) {
	case "s", "d", "ll", "m", "re", "ve":
		return n
	}
	return 0
}

func peek(s string, i int) rune {
	r, _ := decode(s, i)
	return r
}

// asciiWord marks the ASCII letters and digits: the ASCII runes isWordRune accepts.
var asciiWord = [utf8.RuneSelf]bool{
	'0': true, '1': true, '2': true, '3': true, '4': true, '5': true, '6': true, '7': true, '8': true, '9': true,
	'A': true, 'B': true, 'C': true, 'D': true, 'E': true, 'F': true, 'G': true, 'H': true, 'I': true, 'J': true,
	'K': true, 'L': true, 'M': true, 'N': true, 'O': true, 'P': true, 'Q': true, 'R': true, 'S': true, 'T': true,
	'U': true, 'V': true, 'W': true, 'X': true, 'Y': true, 'Z': true,
	'a': true, 'b': true, 'c': true, 'd': true, 'e': true, 'f': true, 'g': true, 'h': true, 'i': true, 'j': true,
	'k': true, 'l': true, 'm': true, 'n': true, 'o': true, 'p': true, 'q': true, 'r': true, 's': true, 't': true,
	'u': true, 'v': true, 'w': true, 'x': true, 'y': true, 'z': true,
}

func isWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)
}

func isDigit(r rune) bool { return '0' <= r && r <= '9' }

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
	AppendWords(nil, s, func(w []byte) bool {
		if IsStopword(string(w)) {
			return true
		}
		return yield(Stem(string(w)))
	})
}

// Compounds calls yield with each code name of s, lowercase: a run of letters, digits and underscores joined by
// dots or underscores, with a letter or underscore on both sides of at least one joint ("typing.TYPE_CHECKING",
// "max_connections", "dict.fromkeys"), and each shorter name it ends with that still has a joint
// ("os.path.join" gives "os.path.join" and "path.join"). Words keeps such a name's parts apart ("typing",
// "type", "checking"); these are the name whole.
func Compounds(s string, yield func(name string) bool) {
	// Only a dot or an underscore between two name characters can join a name: the scan jumps from one to the
	// next (most dots end sentences), then widens the name around it.
	nextDot, nextUnder := -1, -1
	for i := 0; i < len(s); {
		if nextDot < i {
			nextDot = indexFrom(s, '.', i)
		}
		if nextUnder < i {
			nextUnder = indexFrom(s, '_', i)
		}
		j := min(nextDot, nextUnder)
		if j == len(s) {
			return
		}
		if j == 0 || j+1 == len(s) || !namePart[s[j-1]] || !namePart[s[j+1]] {
			i = j + 1
			continue
		}
		start, end := j, j+1
		for start > 0 && (namePart[s[start-1]] || s[start-1] == '.' && start > 1 && namePart[s[start-2]]) {
			start--
		}
		for end < len(s) && (namePart[s[end]] || s[end] == '.' && end+1 < len(s) && namePart[s[end+1]]) {
			end++
		}
		i = end
		// A URL's host, path and anchor are not names the text gives.
		if start > 0 && strings.IndexByte("/#@:", s[start-1]) >= 0 || end < len(s) && s[end] == '/' {
			continue
		}
		name := strings.Trim(s[start:end], "._")
		if !isCompound(name) {
			continue
		}
		name = strings.ToLower(name)
		for {
			if !yield(name) {
				return
			}
			k := strings.IndexAny(name, "._")
			if k < 0 {
				break
			}
			if name = strings.TrimLeft(name[k+1:], "._"); !isCompound(name) {
				break
			}
		}
	}
}

// indexFrom is the index of the first c in s at or after i, or len(s).
func indexFrom(s string, c byte, i int) int {
	if k := strings.IndexByte(s[i:], c); k >= 0 {
		return i + k
	}
	return len(s)
}

// namePart marks the bytes of a code name's parts: ASCII letters, digits and underscores.
var namePart = func() (t [256]bool) {
	for c := range utf8.RuneSelf {
		t[c] = asciiWord[c] || c == '_'
	}
	return t
}()

// isCompound reports whether name joins two parts with a dot or an underscore that has a letter or an underscore
// on one side at least: "3.11" and "2016_17" are numbers.
func isCompound(name string) bool {
	for j := 1; j < len(name)-1; j++ {
		if c := name[j]; c == '.' || c == '_' {
			if !isDigit(rune(name[j-1])) || !isDigit(rune(name[j+1])) {
				return true
			}
		}
	}
	return false
}
