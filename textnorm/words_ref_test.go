package textnorm

import (
	"strings"
	"testing"
	"unicode"

	"github.com/google/go-cmp/cmp"
)

// appendWordsReference is AppendWords as first written, rune by rune without the ASCII fast path; the fast path
// must split every input exactly as it does.
func appendWordsReference(buf []byte, s string, yield func(w []byte) bool) []byte {
	i := 0
	for i < len(s) {
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

func collect(appendWords func([]byte, string, func([]byte) bool) []byte, s string) []string {
	var out []string
	appendWords(nil, s, func(w []byte) bool {
		out = append(out, string(w))
		return true
	})
	return out
}

func FuzzAppendWordsMatchesReference(f *testing.F) {
	for _, s := range []string{"Hello, World!", "$13,510", "510-642-1483", "L&S", "student's", "3.70", "1.2.3",
		"don’t", "0.00", "a'", "'s", "Ünïcödé 2016-17 x\xffy", "AT&T's 8/24 ECON 1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if diff := cmp.Diff(collect(appendWordsReference, s), collect(AppendWords, s)); diff != "" {
			t.Errorf("AppendWords(%q) (-reference +got):\n%s", s, diff)
		}
	})
}

func BenchmarkAppendWords(b *testing.B) {
	text := strings.Repeat("## Major Requirements\n\nStudents must complete 42 upper-division units, including the L&S breadth requirements, with a GPA of 3.70; call 510-642-1483. ", 20)
	for _, bc := range []struct {
		name string
		fn   func([]byte, string, func([]byte) bool) []byte
	}{{"fast", AppendWords}, {"reference", appendWordsReference}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(text)))
			var buf []byte
			for b.Loop() {
				buf = bc.fn(buf, text, func([]byte) bool { return true })
			}
		})
	}
}
