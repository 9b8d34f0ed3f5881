package tokenizer

import (
	"fmt"
	"html"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
	"github.com/google/go-cmp/cmp"
	"github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"
	"github.com/ragproxy/ragproxy/internal/corpustest"
)

// The reference implementation: tiktoken-go with the same embedded ranks.
var loadReference = sync.OnceValues(func() (*tiktoken.Tiktoken, error) {
	tiktoken.SetBpeLoader(tiktoken_loader.NewOfflineLoader())
	return tiktoken.GetEncoding(EncodingName)
})

func reference(tb testing.TB) *tiktoken.Tiktoken {
	tb.Helper()
	enc, err := loadReference()
	if err != nil {
		tb.Fatalf("load tiktoken-go: %v", err)
	}
	return enc
}

// o200kPattern is the pre-tokenisation pattern exactly as tiktoken-go compiles it (encoding.go).
var o200kPattern = sync.OnceValue(func() *regexp2.Regexp {
	return regexp2.MustCompile(strings.Join([]string{
		`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?`,
		`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?`,
		`\p{N}{1,3}`,
		` ?[^\s\p{L}\p{N}]+[\r\n/]*`,
		`\s*[\r\n]+`,
		`\s+(?!\S)`,
		`\s+`,
	}, "|"), regexp2.None)
})

// referencePieces splits s with regexp2, as tiktoken-go does.
func referencePieces(tb testing.TB, s string) []string {
	tb.Helper()
	runes := []rune(s)
	var pieces []string
	m, err := o200kPattern().FindRunesMatch(runes)
	for ; m != nil && err == nil; m, err = o200kPattern().FindNextMatch(m) {
		pieces = append(pieces, string(runes[m.Index:m.Index+m.Length]))
	}
	if err != nil {
		tb.Fatalf("regexp2: %v", err)
	}
	return pieces
}

func ourPieces(tok *Tokenizer, s string) []string {
	s = validUTF8(s)
	var pieces []string
	for i := 0; i < len(s); {
		j := tok.enc.next(s, i)
		pieces = append(pieces, s[i:j])
		i = j
	}
	return pieces
}

// differentialInputs covers every alternative of the pattern and the edges between them.
var differentialInputs = []string{
	"hello world",
	"Hello, World! HELLO WORLD. hELLO wORLD",
	"The quick brown fox jumps over the lazy dog.",
	"don't I'm you're we've they'll she'd it's",
	"DON'T I'M YOU'RE WE'VE THEY'LL SHE'D IT'S",
	"Don'T i'M yoU'Re we'Ve they'lL SHE'd iT'S 'S 's' ''s x''ll",
	"foo's bar'ss baz're qux'reed 'll' x'L'L",
	"1 12 123 1234 12345 123456 1234567 3.14159 1,000,000 2016-17 ²³ ½ Ⅻ ٣٤٥",
	"東京大学の図書館 北京 서울 한국어 日本語のテキスト",
	"🚀🔥 emoji 👩‍👩‍👧‍👦 family 🇺🇸 flag ✨✨✨",
	"e\u0301 cafe\u0301 \u0301 a\u0301\u0302\u0303 \u0301A \u0301AB \u0301\u0301x Ä\u0308",
	"\u0301", "\u0301\u0301", " \u0301", "x\u0301", "A\u0301", "AB\u0301", "ǅungla ǅ ǈ Ǌ",
	"ʰʲ ˈstress ʼapostrophe ᵃᵇ", "ª º", "ꟸꟹ",
	"line one\r\nline two\rline three\n\nline four\r\n\r\n",
	"\n", "\r\n", "\r", " \n", "\n ", "  \n  \n  x", "a\n\n\nb", "\t\n\tx",
	"trailing spaces   ", "   leading", " ", "  ", "   x", "\t\tx", "a  b   c    d",
	"tab\there\v\f\u0085\u00a0\u2003\u3000nbsp\u00a0word", "\u00a0x", "\u3000東京",
	strings.Repeat("a", 16000),
	strings.Repeat("A", 5000),
	strings.Repeat("-", 3000),
	strings.Repeat(" ", 4000) + "x",
	strings.Repeat("ab", 4000),
	strings.Repeat("=-", 2000),
	strings.Repeat("東", 3000),
	strings.Repeat("9", 1000),
	strings.Repeat("\n", 500),
	strings.Repeat(" \n", 500),
	"http://www.berkeley.edu/path/to/page?x=1&y=2#frag https://guide.berkeley.edu/",
	"| Course | Units |\n|---|---|\n| MATH 1A | 4 |\n| CS 61A | 4 |\n",
	"# Heading\n\n* item one\n* item two\n\n> quote\n\n```go\nfunc main() {}\n```\n",
	"a/b//c///\n ./.. ?!\r\n/// \"quoted\" (paren) [bracket] {brace}",
	"<|endoftext|> <|endofprompt|>",
	"\xff\xfe broken", "a\xffb", "\xe6\x9d", "\xe6\x9d\xb1\xe6", "ok \xc0\x80 overlong", "\xed\xa0\x80 surrogate",
	"\x00\x01\x02 controls \x7f",
	"Ελληνικά ΕΛΛΗΝΙΚΆ Русский РУССКИЙ العربية עברית हिन्दी ไทย",
	"İstanbul ıi ß ẞ ﬁ Kelvin\u212a \u212aelvin x'\u212a x'\u017f x'İ",
	"\U0001D400\U0001D41A \U00010400\U00010428 \U00020000\U00020001",
}

func TestEncodeMatchesTiktoken(t *testing.T) {
	tok := newTok(t)
	ref := reference(t)
	for _, s := range differentialInputs {
		name := s
		if len(name) > 40 {
			name = name[:40]
		}
		t.Run(name, func(t *testing.T) {
			checkAgainstReference(t, tok, ref, s)
		})
	}
}

// TestPiecesMatchRegexp2 compares the pre-tokeniser itself with regexp2, which pins down a wrong split
// even where it happens to give the same tokens.
func TestPiecesMatchRegexp2(t *testing.T) {
	tok := newTok(t)
	for _, s := range differentialInputs {
		if diff := cmp.Diff(referencePieces(t, s), ourPieces(tok, s)); diff != "" {
			t.Errorf("pieces of %q (-regexp2 +ours):\n%s", s, diff)
		}
	}
}

// TestSingleRunes checks every Basic Multilingual Plane rune, and a sample of the rest, alone and in the
// contexts where its classes matter: after a space, between letters, before a lower-case word, after an
// apostrophe and as a contraction's letter.
func TestSingleRunes(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	tok := newTok(t)
	var sb strings.Builder
	flush := func() {
		s := sb.String()
		sb.Reset()
		if diff := cmp.Diff(referencePieces(t, s), ourPieces(tok, s)); diff != "" {
			t.Fatalf("pieces (-regexp2 +ours):\n%s", diff)
		}
	}
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if r >= 0x10000 && r%7 != 0 || !utf8.ValidRune(r) {
			continue
		}
		c := string(r)
		sb.WriteString(c + " " + c + "x" + c + "y A" + c + "b " + c + "AB\n" + c + c + "q'" + c + "d'" + c + "e\t" + c + "\r\n" + c + "1")
		if sb.Len() > 1<<16 {
			flush()
		}
	}
	flush()
}

// TestApostropheOnlyMatchesItself backs contraction's byte test for the apostrophe: regexp2 compares
// unicode.ToLower of the input, and no other rune lowers to "'".
func TestApostropheOnlyMatchesItself(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if r != '\'' && unicode.ToLower(r) == '\'' {
			t.Errorf("unicode.ToLower(%U) = '", r)
		}
	}
}

func checkAgainstReference(t *testing.T, tok *Tokenizer, ref *tiktoken.Tiktoken, s string) {
	t.Helper()
	want := ref.EncodeOrdinary(s)
	if len(want) == 0 {
		want = nil
	}
	got := tok.Encode(s)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("Encode(%q) (-tiktoken-go +ours):\n%s", s, diff)
	}
	if n := tok.Count(s); n != len(want) {
		t.Fatalf("Count(%q) = %d, tiktoken-go has %d tokens", s, n, len(want))
	}
	if d, w := tok.Decode(got), ref.Decode(want); d != w {
		t.Fatalf("Decode(Encode(%q)) = %q, tiktoken-go gives %q", s, d, w)
	}
}

// The same pieces merge through the linear scan and the heap identically.
func TestMergeLinearEqualsHeap(t *testing.T) {
	tok := newTok(t)
	for _, s := range differentialInputs {
		for _, piece := range ourPieces(tok, s) {
			if len(piece) < 2 || len(piece) > linearMergeMax {
				continue
			}
			lin := tok.enc.mergeLinear(nil, piece)
			hp := tok.enc.mergeHeap(nil, piece)
			if diff := cmp.Diff(lin, hp); diff != "" {
				t.Errorf("merge %q (-linear +heap):\n%s", piece, diff)
			}
		}
	}
}

func FuzzEncodeMatchesTiktoken(f *testing.F) {
	tok := newTok(f)
	ref := reference(f)
	for _, s := range differentialInputs {
		if len(s) < 200 {
			f.Add(s)
		}
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 4096 { // regexp2 and tiktoken-go's merge are slow on long inputs
			s = s[:4096]
		}
		if diff := cmp.Diff(referencePieces(t, s), ourPieces(tok, s)); diff != "" {
			t.Fatalf("pieces of %q (-regexp2 +ours):\n%s", s, diff)
		}
		checkAgainstReference(t, tok, ref, s)
	})
}

var (
	reDrop   = regexp.MustCompile(`(?is)<(script|style|head)\b.*?</(script|style|head)>`)
	reTag    = regexp.MustCompile(`<[^>]*>`)
	reSpaces = regexp.MustCompile(`[ \t]+`)
)

// corpusPages returns the crudely de-tagged text of every page of the test corpus.
func corpusPages(tb testing.TB) []string {
	tb.Helper()
	dir := corpustest.Dir(tb)
	var pages []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".html") {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		text := reTag.ReplaceAllString(reDrop.ReplaceAllString(string(data), ""), " ")
		pages = append(pages, reSpaces.ReplaceAllString(html.UnescapeString(text), " "))
		return nil
	})
	if err != nil {
		tb.Fatalf("read corpus: %v", err)
	}
	if len(pages) == 0 {
		tb.Fatalf("no .html pages under %s", dir)
	}
	return pages
}

// TestCorpusMatchesTiktoken compares whole pages; tiktoken-go needs minutes for the largest ones, so
// -short compares the first 20 KB of each.
func TestCorpusMatchesTiktoken(t *testing.T) {
	pages := corpusPages(t)
	tok := newTok(t)
	ref := reference(t)
	for i, p := range pages {
		if testing.Short() && len(p) > 20_000 {
			p = p[:20_000]
		}
		want := ref.EncodeOrdinary(p)
		if got := tok.Encode(p); !cmp.Equal(want, got) {
			// Report the first differing piece rather than two huge token lists.
			for _, line := range strings.SplitAfter(p, "\n") {
				if w, g := ref.EncodeOrdinary(line), tok.Encode(line); !cmp.Equal(w, g) && len(w) > 0 {
					t.Fatalf("page %d: line %q (-tiktoken-go +ours):\n%s", i, line, cmp.Diff(w, g))
				}
			}
			t.Fatalf("page %d: tokens differ (%d tiktoken-go, %d ours)", i, len(want), len(got))
		}
	}
}

// The merged-piece cache stays within its cap however many distinct pieces go through it, and answers
// from it agree with fresh merges.
func TestPieceCacheBounded(t *testing.T) {
	tok := newTok(t)
	fresh := newTok(t)
	var sb strings.Builder
	for i := range cacheMaxEntries + cacheMaxEntries/2 {
		fmt.Fprintf(&sb, " zq%xjv", i*7919) // pieces like " zq1eefjv" are not tokens and need merging
		if sb.Len() > 1<<14 {
			tok.Count(sb.String())
			sb.Reset()
		}
	}
	if n := tok.cache.len(); n == 0 || n > cacheMaxEntries {
		t.Fatalf("cache holds %d pieces, want 1..%d", n, cacheMaxEntries)
	}
	probe := " zq0jv zq1eefjv zq3ddejv"
	if diff := cmp.Diff(fresh.Encode(probe), tok.Encode(probe)); diff != "" {
		t.Errorf("Encode from warm caches (-fresh +warm):\n%s", diff)
	}
}
